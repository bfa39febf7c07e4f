import { randomUUID } from 'node:crypto';
import { allFunctions as deployedFunctions, type FunctionSpec } from '../lib/functions.js';
import type { RouteSpec } from '../lib/routes.js';
import { BENCH_OWNER, fulfillmentPayload, orderBody, sign } from './common.js';

/**
 * Every function the stack deploys (lib/functions.ts), with a realistic first event for each kind,
 * aimed at the local engines.
 */

export type FunctionKind =
  | 'api'
  | 'webhook'
  | 'fallback'
  | 'console'
  | 'authorizer'
  | 'consumer'
  | 'stream'
  | 'schedule'
  | 'invoked';

export interface BenchFunction extends FunctionSpec {
  kind: FunctionKind;
}

const kindOf = (fn: FunctionSpec): FunctionKind => {
  if (fn.route) return fn.route.auth === 'apiKey' ? 'api' : 'webhook';
  if (fn.fallback) return 'fallback';
  if (fn.console) return 'console';
  if (fn.consumer) {
    if (fn.consumes) return 'consumer';
    const { trigger } = fn.consumer;
    return 'stream' in trigger ? 'stream' : 'invoked' in trigger ? 'invoked' : 'schedule';
  }
  return 'authorizer';
};

export const allFunctions = (): BenchFunction[] => deployedFunctions().map((fn) => ({ ...fn, kind: kindOf(fn) }));

/** An id of the right shape that no item has. */
const missingId = (prefix: string) => `${prefix}_bench${'0'.repeat(19)}`;
const PREFIX_BY_COLLECTION: Record<string, string> = {
  reseller_stores: 'rst',
  source_stores: 'sst',
  sync_jobs: 'sj',
  audit_log: 'aud',
};

const requestContext = (method: string, path: string, routeKey: string) => {
  const now = new Date();
  return {
    accountId: '000000000000',
    apiId: 'bench',
    domainName: 'bench.execute-api.us-east-1.amazonaws.com',
    domainPrefix: 'bench',
    http: { method, path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.10', userAgent: 'bench' },
    requestId: `req_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
    routeKey,
    stage: '$default',
    time: now.toUTCString(),
    timeEpoch: now.getTime(),
  };
};

/** The body each mutating route gets: valid, so the handler goes past validation to the table. */
const routeBody = (route: RouteSpec, run: number): unknown => {
  const tag = `${Date.now().toString(36)}${run}`;
  const store = {
    name: 'Bench Shop',
    platform: 'storeplatform_a',
    shopDomain: `bench-cold-${tag}.myshopify.com`,
    accessToken: `shpat_bench_${tag}`,
    webhookSecret: `whsec_bench_${tag}`,
  };
  if (route.name === 'CreateResellerStore') return store;
  if (route.name === 'CreateSourceStore')
    return {
      ...store,
      vendorTag: 'Bench',
      pricingMode: 'percentage',
      pricingConfig: { type: 'percentage', value: 30 },
    };
  if (route.method === 'PATCH') return { name: 'Renamed' };
  return undefined;
};

/** API Gateway HTTP API (payload 2.0) event of a bearer-key route, with the authorizer's context. */
const apiEvent = (route: RouteSpec, run: number) => {
  const segments = route.path.split('/');
  const path = segments
    .map((s, i) => (s.startsWith('{') ? missingId(PREFIX_BY_COLLECTION[segments[i - 1]] ?? 'x') : s))
    .join('/');
  const body = routeBody(route, run);
  const routeKey = `${route.method} ${route.path}`;
  const params = Object.fromEntries(
    route.path.split('/').flatMap((s, i) => (s.startsWith('{') ? [[s.slice(1, -1), path.split('/')[i]]] : [])),
  );
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: '',
    headers: {
      host: 'bench.execute-api.us-east-1.amazonaws.com',
      'user-agent': 'bench',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(Object.keys(params).length ? { pathParameters: params } : {}),
    requestContext: {
      ...requestContext(route.method, path, routeKey),
      authorizer: { lambda: { ownerId: BENCH_OWNER, keyId: 'key_bench' } },
    },
    ...(body === undefined ? { isBase64Encoded: false } : { body: JSON.stringify(body), isBase64Encoded: false }),
  };
};

/** A correctly signed webhook from a shop the service does not know: 401 after the lookup Query. */
const webhookEvent = (route: RouteSpec) => {
  const body =
    route.path === '/v1/orders/webhook' ? orderBody(5_551_234, 'Bench') : JSON.stringify(fulfillmentPayload());
  const routeKey = `${route.method} ${route.path}`;
  return {
    version: '2.0',
    routeKey,
    rawPath: route.path,
    rawQueryString: '',
    headers: {
      host: 'bench.execute-api.us-east-1.amazonaws.com',
      'content-type': 'application/json',
      'x-platform-shop-domain': 'unknown-bench-shop.myshopify.com',
      'x-platform-hmac-sha256': sign('whsec_unknown', body),
      'x-platform-topic': route.path === '/v1/orders/webhook' ? 'orders/create' : 'fulfillments/create',
    },
    requestContext: requestContext(route.method, route.path, routeKey),
    body,
    isBase64Encoded: false,
  };
};

/** A request no route matches: the `$default` route's 404. */
const fallbackEvent = () => ({
  version: '2.0',
  routeKey: '$default',
  rawPath: '/v1/nothing_here',
  rawQueryString: '',
  headers: { host: 'bench.execute-api.us-east-1.amazonaws.com' },
  requestContext: requestContext('GET', '/v1/nothing_here', '$default'),
  isBase64Encoded: false,
});

const authorizerEvent = () => {
  const routeKey = 'GET /v1/sync_jobs';
  return {
    version: '2.0',
    type: 'REQUEST',
    routeArn: 'arn:aws:execute-api:us-east-1:000000000000:bench/$default/GET/v1/sync_jobs',
    identitySource: [],
    routeKey,
    rawPath: '/v1/sync_jobs',
    rawQueryString: '',
    headers: {
      authorization: 'Bearer sk_test_unknownbenchkeyunknownbenchkey0000',
      host: 'bench.execute-api.us-east-1.amazonaws.com',
    },
    requestContext: requestContext('GET', '/v1/sync_jobs', routeKey),
  };
};

/** An SQS batch of one message about a job that does not exist (stale): the consumer drops it. */
const sqsEvent = (queue: string) => {
  // The message shapes of shared/order-flow/placing.ts and shared/order-flow/propagating.ts.
  const body = queue.startsWith('fulfillment')
    ? JSON.stringify({
        jobId: missingId('sj'),
        sourceFulfillmentId: '9001',
        tracking: { company: 'UPS', number: '1Z999', url: null, numbers: ['1Z999'], urls: [] },
      })
    : JSON.stringify({ jobId: missingId('sj'), generation: 1 });
  return {
    Records: [
      {
        messageId: randomUUID(),
        receiptHandle: `bench-${randomUUID()}`,
        body,
        attributes: {
          ApproximateReceiveCount: '1',
          SentTimestamp: String(Date.now()),
          SenderId: 'bench',
          ApproximateFirstReceiveTimestamp: String(Date.now()),
        },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queue}`,
        awsRegion: 'us-east-1',
      },
    ],
  };
};

