import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { type DynamoDBDocumentClient, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Io } from '../../bin/cli/command-line.js';
import { localDocumentClient } from '../../lib/local/dynamodb.js';
import { type LocalRuntime, type LocalRuntimeOptions, startLocalRuntime } from '../../lib/local/runtime.js';
import { syncJobKey } from '../../shared/order-flow/order-sync-job.js';
import { keepInRun } from '../run-logs.js';
import { apiClient as client } from './api-client.js';
import { type CapturedLog, captureLog } from './logs.js';
import { simulator } from './webhooks.js';

/**
 * The harness every integration test file shares: the whole local service (DynamoDB Local, SQS
 * emulator, KMS stand-in, platform simulator, HTTP front) on free ports with an in-memory table,
 * two owners with fixed keys, a client per owner (the typed API client, every answer held to
 * docs/openapi.json: ./api-client.ts) and a document client for seeding.
 */

/** Fixed test keys, so a test can also send a key that looks right but belongs to nobody. */
export const TEST_KEYS = {
  owner_a: 'sk_test_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  owner_b: 'sk_test_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb',
} as const;

export type OwnerName = keyof typeof TEST_KEYS;

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined for an empty or non-JSON body. */
  body: T;
  /** The raw body text, for checks that must see every byte (no secret anywhere). */
  text: string;
}

export interface RequestOptions {
  /** Sent as is instead of `JSON.stringify(body)`. */
  rawBody?: string | Buffer;
  /** Extra or overriding headers; `authorization: undefined`-style removal is done with `auth: false`. */
  headers?: Record<string, string>;
}

export interface ApiClient {
  get<T = any>(path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  post<T = any>(path: string, body?: unknown, options?: RequestOptions): Promise<ApiResponse<T>>;
  patch<T = any>(path: string, body?: unknown, options?: RequestOptions): Promise<ApiResponse<T>>;
  delete<T = any>(path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  request<T = any>(method: string, path: string, body?: unknown, options?: RequestOptions): Promise<ApiResponse<T>>;
}

export interface TestService {
  runtime: LocalRuntime;
  /** A client authenticating as a test owner, with a raw key, or (null) with no Authorization header. */
  api(ownerOrKey: OwnerName | string | null): ApiClient;
  /** Points at the runtime's DynamoDB Local, for seeding and reading raw items. */
  doc: DynamoDBDocumentClient;
  tableName: string;
  stop(): Promise<void>;
}

/** A fault's target: the sync worker's write of a job's `status` (`processing` claims it), of one job or any. */
export const jobStatusWrite = (status: string, jobId?: string) =>
  ({
    function: 'SyncWorker',
    service: 'DynamoDB',
    command: 'UpdateItem',
    ...(jobId ? { match: { Key: syncJobKey(jobId) } } : {}),
    writes: { status },
  }) as const;

/** A fault's target: the fulfillment worker's write that records a parcel's entry in `status`. */
export const entryStatusWrite = (status: string) =>
  ({
    function: 'FulfillmentWorker',
    service: 'DynamoDB',
    command: 'UpdateItem',
    writes: { 'fulfillments.*.status': status },
  }) as const;

/** A fault's target: a webhook function's send of its work to the queue. */
export const queueSend = (functionName: 'OrdersWebhook' | 'FulfillmentsWebhook') =>
  ({ function: functionName, service: 'SQS', command: 'SendMessage' }) as const;

/**
 * Starts the whole local service; call in `beforeAll` (allow 60 s) and `stop()` in `afterAll`.
 * One per test file: the functions run in environments of their own, but this process registers the
 * API keys (and tests seed data) through the shared modules, whose clients keep the first endpoints.
 * Faults for a test: `service.runtime.faults.inject(…)`, cleared with `faults.clear()` (faults.ts).
 */
export const startService = async (options: LocalRuntimeOptions = {}): Promise<TestService> => {
  const runtime = await startLocalRuntime({
    port: 0,
    dataDir: ':memory:',
    simulator: { port: 0 },
    apiKeys: Object.entries(TEST_KEYS)
      .map(([owner, key]) => `${owner}:${key}`)
      .join(','),
    visibilityTimeoutSeconds: 1,
    scheduleIntervalSeconds: 3600,
    ...options,
    // Every message the queues delivered, and what the DLQs hold at the end: the run's end searches
    // them for personal data (test/run-logs.ts).
    onMessage: (queue, body) => {
      keepInRun(`messages-${process.pid}.log`, `${JSON.stringify({ queue, body })}\n`);
      options.onMessage?.(queue, body);
    },
  });
  const doc = localDocumentClient(runtime.endpoints.dynamodb);
  return {
    runtime,
    doc,
    tableName: runtime.tableName,
    api: (ownerOrKey) => {
      if (ownerOrKey === null) return client(runtime.apiUrl, undefined);
      const key = ownerOrKey in TEST_KEYS ? TEST_KEYS[ownerOrKey as OwnerName] : ownerOrKey;
      return client(runtime.apiUrl, `Bearer ${key}`);
    },
    stop: async () => {
      doc.destroy();
      await runtime.stop();
    },
  };
};

/**
 * A suite's service: `startService(options)` in a `beforeAll` (allow `timeoutMs`), `stop()` in an `afterAll`.
 * `service` stands for the started one (read it in hooks and tests only), `api()` is owner_a's client and
 * `sim()` the simulator's controls.
 */
export const serviceForSuite = (options: LocalRuntimeOptions = {}, timeoutMs = 90_000) => {
  let started: TestService | undefined;
  beforeAll(async () => {
    started = await startService(options);
  }, timeoutMs);
  afterAll(() => started?.stop());
  const service = new Proxy({} as TestService, {
    get: (_target, key) => {
      if (!started) throw new Error('the suite’s service is not started: read it in a hook or a test');
      return Reflect.get(started, key);
    },
  });
  return { service, api: () => service.api('owner_a'), sim: () => simulator(service.runtime.simulator!.url) };
};

/**
 * `serviceForSuite` with the service's log lines captured (`log`, read in hooks and tests), and these
 * environment variables set while the suite runs (POWERTOOLS_LOG_LEVEL, POWERTOOLS_METRICS_DISABLED…):
 * set before the service starts, so its functions get them, and given back their values after.
 */
export const loggedServiceForSuite = (
  options: LocalRuntimeOptions = {},
  { env = {}, timeoutMs = 90_000 }: { env?: Record<string, string>; timeoutMs?: number } = {},
) => {
  let captured: CapturedLog | undefined;
  const previous = Object.entries(env).map(([name]) => [name, process.env[name]] as const);
  beforeAll(() => {
    Object.assign(process.env, env);
    captured = captureLog();
  });
  const suite = serviceForSuite(options, timeoutMs);
  afterAll(() => {
    captured?.stop();
    for (const [name, value] of previous)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });
  const log: CapturedLog = {
    lines: () => captured!.lines(),
    metrics: () => captured!.metrics(),
    stop: () => captured?.stop(),
  };
  return { ...suite, log };
};

/**
 * A DATA_DIR as a running `npm start` leaves it for the CLIs: a new folder named after `prefix` whose
 * endpoints.json names this service's DynamoDB and table. The suite removes it.
 */
export const cliDataDir = (service: Pick<TestService, 'runtime' | 'tableName'>, prefix: string) => {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(
    join(dataDir, 'endpoints.json'),
    JSON.stringify({ dynamodb: service.runtime.endpoints.dynamodb, tableName: service.tableName, pid: process.pid }),
  );
  return dataDir;
};

/** Runs a command-line tool's `main` with `argv` in DATA_DIR `dataDir`: its exit code, and what it wrote. */
export const runCli = async (main: (argv: string[], io: Io) => Promise<number>, argv: string[], dataDir: string) => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    env: { DATA_DIR: dataDir },
  });
  return { code, out: out.join('\n'), outLines: out, err: err.join('\n'), errLines: err };
};

