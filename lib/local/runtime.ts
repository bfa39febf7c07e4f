import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { functionEnvironment, type EnvironmentRefs } from '../environment.js';
import { allFunctions } from '../functions.js';
import { authorizer, consumers, fallbackRoute, routes, type QueueName } from '../routes.js';
import { ensureTable, startDynamoDbLocal } from './dynamodb.js';
import { startHttpFront } from './http-front.js';
import { startKmsEmulator } from './kms-emulator.js';
import { lambdaContext, loadHandler } from './lambda.js';
import { startPlatformSimulator, type PlatformSimulator } from './platform-simulator.js';
import { startPoller, startSqs, type LocalQueue } from './sqs.js';

/**
 * The whole service on one machine: DynamoDB Local, the fauxqs SQS emulator, a KMS stand-in,
 * the platform simulator, the HTTP front in place of API Gateway, and pollers in place of
 * Lambda's SQS event source mappings. Every route and consumer runs the very handler module
 * that Lambda runs, configured through the same environment variables.
 */

export interface LocalRuntimeOptions {
  /** API port; 0 picks a free one. */
  port?: number;
  /** Where DynamoDB Local keeps its data; `:memory:` keeps nothing. */
  dataDir?: string;
  /** `ownerId:key` pairs, comma separated; none → one key is generated. */
  apiKeys?: string;
  /** The platform simulator's port (0 picks a free one), or false for none. */
  simulator?: { port: number } | false;
  /** Base of every platform call, `{shopDomain}` replaced; defaults to the simulator. */
  platformApiUrl?: string;
  shopDomainSuffix?: string;
  visibilityTimeoutSeconds?: number;
  maxReceiveCount?: number;
  /** How often the scheduled consumers (the reconciler) run locally. */
  scheduleIntervalSeconds?: number;
  /** A job's lease (CONTRACT.md §6); default visibility timeout × (MAX_RECEIVE_COUNT + 1) + 2 s. */
  leaseSeconds?: number;
  /** THROTTLE_BUDGET_SECONDS; default 86400. */
  throttleBudgetSeconds?: number;
  /** PLATFORM_TIMEOUT_MS: how long a platform call may take; default 10 s, as on AWS. */
  platformTimeoutMs?: number;
  /** Called after each invocation, for benchmarks. */
  onInvoke?: (name: string, ms: number, batch?: number) => void;
}

export interface LocalRuntime {
  apiUrl: string;
  apiKeys: { ownerId: string; key: string }[];
  simulator?: PlatformSimulator;
  tableName: string;
  queues: Record<QueueName, LocalQueue>;
  endpoints: { dynamodb: string; sqs: string; kms: string };
  /** Runs a consumer once, as its trigger would (the reconciler, for instance). */
  invoke(name: string, event?: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

export const TABLE_NAME = 'reseller-routing';

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
        throw new Error(`API_KEYS entry '${pair.slice(0, Math.max(at, 0))}:…' is not ownerId:key`);
      return { ownerId: pair.slice(0, at), key: pair.slice(at + 1) };
    });

