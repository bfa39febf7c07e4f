/**
 * What the synthesized stack holds that the month's bill depends on whatever the traffic (alarms and
 * their metrics, keys, dashboards, route metrics, SQS event sources, schedules) and how it is set up
 * (batching, log levels, retention): counted on the templates of every stack of the app (nested
 * stacks included), so `bench:monthly` and test/cdk/monthly.test.ts read the same thing.
 */
import { type App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { DeployConfig } from '../lib/config.js';
import { consumers } from '../lib/routes.js';
import { METRICS_NAMESPACE } from '../shared/core/telemetry.js';
import type { TemplateCounts } from './monthly-model.js';

type Resource = { Type: string; Properties?: any };

const MINUTES: Record<string, number> = { minute: 1, minutes: 1, hour: 60, hours: 60, day: 1440, days: 1440 };
const MONTH_MINUTES = 30 * 24 * 60;

/** The metrics the alarms read: one each, or a metric-math alarm's every metric. */
const metricsOf = (alarms: [string, Resource][]) =>
  alarms.reduce(
    (sum, [, a]) => sum + (a.Properties.Metrics ? a.Properties.Metrics.filter((m: any) => m.MetricStat).length : 1),
    0,
  );

/** Each queue consumer's batching window and size, from its event source mapping. */
const batchingOf = (sqsMappings: [string, Resource][]) => {
  const batching: TemplateCounts['batching'] = {};
  for (const [, m] of sqsMappings) {
    const fnRef = JSON.stringify(m.Properties.FunctionName);
    const consumer = consumers.find((c) => fnRef.includes(`"${c.name}`));
    if (consumer)
      batching[consumer.name] = {
        windowSeconds: m.Properties.MaximumBatchingWindowInSeconds ?? 0,
        batchSize: m.Properties.BatchSize ?? 10,
      };
  }
  return batching;
};

export const templateCounts = (app: App, config: DeployConfig): TemplateCounts => {
  const stacks = app.node.findAll().filter((c): c is Stack => Stack.isStack(c));
  const resources: [string, Resource][] = stacks.flatMap((stack) =>
    Object.entries((Template.fromStack(stack).toJSON().Resources ?? {}) as Record<string, Resource>),
  );
  const of = (type: string) => resources.filter(([, r]) => r.Type === type);

  const alarms = of('AWS::CloudWatch::Alarm');
  const stages = of('AWS::ApiGatewayV2::Stage');
  const routeMetrics =
    6 *
    stages.reduce(
      (sum, [, s]) =>
        sum +
        Object.values(s.Properties.RouteSettings ?? {}).filter((r: any) => r.DetailedMetricsEnabled).length +
        (s.Properties.DefaultRouteSettings?.DetailedMetricsEnabled ? 1 : 0),
      0,
    );
  const dashboards = of('AWS::CloudWatch::Dashboard');
  const dashboardMetrics = dashboards.reduce(
    (sum, [, d]) => sum + JSON.stringify(d.Properties.DashboardBody).split(`[\\"${METRICS_NAMESPACE}\\"`).length - 1,
    0,
  );
  const mappings = of('AWS::Lambda::EventSourceMapping');
  const sqsMappings = mappings.filter(([, m]) => !JSON.stringify(m.Properties.EventSourceArn).includes('StreamArn'));
  const scheduledRuns = of('AWS::Events::Rule').reduce((sum, [, r]) => {
    const rate = /^rate\((\d+) (\w+)\)$/.exec(r.Properties.ScheduleExpression ?? '');
    return rate ? sum + MONTH_MINUTES / (Number(rate[1]) * MINUTES[rate[2]]) : sum;
  }, 0);
  const functions = of('AWS::Lambda::Function').filter(([, f]) => f.Properties.LoggingConfig?.LogGroup);
  const levels = new Set(functions.map(([, f]) => f.Properties.LoggingConfig.ApplicationLogLevel ?? 'INFO'));
  const systemLogs = functions.some(
    ([, f]) =>
      !['WARN'].includes(f.Properties.LoggingConfig.SystemLogLevel) || f.Properties.LoggingConfig.LogFormat !== 'JSON',
  );
  const [table] = of('AWS::DynamoDB::Table');

  return {
    alarms: alarms.length,
    alarmMetrics: metricsOf(alarms),
    routeMetrics,
    metricFilters: of('AWS::Logs::MetricFilter').length,
    dashboards: dashboards.length,
    dashboardMetrics,
    kmsKeys: of('AWS::KMS::Key').length,
    sqsEventSources: sqsMappings.length,
    scheduledRuns,
    pollIntervalMinutes: config.pollIntervalSeconds / 60,
    jobRetentionDays: config.jobRetentionDays,
    logRetentionDays: config.logRetentionDays,
    logLevel: levels.size === 1 ? [...levels][0] : 'INFO',
    memoryMb: config.memorySize,
    systemLogs,
    pointInTimeRecovery: Boolean(table?.[1].Properties.PointInTimeRecoverySpecification?.PointInTimeRecoveryEnabled),
    batching: batchingOf(sqsMappings),
  };
};