/** Every item of the table (test tables are small), for "a failed request writes nothing". */
export const scanAll = async (doc: DynamoDBDocumentClient, tableName: string) => {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await doc.send(
      new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey, ConsistentRead: true }),
    );
    items.push(...((out.Items ?? []) as Record<string, unknown>[]));
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return items;
};

let pollSequence = 0;
/** Polls these stores now: one invocation of the poller with their messages, as SQS would deliver them. */
export const pollStores = (runtime: LocalRuntime, ...stores: { kind: 'reseller' | 'source'; id: string }[]) =>
  runtime.invoke('StorePoller', {
    Records: stores.map((store) => ({
      messageId: `poll-${++pollSequence}`,
      receiptHandle: `receipt-${pollSequence}`,
      body: JSON.stringify(store),
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()) },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:poll',
      awsRegion: 'us-east-1',
    })),
  }) as Promise<{ batchItemFailures: unknown[] }>;

/**
 * Every item but events: the change stream's recorder writes those a moment after the writes they report,
 * so a test that asserts a request changed nothing compares the rest (what the request itself could write).
 */
/** An item's text as it could be read back: strings, and binary attributes decompressed where they can be. */
export const readableItem = (item: Record<string, unknown>): string =>
  JSON.stringify(item, (_key, value) => {
    if (value instanceof Uint8Array) {
      try {
        return brotliDecompressSync(value).toString('utf8');
      } catch {
        return Buffer.from(value).toString('latin1');
      }
    }
    return value;
  });

/** Every item of the table holding any of `strings` (a shopper's: CONTRACT.md §13), as `PK/SK: string`. */
export const itemsHolding = async (service: Pick<TestService, 'doc' | 'tableName'>, strings: string[]) =>
  (await scanAll(service.doc, service.tableName)).flatMap((item) => {
    const text = readableItem(item);
    return strings.filter((s) => text.includes(s)).map((s) => `${String(item.PK)}/${String(item.SK)}: ${s}`);
  });

