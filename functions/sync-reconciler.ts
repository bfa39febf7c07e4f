import { cipher } from '../shared/aws/kms-cipher.js';
import { lambdaHandler, metricsMiddleware } from '../shared/core/telemetry.js';
import { reconcile } from '../shared/order-flow/placing-reconciler.js';
import { adapterFor } from '../shared/platforms/adapters.js';

// The supplier is asked for the order before a stalled job is made dead.
const deps = { cipher, platforms: adapterFor };

/**
 * Scheduled: a new message for every job stalled past its lease; it ends after three without progress.
 * The invocation's remaining time bounds the run: what it has no time for, the next run reads on from.
 */
export const handler = lambdaHandler(
  (_event: unknown, context) => reconcile(deps, undefined, { remainingMs: () => context.getRemainingTimeInMillis() }),
  metricsMiddleware(),
);
