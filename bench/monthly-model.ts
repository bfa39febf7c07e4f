/**
 * The month's bill as `bench:monthly` computes it: a pure function of what `bench:cost` measured
 * (bench/cost-measurement.ts), what the synthesized prod template holds (`TemplateCounts`), the
 * prices (bench/prices.ts) and the stated assumptions below. Nothing here is a figure typed in from
 * prose but those assumptions, each printed next to the lines it drives.
 */
import type { CostMeasurement } from './cost-measurement.js';
import { PRICES } from './prices.js';

/** The assumptions of the model, the same as issue 44's review; each is printed with the lines it drives. */
export const ASSUMPTIONS = {
  /** A supplier's (and a reseller's) platform answers a call in 1 to 1.5 s. */
  platformLatencyMs: 1250,
  /** Stores connected: half resellers, half suppliers; each polled every interval. */
  stores: 1000,
  /** Order webhooks per order: `orders/create` (measured) and two `orders/updated` (modeled on it, no writes). */
  orderWebhooksPerOrder: 3,
  /** Fulfillment webhooks per order (modeled: the tag's path, with 2 write units and 1 read unit). */
  fulfillmentWebhooksPerOrder: 1.5,
  /** Half the owners subscribed to one event type: a delivery for half the orders (measured delivery). */
  deliveriesPerOrder: 0.5,
  /** How long Lambda keeps an execution environment: not promised by AWS; observed hours. */
  environmentLifeHours: 2,
  /** What the functions did before issue 44: a decrypted secret kept 5 minutes. */
  previousSecretTtlMinutes: 5,
  /** Lambda's own START/END/REPORT lines in text format (before issue 44): bytes an invocation, 26 B each included. */
  systemLogBytesPerInvocation: 470,
  /** An access log line of the HTTP API (lib/constructs/api.ts's format, filled), 26 B included. */
  accessLogBytesPerRequest: 620,
  /** What a scheduled run (reconciler, poll scheduler, retention sweep) is billed when there is nothing to do. */
  scheduledRunMs: 300,
  /** Idle SQS event source: Lambda's five pollers long-poll 20 s each, 3 requests a minute each. */
  pollersPerEventSource: 5,
  /** CloudWatch Logs storage: what is stored (uncompressed, the worst case) for the log groups' retention. */
  logStorageCompression: 1,
  /** Per poll (docs/performance.md, "Polling"): SQS requests, read units, stores an invocation. */
  sqsPerPoll: 0.3,
  rruPerPoll: 0.5,
  storesPerPollInvocation: 10,
  /** The poll queue's consumer runs at most this many environments (lib/routes.ts). */
  pollEnvironments: 2,
  /**
   * Secrets a use decrypts, by function (shared/stores/connection.ts: a connection decrypts token and
   * webhook secret).
   */
  secretsPerUse: {
    OrdersWebhook: 1,
    SyncWorker: 2,
    FulfillmentWorker: 2,
    EventDeliveryWorker: 1,
    StorePoller: 1,
  } as Record<string, number>,
  /** Dashboards the account has besides this stack's: the first three of 50 metrics are free. */
  otherDashboards: 0,
} as const;

/** What the prod template holds whatever the traffic, counted by bench/template-counts.ts. */
export interface TemplateCounts {
  alarms: number;
  /** Metrics in alarms: one each, or each metric of a metric-math alarm. */
  alarmMetrics: number;
  /** Custom metrics the template makes whatever the traffic: API route metrics (six a route with them on). */
  routeMetrics: number;
  /** Metric filters' metrics: counted only when a webhook is answered 429 or 5xx, so none in a good month. */
  metricFilters: number;
  dashboards: number;
  dashboardMetrics: number;
  kmsKeys: number;
  sqsEventSources: number;
  /** Scheduled runs a month (EventBridge rules). */
  scheduledRuns: number;
  pollIntervalMinutes: number;
  jobRetentionDays: number;
  logRetentionDays: number;
  logLevel: string;
  memoryMb: number;
  /** Whether Lambda's own lines are logged (text format, or JSON with a system level below WARN). */
  systemLogs: boolean;
  pointInTimeRecovery: boolean;
  /** The SQS consumers' batching window in seconds and batch size, by function. */
  batching: Record<string, { windowSeconds: number; batchSize: number }>;
}

