import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { identityStatements, keyUseGrants, keyUseStatements } from '../access.js';
import { DEFAULT_JOB_RETENTION_DAYS, DEFAULT_PERSONAL_DATA_RETENTION_DAYS } from '../config.js';
import { buildConsole, consoleDefine } from '../console-build.js';
import { type EnvironmentRefs, functionEnvironment } from '../environment.js';
import { allFunctions } from '../functions.js';
import {
  type Access,
  authorizer,
  consoleRoute,
  consumers,
  fallbackRoute,
  type InvokedTrigger,
  type QueueName,
  routes,
  type ScheduleTrigger,
  type StreamTrigger,
} from '../routes.js';
import { isRecordedItem, STREAM_MAPPING } from '../stream-mapping.js';
import { enqueueEvent, startAsyncInvokes } from './async-invoke.js';
import {
  authorize,
  LOCAL_ACCOUNT,
  type LocalAccess,
  localFunctionArn,
  localRoleArn,
  localTableArn,
} from './authorize.js';
import { type Bundles, bundleFunctions, bundlesIn } from './bundle.js';
import { assertJava, ensureTable, SHARED_DYNAMODB_ENV, startDynamoDbLocal, useSharedDynamoDb } from './dynamodb.js';
import type { FunctionConfig } from './environments.js';
import { assertPortFree, StartupError } from './errors.js';
import type { FaultHandle, FaultSpec } from './faults.js';
import { LocalFunctions } from './functions.js';
import { startHttpFront } from './http-front.js';
import { startInvokeEndpoint } from './invoke-endpoint.js';
import { startKmsEmulator } from './kms-emulator.js';
import { type PlatformSimulator, startPlatformSimulator } from './platform-simulator.js';
import type { SdkCall } from './protocol.js';
import { type LocalQueue, startPoller, startSqs } from './sqs.js';
import { startStreamPoller } from './streams.js';

/**
 * The whole service on one machine: DynamoDB Local, the fauxqs SQS emulator, a KMS stand-in,
 * the platform simulator, the HTTP front in place of API Gateway, and pollers in place of
 * Lambda's SQS event source mappings. Every function runs the very handler module that Lambda
 * runs, in execution environments of its own (environments.ts), configured through the same
 * environment variables.
 */

/** A port nothing listens on now: the API's, when asked for any, so its URL is known before it starts. */
const freePort = () =>
  new Promise<number>((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolvePort(port));
    });
  });

export interface LocalRuntimeOptions {
  /**
   * Where the platforms send webhooks (PUBLIC_URL, CONTRACT.md §12.1); default the API's own URL.
   */
  publicUrl?: string;
  /** API port; 0 picks a free one. */
  port?: number;
  /** Where DynamoDB Local and the SQS emulator keep their data; `:memory:` keeps nothing. */
  dataDir?: string;
  /** `ownerId:key` pairs, comma separated; none → one key is generated. */
  apiKeys?: string;
  /** The platform simulator's port (0 picks a free one), or false for none. */
  simulator?: { port: number } | false;
  /** Base of every platform call, `{shopDomain}` replaced; defaults to the simulator. */
  platformApiUrl?: string;
  shopDomainSuffix?: string;
  /** The work queues' visibility timeout: how long a message that failed waits before it comes back. */
  visibilityTimeoutSeconds?: number;
  maxReceiveCount?: number;
  /** How often the scheduled consumers (the reconciler) run locally. */
  scheduleIntervalSeconds?: number;
  /** PERSONAL_DATA_RETENTION_DAYS of the retention sweep: 90 by default, a fraction of a day for tests. */
  personalDataRetentionDays?: number;
  /**
   * API_KEY_RATE_LIMIT: the changes a second one key may request. Off (0) by default locally, where tests
   * and scripts make many with one key; the tests that check the limit set it.
   */
  apiKeyRateLimit?: number;
  /** POLL_INTERVAL_SECONDS: how often every active store is polled; default `scheduleIntervalSeconds`. */
  pollIntervalSeconds?: number;
  /** A job's lease (CONTRACT.md §6); default visibility timeout × (MAX_RECEIVE_COUNT + 1) + 2 s. */
  leaseSeconds?: number;
  /** DELIVERY_RETRY_SECONDS: a webhook delivery's waits after each failed try; default 1 to 3 s. */
  deliveryRetrySeconds?: number[];
  /** THROTTLE_BUDGET_SECONDS; default 86400. */
  throttleBudgetSeconds?: number;
  /** Environments at most per HTTP route (Lambda's account-wide limit has no local meaning). */
  httpConcurrency?: number;
  /** Environments at most of the functions named, instead of their default: a reserved concurrency. */
  concurrency?: Record<string, number>;
  /** An execution environment without an invocation for this long is stopped. */
  idleSeconds?: number;
  /** Function timeouts in seconds by function name, instead of the deployed ones (for tests). */
  timeouts?: Record<string, number>;
  /** PLATFORM_TIMEOUT_MS: how long a platform call may take; default 10 s, as on AWS. */
  platformTimeoutMs?: number;
  /**
   * For tests: functions whose `access` is replaced by this one (lib/routes.ts keeps the real one), to
   * prove that a call outside a function's declaration is refused.
   */
  accessOverrides?: Record<string, Access>;
  /** Called after each invocation, for benchmarks. */
  onInvoke?: (name: string, ms: number, batch?: number) => void;
  /** Called with every AWS SDK call a function makes, for the cost benchmark's meter. */
  onSdkCall?: (call: SdkCall) => void;
  /**
   * Called with every message a queue delivers to its function, and, on stop, with each message left
   * in a DLQ (the tests search them for personal data: test/run-logs.ts).
   */
  onMessage?: (queue: QueueName, body: string) => void;
}