export const startLocalRuntime = async (options: LocalRuntimeOptions = {}): Promise<LocalRuntime> => {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const fn of stops.reverse()) await fn().catch(() => undefined);
  };
  try {
    const dataDir = options.dataDir === ':memory:' ? undefined : resolve(options.dataDir ?? '.local');
    if (dataDir) mkdirSync(dataDir, { recursive: true });

    const [dynamo, sqs, kms] = await Promise.all([
      startDynamoDbLocal(dataDir),
      startSqs(),
      startKmsEmulator({ keyMaterial: keyMaterial(dataDir) }),
    ]);
    stops.push(dynamo.stop, sqs.stop, kms.stop);
    await ensureTable(dynamo.endpoint, TABLE_NAME);

    const simulator =
      options.simulator === false ? undefined : await startPlatformSimulator({ port: options.simulator?.port ?? 3001 });
    if (simulator) stops.push(simulator.stop);

    const maxReceiveCount = options.maxReceiveCount ?? 3;
    const visibilityTimeoutSeconds = options.visibilityTimeoutSeconds ?? 2;
    const [sync, fulfillment] = await Promise.all([
      sqs.createQueuePair('sync', { visibilityTimeoutSeconds, maxReceiveCount }),
      sqs.createQueuePair('fulfillment', { visibilityTimeoutSeconds, maxReceiveCount }),
    ]);
    const queues: Record<QueueName, LocalQueue> = {
      sync: sync.queue,
      syncDlq: sync.dlq,
      fulfillment: fulfillment.queue,
      fulfillmentDlq: fulfillment.dlq,
    };

    // The environment each function gets on AWS (lib/environment.ts), pointed at the local engines.
    // It is set before any handler module is loaded, because clients are built when their module
    // loads. The functions share this process, so it holds every function's variables.
    const refs: EnvironmentRefs = {
      stage: 'local',
      tableName: TABLE_NAME,
      keyId: kms.keyId,
      queueUrl: (queue) => queues[queue].url,
      shopDomainSuffix: options.shopDomainSuffix ?? 'myshopify.com',
      apiKeyPrefix: 'sk_test_',
      // Locally every backoff step is the visibility timeout, so a failing job still ends within seconds.
      sync: {
        leaseSeconds: options.leaseSeconds ?? visibilityTimeoutSeconds * (maxReceiveCount + 1) + 2,
        backoffSeconds: [visibilityTimeoutSeconds],
        throttleBudgetSeconds: options.throttleBudgetSeconds ?? 86_400,
      },
    };
    Object.assign(process.env, ...allFunctions().map((fn) => functionEnvironment(fn, refs)), {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      AWS_ENDPOINT_URL_KMS: kms.url,
      PLATFORM_API_URL:
        options.platformApiUrl ?? (simulator ? `${simulator.url}/{shopDomain}` : 'https://{shopDomain}'),
      POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
      ...(options.platformTimeoutMs ? { PLATFORM_TIMEOUT_MS: String(options.platformTimeoutMs) } : {}),
    });

    const { registerKey, generateKey } = await import('../../shared/api-keys/api-keys.js');
    const apiKeys = parseApiKeys(options.apiKeys);
    if (!apiKeys.length) apiKeys.push({ ownerId: 'owner_local', key: generateKey('sk_test_') });
    for (const { ownerId, key } of apiKeys) await registerKey(key, ownerId);

    if (dataDir) {
      // `npm run keys` finds the running table here.
      const file = join(dataDir, 'endpoints.json');
      writeFileSync(file, JSON.stringify({ dynamodb: dynamo.endpoint, tableName: TABLE_NAME, pid: process.pid }));
      stops.push(async () => rmSync(file, { force: true }));
    }

    const front = await startHttpFront({
      port: options.port ?? 3000,
      routes: await Promise.all(routes.map(async (spec) => ({ spec, handler: await loadHandler(spec.entry) }))),
      authorizer: await loadHandler(authorizer.entry),
      fallback: await loadHandler(fallbackRoute.entry),
      onInvoke: options.onInvoke,
    });
    stops.push(front.stop);

    const consumerHandlers = new Map(
      await Promise.all(consumers.map(async (c) => [c.name, await loadHandler(c.entry)] as const)),
    );
    for (const consumer of consumers) {
      const handler = consumerHandlers.get(consumer.name)!;
      if ('queue' in consumer.trigger) {
        const poller = startPoller({
          client: sqs.client,
          queue: queues[consumer.trigger.queue],
          name: consumer.name,
          handler,
          batchSize: consumer.trigger.batchSize,
          maxConcurrency: consumer.trigger.maxConcurrency,
          timeoutSeconds: consumer.timeoutSeconds,
          onInvoke: options.onInvoke,
        });
        stops.push(poller.stop);
      } else {
        const every = (options.scheduleIntervalSeconds ?? 60) * 1000;
        const timer = setInterval(() => {
          handler(
            { source: 'aws.events', 'detail-type': 'Scheduled Event' },
            lambdaContext(consumer.name, consumer.timeoutSeconds),
          ).catch((error: Error) => console.error(`local ${consumer.name} failed`, error));
        }, every);
        timer.unref();
        stops.push(async () => clearInterval(timer));
      }
    }

    return {
      apiUrl: front.url,
      apiKeys,
      simulator,
      tableName: TABLE_NAME,
      queues,
      endpoints: { dynamodb: dynamo.endpoint, sqs: sqs.endpoint, kms: kms.url },
      invoke: async (name, event = {}) => {
        const handler = consumerHandlers.get(name);
        if (!handler) throw new Error(`no consumer named ${name}`);
        return handler(event, lambdaContext(name, 60));
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
};