export type Service = 'Lambda' | 'API Gateway' | 'DynamoDB' | 'SQS' | 'KMS' | 'CloudWatch';
export interface Line {
  service: Service;
  item: string;
  quantity: number;
  usd: number;
}

const MONTH_SECONDS = 30 * 24 * 3600;
const MONTH_HOURS = 730;
const GB = 1024 ** 3;
const gbSeconds = (ms: number, memoryMb: number) => (ms / 1000) * (memoryMb / 1024);
const line = (service: Service, item: string, quantity: number, price: number): Line => ({
  service,
  item,
  quantity,
  usd: quantity * price,
});

/**
 * Decrypts a month for one function: each environment decrypts a store's secret at its first use in its
 * life (or after the TTL), and a store is used in a life with the probability its share of the uses gives.
 */
export const decryptsPerMonth = (o: {
  uses: number;
  stores: number;
  secrets: number;
  environments: number;
  lifeHours: number;
}) => {
  const lives = o.environments * (MONTH_HOURS / o.lifeHours);
  const usesPerStorePerLife = o.uses / lives / o.stores;
  return lives * o.stores * o.secrets * (1 - Math.exp(-usesPerStorePerLife));
};

/** Messages per invocation on AWS: what the batching window gathers at this rate, within the batch size. */
const recordsPerInvocation = (messagesPerSecond: number, batching?: { windowSeconds: number; batchSize: number }) =>
  batching ? Math.min(batching.batchSize, Math.max(1, messagesPerSecond * batching.windowSeconds)) : 1;

type Scenario = { orders: number; month: number; stores: number };

/** What every section of the month reads: the measurement, the template, the scenario and the figures derived once. */
const monthContext = (m: CostMeasurement, t: TemplateCounts, scenario: Scenario, secretTtlMinutes?: number) => {
  const a = ASSUMPTIONS;
  // A duration measured on a machine whose load average passes its cores is that many times too long:
  // the fastest tenth of the invocations, scaled by cores ÷ load (1 on an idle machine).
  const unloaded = Math.min(1, (m.cores ?? 2) / Math.max(1, m.loadAverage));
  const fn = (name: string) =>
    m.functions[name] ?? {
      invocations: 0,
      recordsPerInvocation: 1,
      billedMsMedian: 0,
      billedMsMean: 0,
      billedMsP10: 0,
    };
  const fulfillments = a.fulfillmentWebhooksPerOrder;
  // The sync worker places the order and tags the reseller's (shared/order-flow/tagging.ts `tagNow`); the
  // fulfillment worker carries each fulfillment to the reseller's platform (and a tag its try left to it).
  const callsPlatform: Record<string, number> = {
    SyncWorker: m.perOrder.platformCalls.supplier + m.perOrder.platformCalls.reseller,
    FulfillmentWorker: fulfillments,
  };
  // Scheduled runs and the polls: whatever the orders.
  const polls = scenario.stores * ((30 * 24 * 60) / t.pollIntervalMinutes);
  return {
    a,
    m,
    t,
    ...scenario,
    secretTtlMinutes,
    lifeHours: secretTtlMinutes ? secretTtlMinutes / 60 : a.environmentLifeHours,
    extraOrderWebhooks: a.orderWebhooksPerOrder - m.perOrder.httpRequests,
    fulfillments,
    deliveries: m.delivery ? a.deliveriesPerOrder : 0,
    d: (key: 'wru' | 'rru' | 'lambdaRequests' | 'logBytes') => Math.max(0, m.delivery?.[key] ?? 0),
    unloaded,
    fn,
    callsPlatform,
    polls,
    pollInvocations: polls / a.storesPerPollInvocation,
  };
};
type MonthContext = ReturnType<typeof monthContext>;

