import { processAppWebhookMessage } from '../shared/app-webhooks/worker.js';
import { workQueueHandler } from '../shared/aws/batch.js';
import { cipher } from '../shared/aws/kms-cipher.js';
import { lambdaHandler, metricsMiddleware } from '../shared/core/telemetry.js';

const deps = { cipher };

/** The app-webhook queue's consumer: the app webhooks handled durably, one kept delivery per message. */
export const handler = lambdaHandler(
  workQueueHandler((received) => processAppWebhookMessage(deps, received)),
  metricsMiddleware(),
);