export interface LocalRuntime {
  apiUrl: string;
  apiKeys: { ownerId: string; key: string }[];
  simulator?: PlatformSimulator;
  tableName: string;
  queues: Record<QueueName, LocalQueue>;
  /** The change stream mapping's on-failure destination (lib/constructs/consumers.ts, EventRecorderFailures). */
  streamFailures: LocalQueue;
  /** `lambda`: Lambda's Invoke API for the functions (invoke-endpoint.ts). */
  endpoints: { dynamodb: string; sqs: string; kms: string; lambda: string };
  /** The data directory, or undefined when everything is in memory. */
  dataDir?: string;
  /** Invokes a function once, as a direct invocation or its trigger would (the reconciler, for instance). */
  invoke(name: string, event?: unknown): Promise<unknown>;
  /** Live execution environments per function. */
  environments(): Record<string, number>;
  /** The files of its bundle a function's environments have loaded so far: its entry, its chunks (bundle.ts). */
  outputsLoaded(name: string): string[];
  /** Test faults in the functions' AWS SDK calls (faults.ts). */
  faults: { inject(spec: FaultSpec): FaultHandle; clear(): void };
  stop(): Promise<void>;
}

export const TABLE_NAME = 'reseller-routing';
/** The memory each function is deployed with (cdk.json); locally the V8 heap limit of its thread. */
const MEMORY_MB = 256;
/**
 * Environments per HTTP route (and the authorizer): on AWS the account's concurrency, here the
 * machine's few cores. Requests beyond wait for an environment; the wait is not part of the timeout.
 */
const HTTP_CONCURRENCY = 4;
/**
 * Environments at most of an asynchronously invoked function: its reservation, up to what this machine's
 * few cores run (the slow try reserves 40 on AWS; 40 threads here would starve every other function).
 */
const LOCAL_INVOKED_CONCURRENCY = 8;
/** What Lambda allows an SQS event source when no maximum concurrency is set: at least two at once. */
const DEFAULT_QUEUE_CONCURRENCY = 2;