/** The Lambda invocations the orders make a month, by function, and their requests and GB-s. */
const orderInvocations = (c: MonthContext) => {
  const { a, m, t, orders, fulfillments, deliveries, unloaded, fn } = c;
  let lambdaRequests = 0;
  let lambdaGbs = 0;
  const invocationsByFunction = new Map<string, number>();
  // A run where no tag was left to the fulfillment worker measured none of its invocations: its
  // fulfillments are modeled all the same, one a batch of its own at the platform's latency.
  const measured = { FulfillmentWorker: fn('FulfillmentWorker'), ...m.functions };
  for (const [name, f] of Object.entries(measured)) {
    const messagesPerOrder = f.invocations * f.recordsPerInvocation;
    // The fulfillment worker also carries each fulfillment (modeled on the tag's message).
    const messages = orders * (messagesPerOrder + (name === 'FulfillmentWorker' ? fulfillments : 0));
    const perInvocation = t.batching[name]
      ? recordsPerInvocation(messages / MONTH_SECONDS, t.batching[name])
      : f.recordsPerInvocation;
    const invocations = messages / perInvocation;
    const ms = f.billedMsP10 * unloaded + (c.callsPlatform[name] ? a.platformLatencyMs : 0);
    invocationsByFunction.set(name, invocations);
    lambdaRequests += invocations;
    lambdaGbs += invocations * gbSeconds(ms, t.memoryMb);
  }
  // Webhooks beyond the measured one: the order's updates and the fulfillments, each an invocation as the create's.
  const extraWebhooks = orders * (c.extraOrderWebhooks + fulfillments);
  lambdaRequests += extraWebhooks;
  lambdaGbs += extraWebhooks * gbSeconds(fn('OrdersWebhook').billedMsP10 * unloaded, t.memoryMb);
  // Deliveries: the measured extra invocations, each a POST the endpoint answers in the platform's time.
  const deliveryInvocations = orders * deliveries * c.d('lambdaRequests');
  lambdaRequests += deliveryInvocations;
  lambdaGbs +=
    deliveryInvocations * gbSeconds((m.delivery?.workerBilledMsP10 ?? 0) * unloaded + a.platformLatencyMs, t.memoryMb);
  invocationsByFunction.set('EventDeliveryWorker', orders * deliveries);
  return { lambdaRequests, lambdaGbs, invocationsByFunction };
};

// Lambda: each measured function's messages, in the batches AWS would form at this rate; its median
// billed duration, plus the platform's answer once per invocation for those that call one (a batch's
// records are handled side by side).
const lambdaLines = (c: MonthContext, { lambdaRequests, lambdaGbs }: ReturnType<typeof orderInvocations>) => {
  const { a, t, fulfillments, deliveries } = c;
  const lines: Line[] = [];
  if (c.orders) {
    lines.push(
      line(
        'Lambda',
        `requests: the order's functions (measured), ${a.orderWebhooksPerOrder} order and ${fulfillments} ` +
          `fulfillment webhooks, ${deliveries} deliveries an order`,
        lambdaRequests,
        PRICES.lambdaRequest,
      ),
    );
    lines.push(
      line(
        'Lambda',
        `GB-s at ${t.memoryMb} MB: measured durations (fastest tenth × ${c.unloaded.toFixed(3)}, cores ÷ load) ` +
          `+ ${a.platformLatencyMs} ms a platform call`,
        lambdaGbs,
        PRICES.lambdaGbSecond,
      ),
    );
  }
  lines.push(
    line(
      'Lambda',
      `scheduled runs (${Math.round(t.scheduledRuns)}) and polls (${c.stores} stores every ` +
        `${t.pollIntervalMinutes} min, ${a.storesPerPollInvocation} an invocation): requests`,
      t.scheduledRuns + c.pollInvocations,
      PRICES.lambdaRequest,
    ),
  );
  lines.push(
    line(
      'Lambda',
      `scheduled runs (${a.scheduledRunMs} ms) and polls (${a.platformLatencyMs} ms a batch): GB-s`,
      t.scheduledRuns * gbSeconds(a.scheduledRunMs, t.memoryMb) +
        c.pollInvocations * gbSeconds(a.platformLatencyMs, t.memoryMb),
      PRICES.lambdaGbSecond,
    ),
  );
  return lines;
};

