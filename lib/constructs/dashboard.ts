import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import {
  BUSINESS_METRICS,
  type BusinessMetric,
  METRICS_NAMESPACE,
  STATUS_CLASSES,
  type StatusClass,
} from '../../shared/core/telemetry.js';
import { HOLD_REASONS } from '../../shared/domain/routing.js';
import type { DeployConfig } from '../config.js';
import { SERVICE_NAME } from '../environment.js';

/**
 * The business metrics the functions emit (shared/core/telemetry.ts, as EMF log lines), as CloudWatch
 * metrics of this stage: the same namespace, name and dimensions, so a widget or alarm always
 * matches what is written.
 */
export const businessMetric = (
  config: Pick<DeployConfig, 'stage'>,
  name: BusinessMetric,
  options: { statistic?: string; period?: Duration; statusClass?: StatusClass; reason?: string; label?: string } = {},
) =>
  new cloudwatch.Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: {
      service: SERVICE_NAME,
      stage: config.stage,
      ...(options.statusClass ? { statusClass: options.statusClass } : {}),
      ...(options.reason ? { reason: options.reason } : {}),
    },
    statistic: options.statistic ?? 'Sum',
    period: options.period ?? Duration.minutes(5),
    label: options.label,
  });

type MetricOf = (name: BusinessMetric, options?: Parameters<typeof businessMetric>[2]) => cloudwatch.IMetric;
const graph = (title: string, left: cloudwatch.IMetric[], width = 8) =>
  new cloudwatch.GraphWidget({ title, left, width, height: 6, stacked: false });

/** The order pipeline's rows: orders, jobs and their latency; platform errors, retries and fulfillments. */
const pipelineRows = (m: MetricOf) => [
  [
    graph('Orders (per 5 minutes)', [
      m(BUSINESS_METRICS.ordersReceived),
      m(BUSINESS_METRICS.ordersRouted),
      m(BUSINESS_METRICS.ordersWithUnroutedItems),
    ]),
    graph('Sync jobs (per 5 minutes)', [
      m(BUSINESS_METRICS.jobsCreated),
      m(BUSINESS_METRICS.jobsCompleted),
      m(BUSINESS_METRICS.jobsDead),
      // Supplier service levels (CONTRACT.md §16): jobs found late, deadlines not set on the supplier.
      m(BUSINESS_METRICS.jobsLate),
      m(BUSINESS_METRICS.deadlineFailures),
    ]),
    graph('Webhook → completed (ms)', [
      m(BUSINESS_METRICS.webhookToCompletedLatency, { statistic: 'p50', label: 'p50' }),
      m(BUSINESS_METRICS.webhookToCompletedLatency, { statistic: 'p95', label: 'p95' }),
      m(BUSINESS_METRICS.webhookToCompletedLatency, { statistic: 'p99', label: 'p99' }),
    ]),
  ],
  [
    graph(
      'Platform errors by status class',
      STATUS_CLASSES.map((statusClass) => m(BUSINESS_METRICS.platformErrors, { statusClass, label: statusClass })),
    ),
    graph('429 deferrals, retried records, systemic errors, reconciler re-sends', [
      m(BUSINESS_METRICS.throttleDeferrals),
      m(BUSINESS_METRICS.queueRecordsFailed),
      m(BUSINESS_METRICS.systemicErrors),
      m(BUSINESS_METRICS.reconcilerResends),
    ]),
    graph('Fulfillments', [m(BUSINESS_METRICS.fulfillmentsPropagated), m(BUSINESS_METRICS.fulfillmentsDead)]),
  ],
];

/** The rows of what needs care: cancellations, polling, staying connected; held jobs. */
const careRows = (m: MetricOf) => [
  [
    graph('Cancellations (by the reseller, by a supplier, declined)', [
      m(BUSINESS_METRICS.jobsCancelled),
      m(BUSINESS_METRICS.jobsCancelledBySource),
      m(BUSINESS_METRICS.cancellationsDeclined),
    ]),
    // The runs are PollScheduler's own Invocations (its heartbeat alarm watches them): no metric of ours.
    graph('Polling (CONTRACT.md §10.7): stores polled, changes found', [
      m(BUSINESS_METRICS.storesPolled),
      m(BUSINESS_METRICS.pollChangesHandled),
    ]),
    graph('Polls failed, stores failing in a row', [
      m(BUSINESS_METRICS.pollsFailed),
      m(BUSINESS_METRICS.storesFailingToPoll),
    ]),
    graph('Staying connected (CONTRACT.md §12): subscriptions, disconnected stores, tokens, API versions', [
      m(BUSINESS_METRICS.subscriptionsRepaired),
      m(BUSINESS_METRICS.subscriptionsFailing),
      m(BUSINESS_METRICS.storesDisconnected),
      m(BUSINESS_METRICS.disconnectedStoreWork),
      m(BUSINESS_METRICS.tokensRefreshed),
      m(BUSINESS_METRICS.platformApiDeprecated),
    ]),
  ],
  [
    graph(
      'Jobs held by reason (CONTRACT.md §11)',
      HOLD_REASONS.map((reason) => m(BUSINESS_METRICS.jobsHeld, { reason, label: reason })),
    ),
    graph('Held jobs released, holds expired', [m(BUSINESS_METRICS.jobsReleased), m(BUSINESS_METRICS.holdsExpired)]),
    graph('Receipt → release of held jobs (ms)', [
      m(BUSINESS_METRICS.receiptToReleaseLatency, { statistic: 'p50', label: 'p50' }),
      m(BUSINESS_METRICS.receiptToReleaseLatency, { statistic: 'p95', label: 'p95' }),
    ]),
  ],
];

/** One dashboard of the service's business: orders, jobs, platform health, propagation, latency. */
export const addDashboard = (scope: Construct, config: DeployConfig) => {
  const m: MetricOf = (name, options) => businessMetric(config, name, options);
  const dashboard = new cloudwatch.Dashboard(scope, 'Dashboard', {
    dashboardName: Stack.of(scope).stackName,
    defaultInterval: Duration.hours(6),
  });
  for (const row of [...pipelineRows(m), ...careRows(m)]) dashboard.addWidgets(...row);
  return dashboard;
};