const allEntries = allFunctions().map((fn) => fn.entry);
const functionNames = new Set(allFunctions().map((fn) => fn.name));
/** Every function with the access it runs with: its declaration, or a test's override of it. */
const withOverrides = (overrides: Record<string, Access> = {}) =>
  allFunctions().map((fn) => ({ name: fn.name, access: overrides[fn.name] ?? fn.access }));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Bundles what a runtime runs: every function and the console. `into` a directory that outlives
 * the runtimes, for a run that starts many (the integration tests' global set-up).
 */
export const bundleRuntime = (into?: string) => bundleFunctions(allEntries, consoleDefine(buildConsole(ROOT)), into);

/**
 * Set by a test run that bundled once for all its runtimes (test/integration/global-setup.ts): the
 * directory of those bundles, which a runtime then uses and leaves in place.
 */
export const PREBUILT_BUNDLES_ENV = 'LOCAL_RUNTIME_BUNDLES';
const prebuiltBundles = () => {
  const dir = process.env[PREBUILT_BUNDLES_ENV];
  return dir && existsSync(dir) ? bundlesIn(dir) : undefined;
};

/** The KMS stand-in's key lives beside the data it protects, so a persistent table stays readable. */
const keyMaterial = (dataDir?: string) => {
  if (!dataDir) return randomBytes(32);
  const file = join(dataDir, 'kms-key');
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8'), 'base64');
  const key = randomBytes(32);
  writeFileSync(file, key.toString('base64'), { mode: 0o600 });
  return key;
};

const parseApiKeys = (spec: string | undefined) =>
  (spec ?? '')
    .split(',')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf(':');
      if (at <= 0 || at === pair.length - 1)
        throw new StartupError(`API_KEYS entry '${pair.slice(0, Math.max(at, 0))}:…' is not ownerId:key`);
      return { ownerId: pair.slice(0, at), key: pair.slice(at + 1) };
    });

/** The data directory, created and proven writable, or undefined for `:memory:`. */
const prepareDataDir = (option: string | undefined) => {
  if (option === ':memory:') return undefined;
  const dataDir = resolve(option ?? '.local');
  try {
    mkdirSync(dataDir, { recursive: true });
    accessSync(dataDir, constants.W_OK);
    const probe = join(dataDir, `.write-probe-${process.pid}`);
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (error) {
    throw new StartupError(`DATA_DIR ${dataDir} is not writable (${(error as NodeJS.ErrnoException).code})`);
  }
  return dataDir;
};

const RUNNING_FILE = 'endpoints.json';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};
/** A process's command line, where the system tells it (Linux); '' elsewhere. */
const commandLine = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};

/**
 * One runtime per data directory. A runtime that died without stopping (kill -9, a crash) left its
 * record behind, and perhaps its DynamoDB Local, which would still hold the data: that one is ended.
 */
const reclaimDataDir = (dataDir: string) => {
  const file = join(dataDir, RUNNING_FILE);
  if (!existsSync(file)) return;
  let previous: { pid?: number; javaPid?: number } = {};
  try {
    previous = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    // Half written when its runtime died: nothing to learn from it.
  }
  if (previous.pid && previous.pid !== process.pid && alive(previous.pid) && /node|tsx/.test(commandLine(previous.pid)))
    throw new StartupError(
      `DATA_DIR ${dataDir} is in use by another local runtime (pid ${previous.pid}); stop it first`,
    );
  if (previous.javaPid && alive(previous.javaPid) && commandLine(previous.javaPid).includes('DynamoDBLocal'))
    process.kill(previous.javaPid, 'SIGKILL');
  rmSync(file, { force: true });
};

/**
 * Every function of lib/routes.ts, with the timeout and concurrency it runs with locally, and its role:
 * credentials naming it (the KMS stand-in reads them) and the policy the stack writes for its `access`.
 */