// API Gateway: every webhook.
const apiGatewayLines = ({ a, orders, fulfillments }: MonthContext): Line[] =>
  orders
    ? [
        line(
          'API Gateway',
          `HTTP API requests: ${a.orderWebhooksPerOrder} order + ${fulfillments} fulfillment webhooks an order`,
          orders * (a.orderWebhooksPerOrder + fulfillments),
          PRICES.httpApiRequest,
        ),
      ]
    : [];

// DynamoDB: measured units; an update webhook reads as the create's webhook and writes nothing; a
// fulfillment 2 units and 1 read unit; a delivery's measured units, its transactions' billed twice (all
// of them for a measurement that does not tell them apart).
const dynamoUnitLines = ({ a, m, orders, fulfillments, deliveries, d, polls, ...c }: MonthContext): Line[] => {
  const lines: Line[] = [];
  if (orders) {
    const deliveryWru = d('wru') + Math.max(0, m.delivery?.transactionalWru ?? d('wru'));
    const wru = m.perOrder.wru + fulfillments * 2 + deliveries * deliveryWru;
    const rru = m.perOrder.rru + c.extraOrderWebhooks * 1 + fulfillments * 1 + deliveries * d('rru');
    lines.push(
      line(
        'DynamoDB',
        `write units: ${m.perOrder.wru.toFixed(2)} an order measured, + 2 a fulfillment, ` +
          `+ a delivery's (transactions twice)`,
        orders * wru,
        PRICES.dynamoWru,
      ),
    );
    lines.push(
      line(
        'DynamoDB',
        `read units: ${m.perOrder.rru.toFixed(2)} an order measured, + the other webhooks'`,
        orders * rru,
        PRICES.dynamoRru,
      ),
    );
  }
  lines.push(
    line('DynamoDB', `read units of the polls (${a.rruPerPoll} each)`, polls * a.rruPerPoll, PRICES.dynamoRru),
  );
  return lines;
};

// Storage: what the orders of the months kept add, at most the retention.
const dynamoStorageLines = ({ m, t, orders, month }: MonthContext): Line[] => {
  if (!orders) return [];
  const keptMonths = Math.min(month, t.jobRetentionDays / 30);
  const storedGb = (orders * keptMonths * (m.perOrder.storedBytes + m.perOrder.indexBytes)) / GB;
  const lines = [
    line(
      'DynamoDB',
      `storage: ${Math.round(m.perOrder.storedBytes + m.perOrder.indexBytes)} B an order (items and index ` +
        `entries, measured), ${keptMonths.toFixed(1)} months kept (jobRetentionDays ${t.jobRetentionDays}), GB`,
      storedGb,
      PRICES.dynamoStorageGbMonth,
    ),
  ];
  if (t.pointInTimeRecovery)
    lines.push(line('DynamoDB', 'point-in-time recovery of that storage, GB', storedGb, PRICES.dynamoPitrGbMonth));
  return lines;
};

// SQS: sends as measured; receives and deletes in the batches AWS would form; the idle long polls.
const sqsLines = (c: MonthContext, invocationsByFunction: Map<string, number>): Line[] => {
  const { a, m, t, orders, polls } = c;
  const lines: Line[] = [];
  if (orders) {
    const sends =
      (m.perOrder.sqs.SendMessage ?? 0) + (m.perOrder.sqs.SendMessageBatch ?? 0) + c.fulfillments + c.deliveries;
    let receivesAndDeletes = 0;
    for (const [name, invocations] of invocationsByFunction)
      if (t.batching[name]) receivesAndDeletes += 2 * invocations;
    lines.push(
      line(
        'SQS',
        'requests: sends (measured), receives and deletes of the batches',
        orders * sends + receivesAndDeletes,
        PRICES.sqsRequest,
      ),
    );
  }
  lines.push(line('SQS', `polls' requests (${a.sqsPerPoll} a poll)`, polls * a.sqsPerPoll, PRICES.sqsRequest));
  lines.push(
    line(
      'SQS',
      `idle long polls: ${t.sqsEventSources} event sources × ${a.pollersPerEventSource} pollers × 3 a minute`,
      t.sqsEventSources * a.pollersPerEventSource * 3 * 60 * 24 * 30,
      PRICES.sqsRequest,
    ),
  );
  return lines;
};

