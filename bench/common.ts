import { createHmac } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createApiClient, type Schemas, unwrap } from '../client/client.js';
import { ensureTable, startDynamoDbLocal } from '../lib/local/dynamodb.js';
import { type LocalRuntimeOptions, startLocalRuntime } from '../lib/local/runtime.js';
import { createMeter, type Usage } from './meter.js';

/** Helpers the three benchmarks share: flags, figures, tables, signed webhooks, API calls. */

export const BENCH_OWNER = 'owner_bench';
export const BENCH_KEY = 'sk_test_bench';
export const BENCH_API_KEYS = `${BENCH_OWNER}:${BENCH_KEY}`;

/** `--quick`, `--runs 3`, `--rate 20`…; unknown flags are an error, so a typo does not silently run the default. */
export const flags = <T extends Record<string, { type: 'string' | 'boolean'; default?: string | boolean }>>(
  options: T,
) =>
  parseArgs({
    options: { quick: { type: 'boolean', default: false }, ...options },
    allowPositionals: false,
    strict: true,
  }).values as unknown as {
    quick: boolean;
  } & { [K in keyof T]: T[K]['type'] extends 'boolean' ? boolean : string | undefined };

export const positiveNumber = (name: string, value: string | undefined, fallback: number) => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got ${value}`);
  return n;
};

export const median = (values: number[]) => {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Nearest-rank percentile (p in 0..100). */
export const percentile = (values: number[], p: number) => {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
};

/** A plain-text table, columns right-aligned except the first. */
export const table = (headers: string[], rows: (string | number)[][]) => {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(cells[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
};

export const fixed = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/** The platform's signature: base64 HMAC-SHA256 of the exact body bytes. */
export const sign = (secret: string, body: string) =>
  createHmac('sha256', secret).update(body, 'utf8').digest('base64');

export const ORDERS_WEBHOOK_PATH = '/v1/orders/webhook' as const;

/** An `orders/create` payload (CONTRACT.md §5) whose items all go to one supplier (`vendor`). */
export const orderBody = (orderId: number, vendor: string) =>
  JSON.stringify({
    id: orderId,
    name: `#${orderId}`,
    email: 'customer@example.com',
    currency: 'USD',
    line_items: [
      { id: 1, variant_id: 11, sku: 'MUG-1', title: 'Mug', quantity: 2, price: '13.00', vendor },
      { id: 2, variant_id: 12, sku: 'CUP-1', title: 'Cup', quantity: 1, price: '6.50', vendor },
    ],
    shipping_lines: [{ title: 'Standard', price: '5.00' }],
    shipping_address: { name: 'A B', address1: '1 Main St', city: 'X', zip: '1', country_code: 'US' },
  });

/** A `fulfillments/create` payload (CONTRACT.md §6): fulfillment 9001 of supplier order 7002, UPS 1Z999. */
export const fulfillmentPayload = () => ({
  id: 9001,
  order_id: 7002,
  status: 'success',
  tracking_company: 'UPS',
  tracking_number: '1Z999',
  tracking_numbers: ['1Z999'],
  tracking_url: 'https://ups.example/1Z999',
  tracking_urls: ['https://ups.example/1Z999'],
});

export const webhookHeaders = (shopDomain: string, secret: string, body: string) => ({
  'content-type': 'application/json',
  'x-platform-shop-domain': shopDomain,
  'x-platform-hmac-sha256': sign(secret, body),
  'x-platform-topic': 'orders/create',
});

/**
 * Sends a signed `orders/*` webhook of the bench's reseller store through the typed client, as the
 * platform does: the signature covers these very bytes.
 */
export const postOrderWebhook = (
  platform: ReturnType<typeof createApiClient>,
  stores: Pick<BenchStores, 'resellerShopDomain' | 'resellerSecret'>,
  body: string,
  topic: 'orders/create' | 'orders/cancelled' = 'orders/create',
) =>
  platform.POST(ORDERS_WEBHOOK_PATH, {
    params: {
      header: {
        'X-Platform-Hmac-SHA256': sign(stores.resellerSecret, body),
        'X-Platform-Shop-Domain': stores.resellerShopDomain,
        'X-Platform-Topic': topic,
      },
    },
    body: JSON.parse(body),
    bodySerializer: () => body,
  });

/** The typed API client (client/client.ts), authenticating as the bench owner. */
export const benchApi = (apiUrl: string) => createApiClient({ baseUrl: apiUrl, apiKey: BENCH_KEY });

