import { sqsBatchHandler } from '../shared/aws/batch.js';
import { lambdaHandler, metricsMiddleware } from '../shared/core/telemetry.js';
import { processDeadFulfillmentMessage } from '../shared/order-flow/propagating-dead-letter.js';

/** A fulfillment message SQS gave up on: put back later while the reseller may recover, else `dead` on its job. */
export const handler = lambdaHandler(
  sqsBatchHandler((received) => processDeadFulfillmentMessage(received)),
  metricsMiddleware(),
);
