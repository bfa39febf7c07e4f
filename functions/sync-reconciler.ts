import { lambdaHandler } from '../shared/core/lambda-handler.js';
import { metricsMiddleware } from '../shared/core/metrics.js';
import { reconcile } from '../shared/sync-jobs/reconciler.js';

/** Scheduled: a new message for every job stalled past its lease; dead after three without progress. */
export const handler = lambdaHandler(() => reconcile(), metricsMiddleware());
