import { workQueueHandler } from '../shared/aws/batch.js';
import { cipher } from '../shared/aws/kms-cipher.js';
import { lambdaHandler, metricsMiddleware } from '../shared/core/telemetry.js';
import { processSyncMessage } from '../shared/order-flow/placing-worker.js';
import { adapterFor } from '../shared/platforms/adapters.js';

const deps = { cipher, platforms: adapterFor };

/** The sync queue's consumer: each failed message is reported on its own (ReportBatchItemFailures). */
export const handler = lambdaHandler(
  workQueueHandler((received, context) => processSyncMessage(deps, received, context)),
  metricsMiddleware(),
);
