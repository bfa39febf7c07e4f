/**
 * `npm run bench:monthly`: what a month of 1 million orders costs on AWS, line by line (Lambda, API
 * Gateway, DynamoDB, SQS, KMS, CloudWatch), computed rather than written down:
 *
 * - per order: the figures `bench:cost` measured, as docs/performance.md records them (its table
 *   under "`bench:cost` (…)"), times the orders of the month;
 * - per month: what the prod stack holds whatever the traffic, counted on its synthesized template
 *   (alarms and their metrics, keys, the dashboard, the custom metrics, the schedules, the SQS event
 *   sources' idle long polls);
 * - prices: bench/prices.ts.
 *
 *   npm run bench:monthly [-- --orders 1000000]
 *
 * What no benchmark measures yet is printed as such, never guessed: log bytes per order, item bytes
 * (table storage and backups), the scheduled functions' durations.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { loadConfig, stackName } from '../lib/config.js';
import { consumers, isScheduled, routes, scheduleMinutes } from '../lib/routes.js';
import { ResellerRoutingStack } from '../lib/stack.js';
import { BUSINESS_METRICS, STATUS_CLASSES } from '../shared/core/metric-names.js';
import { PROJECT_ROOT } from './bundling.js';
import { fixed, flags, positiveNumber, table } from './common.js';
import { PRICES } from './prices.js';

const args = flags({ orders: { type: 'string' } });
const orders = Math.round(positiveNumber('orders', args.orders, 1_000_000));
const MONTH_MINUTES = 30 * 24 * 60;

/** A price of bench/prices.ts (not its region or date). */
type Price = { [K in keyof typeof PRICES]: (typeof PRICES)[K] extends number ? K : never }[keyof typeof PRICES];
const unitPrice = (price: Price) => PRICES[price].toFixed(12).replace(/\.?0+$/, '');

/** The rows of bench:cost's table that docs/performance.md records, by the price each is billed at. */
const MEASURED_ROWS: Record<string, Price> = {
  'API Gateway HTTP API requests': 'httpApiRequest',
  'Lambda requests': 'lambdaRequest',
  'Lambda GB-seconds': 'lambdaGbSecond',
  'DynamoDB write request units': 'dynamoWru',
  'DynamoDB read request units': 'dynamoRru',
  'SQS requests': 'sqsRequest',
  'KMS requests': 'kmsRequest',
};