export interface BenchStores {
  resellerShopDomain: string;
  resellerSecret: string;
  sourceShopDomain: string;
  vendor: string;
}

/** One reseller store and one supplier (source store) through the API, as an integrator sets them up. */
export const createStores = async (
  apiUrl: string,
  options: { routingPolicy?: { holdSeconds: number } } = {},
): Promise<BenchStores> => {
  const api = benchApi(apiUrl);
  const tag = Date.now().toString(36);
  const resellerSecret = `whsec_bench_reseller_${tag}`;
  const reseller = unwrap(
    await api.POST('/v1/reseller_stores', {
      body: {
        name: 'Bench Reseller',
        platform: 'storeplatform_a',
        shopDomain: `bench-reseller-${tag}.myshopify.com`,
        accessToken: `shpat_bench_reseller_${tag}`,
        webhookSecret: resellerSecret,
        ...options,
      },
    }),
  );
  const vendor = 'BenchSupplier';
  const sourceStore = unwrap(
    await api.POST('/v1/reseller_stores/{rst_id}/source_stores', {
      params: { path: { rst_id: reseller.id } },
      body: {
        name: 'Bench Supplier',
        platform: 'storeplatform_a',
        shopDomain: `bench-supplier-${tag}.myshopify.com`,
        accessToken: `shpat_bench_supplier_${tag}`,
        webhookSecret: `whsec_bench_supplier_${tag}`,
        vendorTag: vendor,
        pricingMode: 'percentage',
        pricingConfig: { type: 'percentage', value: 30 },
        // BENCH_SERVICE_LEVEL=1: a supplier with a promise (CONTRACT.md §16), whose jobs get a due time.
        ...(process.env.BENCH_SERVICE_LEVEL === '1'
          ? { serviceLevel: { shipWithinBusinessDays: 2, timeZone: 'America/New_York' } }
          : {}),
      },
    }),
  );
  return { resellerShopDomain: reseller.shopDomain, resellerSecret, sourceShopDomain: sourceStore.shopDomain, vendor };
};

export type JobView = Pick<Schemas['sync_job'], 'id' | 'status' | 'createdAt' | 'completedAt' | 'tagged'>;

/**
 * Reads the statuses of `wanted` jobs through the API: pages of `GET /v1/sync_jobs?limit=100`
 * (newest first) down to the oldest wanted job, then `GET /v1/sync_jobs/{id}` for any still
 * unseen. Answers what it found; the caller decides what is still outstanding.
 */
export const readJobs = async (apiUrl: string, wanted: Set<string>, options: { maxPages?: number } = {}) => {
  const api = benchApi(apiUrl);
  const found = new Map<string, JobView>();
  let cursor: string | undefined;
  let requests = 0;
  for (let page = 0; page < (options.maxPages ?? 50) && found.size < wanted.size; page++) {
    const list = unwrap(await api.GET('/v1/sync_jobs', { params: { query: { limit: 100, starting_after: cursor } } }));
    requests++;
    for (const job of list.data) if (wanted.has(job.id)) found.set(job.id, job);
    if (!list.has_more) break;
    cursor = list.data.at(-1)?.id;
  }
  for (const id of wanted) {
    if (found.has(id)) continue;
    const { data } = await api.GET('/v1/sync_jobs/{id}', { params: { path: { id } } });
    requests++;
    if (data) found.set(id, data);
  }
  return { jobs: found, requests };
};

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How often at most a long phase reports how far it got. */
const PROGRESS_EVERY_MS = 3000;

/**
 * Progress of a long phase on stderr (`sending orders… 250/500`): a line when it starts, then at
 * most one every few seconds, and one when it is complete. The figures go to stdout, so
 * `npm run bench:… > report.txt` keeps only them.
 */
export const progress = (label: string, total: number, initial = 0, everyMs = PROGRESS_EVERY_MS) => {
  let done = initial;
  let printedAt = 0;
  let finished = false;
  const print = (note?: string) => {
    printedAt = Date.now();
    process.stderr.write(`${label}… ${done}/${total}${note ? `, ${note}` : ''}\n`);
  };
  print();
  return {
    /** `value` done so far (a count that only grows); `note` adds what else is worth knowing. */
    at(value: number, note?: string) {
      done = value;
      if (finished) return;
      if (done >= total) {
        finished = true;
        print(note);
      } else if (Date.now() - printedAt >= everyMs) print(note);
    },
    /** One more done. */
    tick(note?: string) {
      this.at(done + 1, note);
    },
  };
};

