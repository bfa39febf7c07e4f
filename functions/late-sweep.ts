import { lambdaHandler, metricsMiddleware } from '../shared/core/telemetry.js';
import { sweepLateJobs } from '../shared/order-flow/shipping-late-sweep.js';

/**
 * Scheduled, every 15 minutes (CONTRACT.md §16.2): the jobs due since the last run, late ones marked
 * once. Its clock is the scheduled event's `time` (EventBridge's), else the invocation's.
 */
export const handler = lambdaHandler(
  (event: { time?: string } | undefined, context) =>
    sweepLateJobs(event?.time && !Number.isNaN(Date.parse(event.time)) ? new Date(event.time) : new Date(), () =>
      context.getRemainingTimeInMillis(),
    ),
  metricsMiddleware(),
);
