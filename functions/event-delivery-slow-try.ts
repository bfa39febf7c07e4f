import { cipher } from '../shared/aws/kms-cipher.js';
import { lambdaHandler, metricsMiddleware } from '../shared/core/telemetry.js';
import { processSlowTry } from '../shared/events/delivery-worker.js';
import { postWebhook, resolveHost } from '../shared/events/webhook-sender.js';
import { presentEvent } from '../shared/http/present.js';

const deps = { cipher, resolve: resolveHost, post: postWebhook, present: presentEvent };

/**
 * One try of an event's delivery to an endpoint not known to answer promptly, handed over by the
 * delivery worker (an asynchronous invoke; shared/events/README.md, "Integrators isolated").
 */
export const handler = lambdaHandler(
  (event: unknown, context) => processSlowTry(deps, event, context),
  metricsMiddleware(),
);