/** bench:cost's per-order counts, from the first table after its heading in docs/performance.md. */
const measuredPerOrder = () => {
  const doc = readFileSync(join(PROJECT_ROOT, 'docs/performance.md'), 'utf8').split('\n');
  const heading = doc.findIndex((line) => line.startsWith('### `bench:cost` ('));
  if (heading < 0) throw new Error('docs/performance.md has no "### `bench:cost` (" section');
  const perOrder = new Map<Price, number>();
  let source = '';
  for (const line of doc.slice(heading)) {
    if (perOrder.size && !line.startsWith('|')) break;
    const cells = line.split('|').map((cell) => cell.trim());
    const row = Object.keys(MEASURED_ROWS).find((label) => cells[1]?.startsWith(label));
    if (row) perOrder.set(MEASURED_ROWS[row], Number(cells[2]));
  }
  source = doc[heading].replace(/^### /, '');
  for (const [label, price] of Object.entries(MEASURED_ROWS))
    if (!Number.isFinite(perOrder.get(price))) throw new Error(`docs/performance.md records no "${label}" per order`);
  return { perOrder, source };
};

/** The prod stack as `cdk synth -c stage=prod` makes it (functions not bundled: only the template counts). */
const prodTemplate = () => {
  const context = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context ?? {};
  const app = new App({
    outdir: join(PROJECT_ROOT, 'cdk.out', 'bench-monthly'),
    context: { ...context, stage: 'prod', alarmEmail: 'ops@example.com', 'aws:cdk:bundling-stacks': [] },
  });
  const config = loadConfig(app);
  const stack = new ResellerRoutingStack(app, stackName(config), { config, projectRoot: PROJECT_ROOT });
  return { template: Template.fromStack(stack), config };
};

const { perOrder, source } = measuredPerOrder();
const { template, config } = prodTemplate();
const count = (type: string) => Object.keys(template.findResources(type)).length;

// Alarms: one metric each, or each metric of a metric-math alarm.
const alarmMetrics = Object.values(template.findResources('AWS::CloudWatch::Alarm')).reduce(
  (sum, alarm) =>
    sum + (alarm.Properties.Metrics ? alarm.Properties.Metrics.filter((m: any) => m.MetricStat).length : 1),
  0,
);
// Custom metrics: each business metric under service and stage (PlatformErrors once per status class),
// each metric filter's metric for each webhook route, and the six route metrics of each webhook route.
const webhookRoutes = routes.filter((r) => r.auth === 'webhook').length;
const [stage] = Object.values(template.findResources('AWS::ApiGatewayV2::Stage'));
const routeMetricRoutes = Object.values(stage.Properties.RouteSettings ?? {}).filter(
  (s: any) => s.DetailedMetricsEnabled,
).length;
const customMetrics =
  Object.keys(BUSINESS_METRICS).length -
  1 +
  STATUS_CLASSES.length +
  count('AWS::Logs::MetricFilter') * webhookRoutes +
  6 * routeMetricRoutes;
// Scheduled runs a month, and the SQS event sources' idle long polls: each of Lambda's pollers
// long-polls 20 s at a time whatever the traffic; Lambda keeps at least five per event source.
const scheduledRuns = consumers
  .filter((c) => isScheduled(c.trigger))
  .reduce((sum, c) => sum + MONTH_MINUTES / scheduleMinutes(c.trigger as never, config), 0);
const POLLERS_PER_EVENT_SOURCE = 5;
const idlePolls = count('AWS::Lambda::EventSourceMapping') * POLLERS_PER_EVENT_SOURCE * (MONTH_MINUTES * 3);

type Line = [service: string, item: string, quantity: number, price: Price];
const m = (price: Price) => perOrder.get(price)! * orders;
const lines: Line[] = [
  ['Lambda', 'requests (per order)', m('lambdaRequest'), 'lambdaRequest'],
  ['Lambda', `GB-seconds at ${config.memorySize} MB (per order)`, m('lambdaGbSecond'), 'lambdaGbSecond'],
  ['Lambda', 'scheduled runs (reconciler, poll scheduler): requests', scheduledRuns, 'lambdaRequest'],
  ['API Gateway', 'HTTP API requests (per order)', m('httpApiRequest'), 'httpApiRequest'],
  ['DynamoDB', 'write request units (per order)', m('dynamoWru'), 'dynamoWru'],
  ['DynamoDB', 'read request units (per order)', m('dynamoRru'), 'dynamoRru'],
  ['SQS', 'requests (per order)', m('sqsRequest'), 'sqsRequest'],
  ['SQS', `idle long polls (${count('AWS::Lambda::EventSourceMapping')} event sources)`, idlePolls, 'sqsRequest'],
  ['KMS', 'requests (per order)', m('kmsRequest'), 'kmsRequest'],
  ['KMS', 'customer managed keys', count('AWS::KMS::Key'), 'kmsKeyMonth'],
  ['CloudWatch', `alarm metrics (${count('AWS::CloudWatch::Alarm')} alarms)`, alarmMetrics, 'cloudwatchAlarmMetric'],
  ['CloudWatch', 'custom metrics (business, webhook 429/5xx, webhook routes)', customMetrics, 'cloudwatchCustomMetric'],
  ['CloudWatch', 'dashboards', count('AWS::CloudWatch::Dashboard'), 'cloudwatchDashboard'],
];
const total = lines.reduce((sum, [, , quantity, price]) => sum + quantity * PRICES[price], 0);

console.log(
  `bench:monthly — ${orders.toLocaleString('en-US')} single-supplier orders a month on ${stackName(config)}, ` +
    `${PRICES.region}, prices of bench/prices.ts as of ${PRICES.asOf}`,
);
console.log(`per-order figures: docs/performance.md, ${source}\n`);
console.log(
  table(
    ['service', 'item', 'a month', '$ per unit', '$ a month'],
    [
      ...lines.map(([service, item, quantity, price]) => [
        service,
        item,
        fixed(quantity, quantity < 100 ? 2 : 0),
        unitPrice(price),
        fixed(quantity * PRICES[price], 2),
      ]),
      ['total', '', '', '', fixed(total, 2)],
    ],
  ),
);
console.log(
  '\nNot measured by any benchmark yet, so not in the total: CloudWatch Logs ingestion and storage ' +
    '($0.50 per GB ingested; bytes logged per order), DynamoDB storage and point-in-time backups ' +
    `($0.25 and $0.20 per GB-month; bytes per order kept ${config.jobRetentionDays} days), the scheduled ` +
    "functions' durations, and data transfer out.",
);
