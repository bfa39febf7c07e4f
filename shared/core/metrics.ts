import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type middy from '@middy/core';
import { BUSINESS_METRICS, type BusinessMetric, METRICS_NAMESPACE, type StatusClass } from './metric-names.js';

/**
 * Business metrics in CloudWatch's embedded metric format (EMF): Powertools Metrics writes them as
 * JSON log lines, which CloudWatch turns into metrics, so emitting one costs no API call. Locally
 * the same lines are in the log. The instance is built on first use, when the function's environment
 * (service name, stage) is certainly set.
 */

let instance: Metrics | undefined;
const metrics = () =>
  (instance ??= new Metrics({
    namespace: METRICS_NAMESPACE,
    serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'reseller-routing',
    defaultDimensions: { stage: process.env.STAGE || 'local' },
  }));

export const countMetric = (name: BusinessMetric, value = 1) => {
  if (value > 0) metrics().addMetric(name, MetricUnit.Count, value);
};

export const latencyMetric = (name: BusinessMetric, milliseconds: number) => {
  metrics().addMetric(name, MetricUnit.Milliseconds, Math.max(0, milliseconds));
};

/** A failed platform call, on a line of its own: its status class is a dimension of that metric alone. */
export const countPlatformError = (statusClass: StatusClass) => {
  const single = metrics().singleMetric();
  single.addDimension('statusClass', statusClass);
  single.addMetric(BUSINESS_METRICS.platformErrors, MetricUnit.Count, 1);
};

/**
 * The names of errors that no retry mends (`SystemicErrors`): the AWS SDK's for a permission, a key, a
 * table or a queue the function cannot use, and the engine's for a bug. A platform's answer, a
 * throttled or timed-out AWS call, a lost condition: none of these (they are retried, or the record's own).
 */
const SYSTEMIC_ERRORS = new Set([
  'AccessDenied',
  'AccessDeniedException',
  'UnrecognizedClientException',
  'InvalidClientTokenId',
  'ExpiredTokenException',
  'DisabledException',
  'KMSInvalidStateException',
  'NotFoundException',
  'ResourceNotFoundException',
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
  'TypeError',
  'ReferenceError',
]);

export const isSystemicError = (error: unknown) => error instanceof Error && SYSTEMIC_ERRORS.has(error.name);

/** Counts a record's failure as `SystemicErrors` when its error is one no retry mends; says whether it was. */
export const countIfSystemic = (error: unknown) => {
  if (!isSystemicError(error)) return false;
  countMetric(BUSINESS_METRICS.systemicErrors);
  return true;
};

/** Jobs held for a reason (CONTRACT.md §11), on a line of its own: `reason` is a dimension of that metric alone. */
export const countHeld = (reason: string, jobs: number) => {
  if (jobs <= 0) return;
  const single = metrics().singleMetric();
  single.addDimension('reason', reason);
  single.addMetric(BUSINESS_METRICS.jobsHeld, MetricUnit.Count, jobs);
};

/** Writes what the invocation counted, once, at its end (a failed invocation's counts too). */
const flush = () => {
  if (instance?.hasStoredMetrics()) instance.publishStoredMetrics();
};

/**
 * Publishes each invocation's metrics when it ends. Powertools' own `logMetrics` middleware would
 * also warn on every invocation that counted nothing (a refused webhook): this one stays silent.
 */
export const metricsMiddleware = (): middy.MiddlewareObj<unknown, unknown> => ({ after: flush, onError: flush });