/** The store secrets the order functions' environments decrypt a month. */
const orderDecrypts = (c: MonthContext, invocationsByFunction: Map<string, number>) => {
  const { a, orders, stores, deliveries } = c;
  // Each function's environments decrypt a store's secrets once a life (or once a TTL).
  const concurrency = (name: string, invocations: number) =>
    Math.max(
      1,
      Math.ceil(
        (invocations / MONTH_SECONDS) *
          ((c.fn(name).billedMsP10 * c.unloaded + (c.callsPlatform[name] ? a.platformLatencyMs : 0)) / 1000),
      ),
    );
  let decrypts = 0;
  const uses: [string, number, number][] = [
    ['OrdersWebhook', orders * a.orderWebhooksPerOrder, stores / 2],
    ['SyncWorker', invocationsByFunction.get('SyncWorker') ?? 0, stores / 2],
    ['FulfillmentWorker', invocationsByFunction.get('FulfillmentWorker') ?? 0, stores / 2],
    ['EventDeliveryWorker', orders * deliveries, stores / 2],
  ];
  for (const [name, n, population] of uses) {
    if (!n || !population) continue;
    decrypts += decryptsPerMonth({
      uses: n,
      stores: population,
      secrets: a.secretsPerUse[name],
      environments: concurrency(name, n),
      lifeHours: c.lifeHours,
    });
  }
  return decrypts;
};

// KMS: each function's environments decrypt a store's secrets once a life (or once a TTL).
const kmsLines = (c: MonthContext, invocationsByFunction: Map<string, number>): Line[] => {
  const { a, t, stores, secretTtlMinutes } = c;
  const pollDecrypts = stores
    ? decryptsPerMonth({
        uses: c.polls,
        stores,
        secrets: 1,
        environments: a.pollEnvironments,
        lifeHours: a.environmentLifeHours,
      })
    : 0;
  return [
    line(
      'KMS',
      `Decrypts: ${stores} stores' secrets once per environment ` +
        `${secretTtlMinutes ? `every ${secretTtlMinutes} min` : `life (${a.environmentLifeHours} h)`}` +
        "; the poller's once a life",
      orderDecrypts(c, invocationsByFunction) + pollDecrypts,
      PRICES.kmsRequest,
    ),
    line('KMS', 'customer managed keys', t.kmsKeys, PRICES.kmsKeyMonth),
  ];
};

// CloudWatch: alarms, metrics, dashboards.
const cloudwatchMetricLines = ({ a, m, t, orders, stores }: MonthContext): Line[] => {
  const businessMetrics = (orders ? m.emfMetrics.length : 0) + (stores ? 1 : 0);
  const paidDashboards =
    Math.max(0, t.dashboards + a.otherDashboards - 3) + (t.dashboardMetrics > 50 ? t.dashboards : 0);
  return [
    line('CloudWatch', `alarm metrics (${t.alarms} alarms)`, t.alarmMetrics, PRICES.cloudwatchAlarmMetric),
    line(
      'CloudWatch',
      `custom metrics: ${orders ? m.emfMetrics.length : 0} the orders emit (measured), ` +
        `1 of the polls (StoresPolled), ${t.routeMetrics} route metrics`,
      businessMetrics + t.routeMetrics,
      PRICES.cloudwatchCustomMetric,
    ),
    line(
      'CloudWatch',
      `dashboards (${t.dashboards} of ${t.dashboardMetrics} metrics: the first 3 of ≤ 50 are free)`,
      paidDashboards,
      PRICES.cloudwatchDashboard,
    ),
  ];
};

