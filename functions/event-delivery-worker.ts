import { workQueueHandler } from '../shared/aws/batch.js';
import { cipher } from '../shared/aws/kms-cipher.js';
import { lambdaHandler, metricsMiddleware } from '../shared/core/telemetry.js';
import { handOffSlowTry } from '../shared/events/delivery-hand-off.js';
import { processDeliveryMessage } from '../shared/events/delivery-worker.js';
import { postWebhook, resolveHost } from '../shared/events/webhook-sender.js';
import { presentEvent } from '../shared/http/present.js';

const deps = { cipher, resolve: resolveHost, post: postWebhook, present: presentEvent, handOff: handOffSlowTry };

/** The delivery queue's consumer: one event's delivery to one endpoint per message (CONTRACT.md §14). */
export const handler = lambdaHandler(
  workQueueHandler((received, context) => processDeliveryMessage(deps, received, context)),
  metricsMiddleware(),
);
