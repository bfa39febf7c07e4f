import { workQueueHandler } from '../shared/aws/batch.js';
import { cipher } from '../shared/aws/kms-cipher.js';
import { lambdaHandler, metricsMiddleware } from '../shared/core/telemetry.js';
import { processFulfillmentMessage } from '../shared/order-flow/propagating-worker.js';
import { adapterFor } from '../shared/platforms/adapters.js';

const deps = { cipher, platforms: adapterFor };

/** The fulfillment queue's consumer: each failed message is reported on its own (ReportBatchItemFailures). */
export const handler = lambdaHandler(
  workQueueHandler((received, context) => processFulfillmentMessage(deps, received, context)),
  metricsMiddleware(),
);