/** The bytes the month's logs ingest: the orders' at the log level, EMF, access logs and Lambda's own lines. */
const logBytesOfMonth = (c: MonthContext, lambdaRequests: number) => {
  const { a, m, t, orders, fulfillments } = c;
  const level = (name: string) => ['DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL'].indexOf(name);
  const logged = (bytes: Record<string, number>) =>
    Object.entries(bytes).reduce(
      (sum, [lvl, b]) => sum + (lvl === 'EMF' || level(lvl) >= level(t.logLevel) ? b : 0),
      0,
    );
  const systemBytes = (n: number) => (t.systemLogs ? n * a.systemLogBytesPerInvocation : 0);
  const webhookLog = m.perOrder.logBytesByFunction.OrdersWebhook ?? 0;
  return (
    orders *
      (logged(m.perOrder.logBytes) +
        (c.extraOrderWebhooks + fulfillments) * (t.logLevel === 'INFO' ? webhookLog : 0) +
        c.deliveries * c.d('logBytes') +
        (a.orderWebhooksPerOrder + fulfillments) * a.accessLogBytesPerRequest) +
    systemBytes(lambdaRequests + t.scheduledRuns + c.pollInvocations)
  );
};

// CloudWatch: logs.
const cloudwatchLogLines = (c: MonthContext, lambdaRequests: number): Line[] => {
  const { a, t, orders } = c;
  const logBytesMonth = logBytesOfMonth(c, lambdaRequests);
  const logMonthsKept = Math.min(c.month, t.logRetentionDays / 30);
  return [
    line(
      'CloudWatch',
      `Logs ingested: ${orders ? Math.round(logBytesMonth / orders) : 0} B an order (measured at ${t.logLevel}, ` +
        `EMF, access log${t.systemLogs ? ', Lambda’s own lines' : ''}), GB`,
      logBytesMonth / GB,
      PRICES.cloudwatchLogsIngestedGb,
    ),
    line(
      'CloudWatch',
      `Logs stored (${t.logRetentionDays} days kept), GB-month`,
      (logBytesMonth * logMonthsKept * a.logStorageCompression) / GB,
      PRICES.cloudwatchLogsStoredGbMonth,
    ),
  ];
};

/** What one month costs, line by line. `orders` 0 is the idle month; `month` counts from the first (storage grows). */
export const monthLines = (
  m: CostMeasurement,
  t: TemplateCounts,
  scenario: Scenario,
  options: { secretTtlMinutes?: number } = {},
): Line[] => {
  const c = monthContext(m, t, scenario, options.secretTtlMinutes);
  const invocations = orderInvocations(c);
  return [
    ...lambdaLines(c, invocations),
    ...apiGatewayLines(c),
    ...dynamoUnitLines(c),
    ...dynamoStorageLines(c),
    ...sqsLines(c, invocations.invocationsByFunction),
    ...kmsLines(c, invocations.invocationsByFunction),
    ...cloudwatchMetricLines(c),
    ...cloudwatchLogLines(c, invocations.lambdaRequests),
  ];
};

export const total = (lines: Line[]) => lines.reduce((sum, l) => sum + l.usd, 0);

export const SCENARIO_ORDERS = [10_000, 1_000_000, 10_000_000];
export const SCENARIO_MONTHS = [1, 13];
export const IDLE_STORES = [10, 1000];

/** Every scenario and the idle months: what `--json` prints and the README's block shows. */
export const monthlyReport = (m: CostMeasurement, t: TemplateCounts) => ({
  scenarios: SCENARIO_ORDERS.flatMap((ordersPerMonth) =>
    SCENARIO_MONTHS.map((month) => ({
      ordersPerMonth,
      month,
      usd: round2(total(monthLines(m, t, { orders: ordersPerMonth, month, stores: ASSUMPTIONS.stores }))),
    })),
  ),
  idle: IDLE_STORES.map((stores) => ({
    stores,
    usd: round2(total(monthLines(m, t, { orders: 0, month: 1, stores }))),
  })),
});

const round2 = (n: number) => Math.round(n * 100) / 100;