/** The operator console's page, as a browser asks for it. */
const consoleEvent = () => ({
  version: '2.0',
  routeKey: 'GET /console/{file+}',
  rawPath: '/console/index.html',
  rawQueryString: '',
  headers: { host: 'bench.execute-api.us-east-1.amazonaws.com', 'accept-encoding': 'gzip' },
  pathParameters: { file: 'index.html' },
  requestContext: requestContext('GET', '/console/index.html', 'GET /console/{file+}'),
  isBase64Encoded: false,
});

/**
 * A change stream batch of one record: a write that reports no event (a supplier's pace item, whose
 * changes no integrator is told of), so the recorder reads and classifies it and writes nothing.
 */
const streamEvent = () => {
  const key = { PK: { S: 'PACE#bench-cold.myshopify.com' }, SK: { S: 'PACE' } };
  const image = (updatedAt: string) => ({ ...key, updatedAt: { S: updatedAt } });
  return {
    Records: [
      {
        eventID: randomUUID().replace(/-/g, ''),
        eventName: 'MODIFY',
        eventVersion: '1.1',
        eventSource: 'aws:dynamodb',
        awsRegion: 'us-east-1',
        dynamodb: {
          ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
          Keys: key,
          OldImage: image('2026-01-01T00:00:00.000Z'),
          NewImage: image(new Date().toISOString()),
          SequenceNumber: String(Date.now()),
          SizeBytes: 100,
          StreamViewType: 'NEW_AND_OLD_IMAGES',
        },
        eventSourceARN: 'arn:aws:dynamodb:us-east-1:000000000000:table/bench/stream/2026-01-01T00:00:00.000',
      },
    ],
  };
};

const scheduleEvent = () => ({
  version: '0',
  id: randomUUID(),
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '000000000000',
  time: new Date().toISOString(),
  region: 'us-east-1',
  resources: ['arn:aws:events:us-east-1:000000000000:rule/bench'],
  detail: {},
});

/** The first event of a fresh container of `fn`; `run` makes the bodies of creating routes unique. */
export const firstEvent = (fn: BenchFunction, run: number): unknown => {
  switch (fn.kind) {
    case 'api':
      return apiEvent(fn.route!, run);
    case 'webhook':
      return webhookEvent(fn.route!);
    case 'fallback':
      return fallbackEvent();
    case 'console':
      return consoleEvent();
    case 'authorizer':
      return authorizerEvent();
    case 'consumer':
      return sqsEvent(fn.consumes ?? 'none');
    case 'stream':
      return streamEvent();
    case 'schedule':
      return scheduleEvent();
    case 'invoked':
      // An asynchronous invoke's event: a slow try's message (ids only) of an event that does not exist.
      return { eventId: missingId('evt'), endpointId: missingId('we'), attempts: 0 };
  }
};

/** Whether what the handler answered is what that event should get (not a crash or a 5xx). */
export const answeredWell = (fn: BenchFunction, result: any): boolean => {
  switch (fn.kind) {
    case 'api':
    case 'webhook':
      return typeof result?.statusCode === 'number' && result.statusCode < 500;
    case 'fallback':
      return result?.statusCode === 404;
    case 'console':
      return result?.statusCode === 200;
    case 'authorizer':
      return result?.isAuthorized === true && !result.context?.unavailable;
    case 'consumer':
    case 'stream':
      return Array.isArray(result?.batchItemFailures) && result.batchItemFailures.length === 0;
    case 'schedule':
      return result !== undefined;
    case 'invoked':
      // Lambda keeps nothing of an asynchronous invoke's answer: ending without a throw is answering well.
      return true;
  }
};

/** What the answer was, in a few characters, for the table. */
export const describeAnswer = (fn: BenchFunction, result: any): string => {
  switch (fn.kind) {
    case 'api':
    case 'webhook':
    case 'fallback':
    case 'console':
      return String(result?.statusCode);
    case 'authorizer':
      return result?.isAuthorized ? (result.context?.ownerId ? 'allow+owner' : 'allow') : 'deny';
    case 'consumer':
    case 'stream':
      return `${result?.batchItemFailures?.length ?? '?'} failed`;
    case 'schedule':
      return JSON.stringify(result);
    case 'invoked':
      return 'ended';
  }
};
