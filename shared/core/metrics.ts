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