export const scanAllButEvents = async (doc: DynamoDBDocumentClient, tableName: string) =>
  (await scanAll(doc, tableName)).filter((item) => !String(item.PK).startsWith('EVT#'));

/**
 * Gives a store another access token, encrypted as the service encrypts it (its KMS key, the store's
 * encryption context), as a merchant fixing its side would: e.g. a token the simulator accepts.
 */
export const replaceAccessToken = async (
  service: TestService,
  store: { kind: 'reseller' | 'source'; id: string },
  token: string,
) => {
  const kms = new KMSClient({
    endpoint: service.runtime.endpoints.kms,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const out = await kms.send(
    new EncryptCommand({
      KeyId: process.env.KMS_KEY_ID,
      Plaintext: Buffer.from(token),
      EncryptionContext: { storeId: store.id, field: 'accessToken' },
    }),
  );
  kms.destroy();
  const prefix = store.kind === 'reseller' ? 'RST' : 'SST';
  await service.doc.send(
    new UpdateCommand({
      TableName: service.tableName,
      Key: { PK: `${prefix}#${store.id}`, SK: prefix },
      UpdateExpression: 'SET accessToken = :t',
      ExpressionAttributeValues: { ':t': Buffer.from(out.CiphertextBlob!).toString('base64') },
    }),
  );
};

let sequence = 0;
/** Unique across test files running in parallel against their own tables, and readable in failures. */
export const unique = (prefix = 'x') =>
  `${prefix}-${process.pid.toString(36)}-${(++sequence).toString(36)}-${Math.random().toString(36).slice(2, 7)}`;

/** What every store's body holds: its name, and a shop of its own (`shop` names it) with its token and secret. */
const connectionBody = (name: string, shop: string, kind: string) => ({
  name,
  platform: 'storeplatform_a',
  shopDomain: `${unique(shop)}.myshopify.com`,
  accessToken: `shpat_${kind}_${unique('tok')}`,
  webhookSecret: `whsec_${kind}_${unique('sec')}`,
});

export const resellerStoreBody = (overrides: Record<string, unknown> = {}) => ({
  ...connectionBody('Reseller Shop', 'reseller', 'reseller'),
  ...overrides,
});

export const sourceStoreBody = (overrides: Record<string, unknown> = {}) => ({
  ...connectionBody('Supplier Shop', 'supplier', 'source'),
  vendorTag: unique('Vendor'),
  pricingMode: 'percentage',
  pricingConfig: { type: 'percentage', value: 30 },
  ...overrides,
});

const expectCreated = (what: string, res: ApiResponse) => {
  if (res.status !== 201) throw new Error(`creating a ${what} answered ${res.status}: ${res.text}`);
  return res.body;
};

/** Creates a reseller store with valid defaults; throws unless the API answers 201. */
export const createResellerStore = async (api: ApiClient, overrides: Record<string, unknown> = {}) =>
  expectCreated('reseller store', await api.post('/v1/reseller_stores', resellerStoreBody(overrides)));

/** Creates a source store under `rstId` with valid defaults; throws unless the API answers 201. */
export const createSourceStore = async (api: ApiClient, rstId: string, overrides: Record<string, unknown> = {}) =>
  expectCreated(
    'source store',
    await api.post(`/v1/reseller_stores/${rstId}/source_stores`, sourceStoreBody(overrides)),
  );

/** A reseller store and a source store of its (`source` added to its body), each with a webhook secret of its own. */
export const storePair = async (api: ApiClient, source: Record<string, unknown> = {}) => {
  const resellerSecret = unique('whsec_r');
  const reseller = await createResellerStore(api, { webhookSecret: resellerSecret });
  const sourceSecret = unique('whsec_s');
  const vendorTag = unique('Vendor');
  const store = await createSourceStore(api, reseller.id, { vendorTag, webhookSecret: sourceSecret, ...source });
  return { resellerSecret, reseller, sourceSecret, vendorTag, source: store };
};

/** ISO 8601 UTC with milliseconds (CONTRACT.md §2). */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const REQUEST_ID = /^req_[0-9a-z]+$/;

/** Every sync job of a reseller store, through the API's pages of 100. */
export const allJobsOf = async (api: ApiClient, resellerStoreId: string) => {
  const jobs: any[] = [];
  let after: string | undefined;
  for (;;) {
    const query = `reseller_store_id=${resellerStoreId}&limit=100${after ? `&starting_after=${after}` : ''}`;
    const page = (await api.get(`/v1/sync_jobs?${query}`)).body;
    jobs.push(...page.data);
    if (!page.has_more) return jobs;
    after = page.data.at(-1).id;
  }
};