const functionConfigs = (
  options: LocalRuntimeOptions,
  env: Record<string, string>,
  refs: EnvironmentRefs,
  bundles: Bundles,
  accessOf: (name: string, access: Access) => LocalAccess,
): FunctionConfig[] => {
  const unknown = Object.keys(options.concurrency ?? {}).filter((name) => !functionNames.has(name));
  if (unknown.length) throw new Error(`concurrency names no function: ${unknown.join(', ')}`);
  return allFunctions().map((fn) => ({
    name: fn.name,
    timeoutSeconds: options.timeouts?.[fn.name] ?? fn.timeoutSeconds,
    maxConcurrency:
      options.concurrency?.[fn.name] ??
      (!fn.consumer
        ? (options.httpConcurrency ?? HTTP_CONCURRENCY)
        : 'queue' in fn.consumer.trigger
          ? (fn.consumer.trigger.maxConcurrency ?? DEFAULT_QUEUE_CONCURRENCY)
          : 'invoked' in fn.consumer.trigger
            ? Math.min(fn.consumer.trigger.invoked.reservedConcurrency, LOCAL_INVOKED_CONCURRENCY)
            : 1),
    // The change stream's poller (lib/local/streams.ts) hands over one batch at a time, as one shard does.
    bundle: bundles.of(fn.entry),
    memoryMb: MEMORY_MB,
    access: accessOf(fn.name, options.accessOverrides?.[fn.name] ?? fn.access),
    env: {
      ...env,
      ...functionEnvironment(fn, refs),
      AWS_ACCESS_KEY_ID: fn.name,
      // What Lambda sets in every sandbox.
      AWS_LAMBDA_FUNCTION_NAME: fn.name,
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(MEMORY_MB),
      AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.name}`,
    },
  }));
};

type Stops = (() => Promise<void>)[];

/** The KMS stand-in with the key policy the stack writes (lib/constructs/data.ts), from the same declarations. */
const startKms = (options: LocalRuntimeOptions, dataDir: string | undefined) =>
  startKmsEmulator({
    keyMaterial: keyMaterial(dataDir),
    // The functions are known by their credentials, anything else (tests, scripts) is the runtime's own.
    keyPolicy: {
      statements: keyUseStatements(keyUseGrants(withOverrides(options.accessOverrides)), {
        accountRoot: `arn:aws:iam::${LOCAL_ACCOUNT}:root`,
        principalArn: localRoleArn,
      }),
      principalOf: (accessKeyId) =>
        functionNames.has(accessKeyId) ? { arn: localRoleArn(accessKeyId), account: LOCAL_ACCOUNT } : undefined,
    },
  });

/** DynamoDB Local (and its table), the SQS emulator, the KMS stand-in and the bundles, started side by side. */
const startEngines = async (options: LocalRuntimeOptions, dataDir: string | undefined, stops: Stops) => {
  // Whatever did start is stopped again if another part failed.
  const part = async <T>(starting: Promise<T>, stopOf: (value: T) => () => Promise<void>) => {
    const value = await starting;
    stops.push(stopOf(value));
    return value;
  };
  // In memory, a DynamoDB Local the caller shares (SHARED_DYNAMODB_ENV) is used with a table of its own.
  const shared = dataDir ? undefined : process.env[SHARED_DYNAMODB_ENV];
  const tableName = shared ? `${TABLE_NAME}-${randomBytes(6).toString('hex')}` : TABLE_NAME;
  const parts = [
    part(shared ? Promise.resolve(useSharedDynamoDb(shared, tableName)) : startDynamoDbLocal(dataDir), (d) => d.stop),
    part(startSqs(dataDir), (q) => q.stop),
    part(startKms(options, dataDir), (k) => k.stop),
    part(Promise.resolve(prebuiltBundles() ?? bundleRuntime()), (b) => async () => b.remove()),
  ] as const;
  await Promise.allSettled(parts);
  const [dynamo, sqs, kms, bundles] = await Promise.all(parts);
  if (dataDir) {
    // `npm run keys` finds the running table here; the next start finds what a crash left behind.
    const file = join(dataDir, RUNNING_FILE);
    const running = {
      dynamodb: dynamo.endpoint,
      tableName,
      pid: process.pid,
      javaPid: dynamo.process?.pid,
    };
    writeFileSync(file, JSON.stringify(running));
    stops.push(async () => rmSync(file, { force: true }));
  }
  await ensureTable(dynamo.endpoint, tableName);
  return { dynamo, sqs, kms, bundles, tableName };
};
type Engines = Awaited<ReturnType<typeof startEngines>>;

/** The work queues and their DLQs, wired as the stack wires them, and the change stream's on-failure queue. */
const createQueues = async (
  sqs: Engines['sqs'],
  pair: { visibilityTimeoutSeconds: number; maxReceiveCount: number },
) => {
  const [sync, fulfillment, poll, delivery, app] = await Promise.all([
    sqs.createQueuePair('sync', pair),
    sqs.createQueuePair('fulfillment', pair),
    sqs.createQueuePair('poll', pair),
    sqs.createQueuePair('delivery', pair),
    sqs.createQueuePair('app', pair),
  ]);
  const queues: Record<QueueName, LocalQueue> = {
    sync: sync.queue,
    syncDlq: sync.dlq,
    fulfillment: fulfillment.queue,
    fulfillmentDlq: fulfillment.dlq,
    poll: poll.queue,
    pollDlq: poll.dlq,
    delivery: delivery.queue,
    deliveryDlq: delivery.dlq,
    app: app.queue,
    appDlq: app.dlq,
  };
  // Lambda's own queue of each asynchronously invoked function's events (async-invoke.ts).
  const invoked = consumers.filter((c) => 'invoked' in c.trigger).map((c) => c.name);
  const asyncQueues = Object.fromEntries(
    await Promise.all(invoked.map(async (name) => [name, await sqs.createQueue(`async-${name}`)] as const)),
  );
  return { queues, asyncQueues, streamFailures: await sqs.createQueue('event-recorder-failures') };
};

/** What the runtime's parts are set to: the options with their local defaults. */
const settingsOf = async (options: LocalRuntimeOptions) => {
  const scheduleSeconds = options.scheduleIntervalSeconds ?? 60;
  return {
    maxReceiveCount: options.maxReceiveCount ?? 3,
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? 2,
    scheduleSeconds,
    apiPort: options.port === 0 ? await freePort() : (options.port ?? 3000),
    pollIntervalSeconds: options.pollIntervalSeconds ?? scheduleSeconds,
  };
};
type Settings = Awaited<ReturnType<typeof settingsOf>>;

/**
 * The environment each function gets on AWS (lib/environment.ts), pointed at the local engines.
 * Each function's environments get their own variables only; this process gets all of them,
 * so tests and scripts can use the shared modules against the same engines.
 */
const runtimeEnvironment = (
  options: LocalRuntimeOptions,
  { dynamo, sqs, kms, tableName }: Engines,
  queues: Record<QueueName, LocalQueue>,
  settings: Settings,
  simulator: PlatformSimulator | undefined,
  lambdaEndpoint: string,
) => {
  const { visibilityTimeoutSeconds, maxReceiveCount } = settings;
  const refs: EnvironmentRefs = {
    stage: 'local',
    tableName,
    keyId: kms.keyId,
    queueUrl: (queue) => queues[queue].url,
    functionName: (name) => name,
    shopDomainSuffix: options.shopDomainSuffix ?? 'myshopify.com',
    apiKeyPrefix: 'sk_test_',
    // Locally every backoff step is the visibility timeout, so a failing job still ends within seconds.
    sync: {
      leaseSeconds: options.leaseSeconds ?? visibilityTimeoutSeconds * (maxReceiveCount + 1) + 2,
      backoffSeconds: [visibilityTimeoutSeconds],
      throttleBudgetSeconds: options.throttleBudgetSeconds ?? 86_400,
    },
    pollIntervalSeconds: settings.pollIntervalSeconds,
    jobRetentionDays: DEFAULT_JOB_RETENTION_DAYS,
    apiKeyRateLimit: options.apiKeyRateLimit ?? 0,
    personalDataRetentionDays: options.personalDataRetentionDays ?? DEFAULT_PERSONAL_DATA_RETENTION_DAYS,
    // The platforms (the simulator) send webhooks to the API itself; its port is taken before it listens.
    publicUrl: options.publicUrl ?? `http://127.0.0.1:${settings.apiPort}`,
  };
  const env: Record<string, string> = {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_SQS: sqs.endpoint,
    AWS_ENDPOINT_URL_KMS: kms.url,
    // Lambda's Invoke API (invoke-endpoint.ts): what a function invokes asynchronously.
    AWS_ENDPOINT_URL_LAMBDA: lambdaEndpoint,
    PLATFORM_API_URL: options.platformApiUrl ?? (simulator ? `${simulator.url}/{shopDomain}` : 'https://{shopDomain}'),
    POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
    // Webhook endpoints may be http://127.0.0.1 and http://localhost here only (shared/core/config.ts).
    LOCAL_RUNTIME: '1',
    // A webhook delivery's retry schedule (CONTRACT.md §14) in seconds, as the other local clocks.
    DELIVERY_RETRY_SECONDS: (options.deliveryRetrySeconds ?? [1, 1, 2, 2, 3, 3, 3]).join(','),
    ...(options.platformTimeoutMs ? { PLATFORM_TIMEOUT_MS: String(options.platformTimeoutMs) } : {}),
    ...passThrough(),
  };
  Object.assign(process.env, ...allFunctions().map((fn) => functionEnvironment(fn, refs)), env);
  return { refs, env };
};

/** The API keys the runtime starts with: the options', or one generated. */
const registerApiKeys = async (spec: string | undefined) => {
  const { registerKey, generateKey } = await import('../../shared/api-keys/api-keys.js');
  const apiKeys = parseApiKeys(spec);
  if (!apiKeys.length) apiKeys.push({ ownerId: 'owner_local', key: generateKey('sk_test_') });
  for (const { ownerId, key } of apiKeys) await registerKey(key, ownerId);
  return apiKeys;
};

/** A function's role: the policy the stack writes for its `access`, over the local table, key and queues. */
const accessFor =
  (tableName: string, keyArn: string, queues: Record<QueueName, LocalQueue>) =>
  (functionName: string, access: Access): LocalAccess => ({
    functionName,
    statements: identityStatements(access, {
      tableArn: localTableArn(tableName),
      keyArn,
      queueArn: (queue) => queues[queue].arn,
      functionArn: localFunctionArn,
    }),
    queueArns: Object.fromEntries(Object.values(queues).map((queue) => [queue.url, queue.arn])),
    keyArn,
  });

/** What the consumers' triggers are wired to. */
interface Wiring {
  options: LocalRuntimeOptions;
  engines: Engines;
  queues: Record<QueueName, LocalQueue>;
  streamFailures: LocalQueue;
  asyncQueues: Record<string, LocalQueue>;
  functions: LocalFunctions;
  invoke: (name: string, event: unknown) => Promise<unknown>;
  dataDir: string | undefined;
  settings: Settings;
}

/** fauxqs's default for a queue created without one, as the DLQs are. */
const visibilityOf = (queue: QueueName, visibilityTimeoutSeconds: number) =>
  queue === 'sync' || queue === 'fulfillment' || queue === 'poll' || queue === 'delivery' || queue === 'app'
    ? visibilityTimeoutSeconds
    : 30;

const startQueueConsumer = (w: Wiring, name: string, trigger: { queue: QueueName; batchSize: number }) =>
  startPoller({
    client: w.engines.sqs.client,
    queue: w.queues[trigger.queue],
    pool: w.functions.pool(name),
    batchSize: trigger.batchSize,
    maxConcurrency: w.functions.pool(name).fn.maxConcurrency,
    visibilityTimeoutSeconds: visibilityOf(trigger.queue, w.settings.visibilityTimeoutSeconds),
    onInvoke: w.options.onInvoke,
    onReceive: (messages) => {
      for (const message of messages) w.options.onMessage?.(trigger.queue, message.Body ?? '');
    },
  });

const startStreamConsumer = (w: Wiring, name: string, trigger: StreamTrigger) =>
  startStreamPoller({
    endpoint: w.engines.dynamo.endpoint,
    tableName: w.engines.tableName,
    pool: w.functions.pool(name),
    // As the deployed mapping reads it (lib/stream-mapping.ts): batches, bisection, bounded retries
    // and record age, the on-failure destination.
    batchSize: trigger.batchSize,
    batchingWindowMs: STREAM_MAPPING.batchingWindowSeconds * 1000,
    filter: isRecordedItem,
    bisect: true,
    retryAttempts: STREAM_MAPPING.retryAttempts,
    maxRecordAgeMs: STREAM_MAPPING.maxRecordAgeSeconds * 1000,
    onFailure: async (failure) => {
      await w.engines.sqs.client.send(
        new SendMessageCommand({ QueueUrl: w.streamFailures.url, MessageBody: JSON.stringify(failure) }),
      );
    },
    // Beside the table it reads: a restart on the same data goes on where the last one stopped.
    checkpointFile: w.dataDir ? join(w.dataDir, 'stream-places.json') : undefined,
    onInvoke: w.options.onInvoke,
  });

/** An asynchronously invoked function's events run as Lambda runs them (async-invoke.ts). */
const startInvoked = (w: Wiring, name: string, { invoked }: InvokedTrigger) =>
  startAsyncInvokes({
    client: w.engines.sqs.client,
    pool: w.functions.pool(name),
    queue: w.asyncQueues[name],
    retryAttempts: invoked.retryAttempts,
    maxEventAgeSeconds: invoked.maxEventAgeSeconds,
    // Lambda waits about a minute, then two; locally a work queue's visibility timeout, like the other clocks.
    retryDelaySeconds: w.settings.visibilityTimeoutSeconds,
    onFailure: w.queues[invoked.onFailure],
    onInvoke: w.options.onInvoke,
  });

/** The poll scheduler runs every POLL_INTERVAL_SECONDS, as on AWS; the others every schedule interval. */
const startSchedule = (w: Wiring, name: string, trigger: ScheduleTrigger) => {
  const every = ('pollInterval' in trigger ? w.settings.pollIntervalSeconds : w.settings.scheduleSeconds) * 1000;
  const timer = setInterval(() => {
    w.invoke(name, { source: 'aws.events', 'detail-type': 'Scheduled Event' }).catch((error: Error) =>
      console.error(`local ${name} failed`, error.message),
    );
  }, every);
  timer.unref();
  return async () => clearInterval(timer);
};

/**
 * Every consumer's trigger started; the pollers stop before `beforeStop` (the front), so none waits for an
 * environment.
 */
const startConsumers = (w: Wiring, stops: Stops, beforeStop: () => Promise<void>) => {
  for (const { name, trigger } of consumers) {
    if ('queue' in trigger) stops.splice(stops.indexOf(beforeStop), 0, startQueueConsumer(w, name, trigger).stop);
    else if ('stream' in trigger)
      stops.splice(stops.indexOf(beforeStop), 0, startStreamConsumer(w, name, trigger).stop);
    else if ('invoked' in trigger) stops.splice(stops.indexOf(beforeStop), 0, startInvoked(w, name, trigger).stop);
    else stops.push(startSchedule(w, name, trigger));
  }
  const onMessage = w.options.onMessage;
  if (!onMessage) return;
  // First of the stops: what the DLQs still hold, read while the queues are there.
  const dlqs = (Object.keys(w.queues) as QueueName[]).filter((queue) => queue.endsWith('Dlq'));
  stops.push(async () => {
    for (const queue of dlqs) for (const body of await w.engines.sqs.drain(w.queues[queue].url)) onMessage(queue, body);
  });
};

/**
 * What `npm run events -- replay-failed` needs of a running service: the on-failure queue, the
 * engines it reads and the recorder it invokes.
 */
const recordReplayEndpoints = (dataDir: string | undefined, replay: Record<string, string>) => {
  if (!dataDir) return;
  const file = join(dataDir, RUNNING_FILE);
  const running = JSON.parse(readFileSync(file, 'utf8'));
  writeFileSync(file, JSON.stringify({ ...running, ...replay }));
};

/** The checks before anything starts: the data directory is this runtime's, Java is there, the ports are free. */
const checkStart = async (options: LocalRuntimeOptions) => {
  const dataDir = prepareDataDir(options.dataDir);
  if (dataDir) reclaimDataDir(dataDir);
  assertJava();
  await assertPortFree(options.port ?? 3000, 'API');
  if (options.simulator !== false) await assertPortFree(options.simulator?.port ?? 3001, 'Platform simulator');
  return dataDir;
};

/**
 * Lambda's Invoke API (invoke-endpoint.ts): a direct invoke runs the function (once `functionsOf` has
 * them); an asynchronous one of a function invoked so (lib/routes.ts `invoked`) is kept on its queue.
 */
const startLambdaApi = async (
  options: LocalRuntimeOptions,
  sqs: Engines['sqs'],
  asyncQueues: Record<string, LocalQueue>,
  stops: Stops,
  functionsOf: () => LocalFunctions | undefined,
) => {
  const invoke = async (name: string, event: unknown) => {
    const functions = functionsOf();
    if (!functions) throw new Error('the local runtime is starting');
    const { result, ms } = await functions.pool(name).invoke(event);
    options.onInvoke?.(name, ms);
    return result;
  };
  const accept = async (name: string, payload: string) => {
    if (!asyncQueues[name]) return false;
    await enqueueEvent(sqs.client, asyncQueues[name], payload);
    return true;
  };
  // A caller whose credentials name a function (its access key id) may invoke what its role allows.
  const refuse = (accessKeyId: string, name: string, path: string) => {
    const access = functionNames.has(accessKeyId) ? functionsOf()?.pool(accessKeyId).fn.access : undefined;
    const refused = access && authorize(undefined, { FunctionName: name }, access, path);
    if (!refused) return undefined;
    process.stderr.write(
      `${JSON.stringify({
        level: 'ERROR',
        message: 'local runtime: access denied, as AWS would (lib/routes.ts declares what a function may do)',
        function: accessKeyId,
        action: refused.request.action,
        resource: refused.request.resource,
      })}\n`,
    );
    return refused.denial;
  };
  const endpoint = await startInvokeEndpoint(invoke, accept, refuse);
  stops.push(endpoint.stop);
  return { invoke, url: endpoint.url };
};

const startRuntime = async (options: LocalRuntimeOptions, stops: Stops, stop: () => Promise<void>) => {
  const dataDir = await checkStart(options);
  const engines = await startEngines(options, dataDir, stops);
  const { dynamo, sqs, kms, bundles, tableName } = engines;
  const simulator =
    options.simulator === false ? undefined : await startPlatformSimulator({ port: options.simulator?.port ?? 3001 });
  if (simulator) stops.push(simulator.stop);
  const settings = await settingsOf(options);
  const { queues, asyncQueues, streamFailures } = await createQueues(sqs, settings);
  // Lambda's Invoke API first: the functions are told where it is. It reaches them once they exist.
  let functions: LocalFunctions | undefined;
  const { invoke, url: lambdaUrl } = await startLambdaApi(options, sqs, asyncQueues, stops, () => functions);
  const { refs, env } = runtimeEnvironment(options, engines, queues, settings, simulator, lambdaUrl);
  const apiKeys = await registerApiKeys(options.apiKeys);
  const accessOf = accessFor(tableName, kms.keyId, queues);
  functions = new LocalFunctions(functionConfigs(options, env, refs, bundles, accessOf), {
    bootstrap: bundles.bootstrap,
    idleSeconds: options.idleSeconds ?? 60,
    onSdkCall: options.onSdkCall,
  });
  const started = functions;
  stops.push(() => started.stop());
  const front = await startHttpFront({
    port: settings.apiPort,
    routes,
    authorizerName: authorizer.name,
    fallbackName: fallbackRoute.name,
    consoleName: consoleRoute.name,
    invoke,
  });
  stops.push(front.stop);
  recordReplayEndpoints(dataDir, { sqs: sqs.endpoint, streamFailures: streamFailures.url, lambda: lambdaUrl });
  const wiring = { options, engines, queues, streamFailures, asyncQueues, functions, invoke, dataDir, settings };
  startConsumers(wiring, stops, front.stop);
  return {
    apiUrl: front.url,
    apiKeys,
    simulator,
    tableName,
    queues,
    streamFailures,
    endpoints: { dynamodb: dynamo.endpoint, sqs: sqs.endpoint, kms: kms.url, lambda: lambdaUrl },
    dataDir,
    invoke: (name, event = {}) => invoke(name, event),
    environments: () => started.environments(),
    outputsLoaded: (name) => started.outputsLoaded(name),
    faults: { inject: (spec) => started.inject(spec), clear: () => started.clearFaults() },
    stop,
  } satisfies LocalRuntime;
};

export const startLocalRuntime = async (options: LocalRuntimeOptions = {}): Promise<LocalRuntime> => {
  const stops: Stops = [];
  const stop = async () => {
    for (const fn of stops.reverse()) await fn().catch(() => undefined);
    stops.length = 0;
  };
  try {
    return await startRuntime(options, stops, stop);
  } catch (error) {
    await stop();
    throw error;
  }
};

const PASSED_THROUGH = new RegExp(
  '^(POWERTOOLS_\\w+|PLATFORM_TIMEOUT_MS|MAX_HOLD_SECONDS|FULFILLMENT_RECHECK_SECONDS|FULFILLMENT_REDRIVES|' +
    'ENDPOINT_FAILING_SECONDS|DELIVERY_ENDPOINT_CONCURRENCY|DELIVERY_PROMPT_MS|STORE_PLATFORM_BUDGET_MS|TZ)$',
);

/** Settings an operator may give the functions through the shell (log level, platform timeout…). */
const passThrough = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && PASSED_THROUGH.test(entry[0]),
    ),
  );