/** A one-off step that takes a while, said before it starts. */
export const step = (what: string) => process.stderr.write(`${what}…\n`);

/**
 * The local runtime as a bench runs it: in memory, its own simulator, the bench's key, the functions'
 * EMF metric lines off (they would bury the figures; POWERTOOLS_METRICS_DISABLED=false shows them).
 */
export const startBenchRuntime = (options: Partial<LocalRuntimeOptions> = {}) => {
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  return startLocalRuntime({
    port: 0,
    dataDir: ':memory:',
    simulator: { port: 0 },
    apiKeys: BENCH_API_KEYS,
    scheduleIntervalSeconds: 3600,
    ...options,
  });
};

/** DynamoDB's units by operation, as a table: calls, units and GSI units, each divided by `per`'s count. */
export const dynamoByOperation = (usage: Usage, per: (n: number) => string, unit = '') =>
  table(
    ['operation (item kind or index)', `calls${unit}`, `units${unit}`, 'of which GSI'],
    [...usage.dynamo.byOperation]
      .sort((a, b) => b[1].units - a[1].units)
      .map(([op, o]) => [op, per(o.calls), per(o.units), per(o.gsiUnits)]),
  );

/** The reseller's own order on its shop (the simulator), as the platform keeps it. */
export const placeOnResellerShop = async (simUrl: string, shopDomain: string, body: string) => {
  const res = await fetch(`${simUrl}/_sim/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ shopDomain, order: JSON.parse(body) }),
  });
  if (res.status !== 201) throw new Error(`the simulator refused the order: ${res.status}`);
};

/**
 * A cost bench's start: its `--orders` (`defaultOrders` without the flag), a meter, and the local runtime
 * metered by it (the meter counts nothing until the bench sets `meter.counting`).
 */
export const startMeteredBench = async (defaultOrders: number) => {
  const args = flags({ orders: { type: 'string' } });
  const orders = Math.round(positiveNumber('orders', args.orders, defaultOrders));
  const { meter, onInvoke, onSdkCall } = createMeter();
  step('starting the local runtime');
  const runtime = await startBenchRuntime({ onInvoke, onSdkCall });
  return { orders, meter, runtime };
};

/** A cost bench's end: counting off and the runtime stopped; exit code 1 after a `failure` (printed), else 0. */
export const endMeteredBench = async (
  { meter, runtime }: Pick<Awaited<ReturnType<typeof startMeteredBench>>, 'meter' | 'runtime'>,
  failure: unknown,
) => {
  meter.counting = false;
  if (failure) console.error(failure);
  await runtime.stop();
  process.exit(failure ? 1 : 0);
};

/** Posts `orders` signed single-supplier orders (ids from `firstId` on); the ids of the jobs they made. */
export const placeOrders = async (
  platform: ReturnType<typeof createApiClient>,
  stores: BenchStores,
  orders: number,
  firstId: number,
) => {
  step(`placing ${orders} orders`);
  const ids = new Set<string>();
  for (let n = 0; n < orders; n++) {
    const { data, response } = await postOrderWebhook(platform, stores, orderBody(firstId + n, stores.vendor));
    if (response.status !== 200 || !data) throw new Error(`orders/create answered ${response.status}`);
    for (const id of data.syncJobIds) ids.add(id);
  }
  return ids;
};

/**
 * Runs `bench` against a DynamoDB Local of its own holding `tableName`, with the environment pointing the
 * shared clients there (they are built when first imported: `bench` imports them), and stops it after.
 */
export const withBenchTable = async (tableName: string, bench: () => Promise<void>) => {
  const dynamodb = await startDynamoDbLocal();
  try {
    await ensureTable(dynamodb.endpoint, tableName);
    Object.assign(process.env, {
      TABLE_NAME: tableName,
      AWS_ENDPOINT_URL_DYNAMODB: dynamodb.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    });
    await bench();
  } finally {
    await dynamodb.stop();
  }
};

/** `runs` timed calls of `run`, one after another: each one's milliseconds and answer. */
export const timedRuns = async <T>(runs: number, run: () => Promise<T>) => {
  const ms: number[] = [];
  const answers: T[] = [];
  for (let n = 0; n < runs; n++) {
    const started = performance.now();
    answers.push(await run());
    ms.push(performance.now() - started);
  }
  return { ms, answers };
};
