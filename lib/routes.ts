import type * as v from 'valibot';
import type { SecretContext } from '../shared/aws/kms-cipher.js';
import type { INDEX } from '../shared/dynamo/keys.js';
import {
  CreateResellerStoreBody,
  CreateSourceStoreBody,
  CreateWebhookEndpointBody,
  HoldSyncJobBody,
  ListAuditLogQuery,
  ListEventsQuery,
  ListOrdersQuery,
  ListSyncJobsQuery,
  PlainListQuery,
  RecoverWebhookEndpointBody,
  RotateCredentialsBody,
  RotateWebhookEndpointSecretBody,
  ScorecardQuery,
  UpdateResellerStoreBody,
  UpdateSourceStoreBody,
  UpdateWebhookEndpointBody,
} from '../shared/http/schemas.js';

/**
 * The one list of every function the service runs: HTTP routes, the authorizer and the
 * queue/schedule consumers. The CDK stack deploys it, the local runtime serves it, the IAM grants
 * are derived from each entry's `access` and the OpenAPI document from each route's `request`, so
 * none of them can drift apart.
 */

export type TableAction =
  | 'GetItem'
  | 'BatchGetItem'
  | 'Query'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'TransactWriteItems'
  | 'ConditionCheckItem';

export type KeyAction = 'Encrypt' | 'Decrypt';
/** A secret of a store, as the encryption context of its ciphertext names it (shared/aws/kms-cipher.ts). */
export type SecretField = SecretContext['field'];
/** An index of the table by its role in shared/dynamo/keys.ts: `lists` (GSI1), `lookups` (GSI2), `inFlight` (GSI3)… */
export type IndexName = keyof typeof INDEX;

export type QueueName =
  | 'sync'
  | 'syncDlq'
  | 'fulfillment'
  | 'fulfillmentDlq'
  | 'poll'
  | 'pollDlq'
  | 'delivery'
  | 'deliveryDlq'
  | 'app'
  | 'appDlq';
export type QueueAction = 'SendMessage' | 'ChangeMessageVisibility';

/** What a function's handler calls; its IAM policy grants exactly this and nothing more. */
export interface Access {
  /** Item actions on the table; `Query` here is a Query of the table itself (a partition's items). */
  table?: TableAction[];
  /**
   * The indexes it queries: its role may Query these and no other. A list route declares every
   * index its filters can read (test/unit/list-sources.test.ts holds them to the filters).
   */
  indexes?: IndexName[];
  /**
   * The secrets key, for the secrets named in `fields` only: the grant is conditioned on the
   * encryption context the cipher sends, so a function that verifies webhooks cannot decrypt an
   * access token.
   */
  key?: { actions: KeyAction[]; fields: SecretField[] };
  queues?: Partial<Record<QueueName, QueueAction[]>>;
  /**
   * Functions of lib/routes.ts it invokes asynchronously (Lambda's Invoke, InvocationType `Event`):
   * `lambda:InvokeFunction` on those functions only, and their names in its environment.
   */
  invokes?: string[];
  /**
   * Keeps stores' webhook subscriptions (CONTRACT.md §12.1): it is told the service's public URL
   * (`PUBLIC_URL`) and calls the platforms. No IAM grant.
   */
  publicUrl?: true;
}

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface RouteSpec {
  /** PascalCase, unique: the construct id and part of the function name. */
  name: string;
  method: HttpMethod;
  /** API Gateway route path, with `{param}` placeholders. */
  path: string;
  /** Handler module relative to the project root; it exports `handler`. */
  entry: string;
  /**
   * `apiKey`: bearer key through the authorizer. `webhook`: no authorizer, the body's HMAC is
   * checked in the handler.
   */
  auth: 'apiKey' | 'webhook';
  access: Access;
  /** The schemas the handler parses its body and query string with (shared/http/schemas.ts). */
  request?: { body?: v.GenericSchema; query?: v.GenericSchema };
}

export interface ConsumerSpec {
  name: string;
  entry: string;
  /**
   * The queue whose messages invoke it, or a schedule: every `scheduleMinutes`, or (`pollInterval`)
   * every poll interval of the deployment (`-c pollIntervalSeconds`; POLL_INTERVAL_SECONDS locally).
   */
  trigger:
    | { queue: QueueName; batchSize: number; maxConcurrency?: number }
    | ScheduleTrigger
    | StreamTrigger
    | InvokedTrigger;
  /** Seconds; its queue's visibility timeout is derived from it (lib/constructs/queues.ts). */
  timeoutSeconds: number;
  access: Access;
}

const READ_ONE: Access = { table: ['GetItem'] };
/** A page: the keys from one of `indexes`, then the items; GetItem reads the cursor's item. */
const readList = (...indexes: IndexName[]): Access => ({ table: ['GetItem', 'BatchGetItem'], indexes });
/**
 * Reads an order's lines: a large order's body is in parts beside its first job, read in one Query of
 * the order's partition (shared/order-flow/order-repository.ts `readBodyParts`).
 */
const readsOrderBody = (access: Access): Access => ({
  ...access,
  table: [...new Set([...(access.table ?? []), 'Query' as const])],
});
const BOTH_SECRETS: SecretField[] = ['accessToken', 'webhookSecret'];
/** An expiring token's refresh grant (CONTRACT.md §12.3), each secret under its own field. */
const REFRESH_SECRETS: SecretField[] = ['refreshToken', 'clientId', 'clientSecret'];
/** What a store's creation or new credentials encrypt: its two secrets and an expiring token's grant. */
const STORE_SECRETS: SecretField[] = [...BOTH_SECRETS, ...REFRESH_SECRETS];
/**
 * A function that calls the stores with their tokens: it decrypts them, and refreshes an expiring one
 * (shared/stores/connection.ts), encrypting the new access and refresh tokens.
 */
const CALLS_STORES: Access['key'] = { actions: ['Decrypt', 'Encrypt'], fields: STORE_SECRETS };

/**
 * What `Idempotency-Key` adds to a POST or PATCH route (shared/idempotency/requests.ts): the claim
 * (a conditional put), the read of a held key, and the update that keeps an answer or releases a
 * key whose request kept nothing.
 */
export const IDEMPOTENCY_ACTIONS: TableAction[] = ['PutItem', 'GetItem', 'UpdateItem'];
const idempotent = (access: Access): Access => ({
  ...access,
  table: [...new Set([...(access.table ?? []), ...IDEMPOTENCY_ACTIONS])],
});

/**
 * A webhook endpoint's signing secret, encrypted on creation and rotation; decrypted only to replay
 * an answer kept for an `Idempotency-Key`, which holds it encrypted (shared/http/idempotency.ts).
 */
const ENDPOINT_SECRET_ENCRYPT: Access['key'] = { actions: ['Encrypt', 'Decrypt'], fields: ['endpointSecret'] };

/** A credentials rotation: the store and its audit entry in one transaction, the new secrets encrypted. */
const ROTATE_CREDENTIALS: Access = {
  ...idempotent({
    table: ['GetItem', 'TransactWriteItems', 'UpdateItem', 'PutItem'],
    key: { actions: ['Encrypt'], fields: STORE_SECRETS },
  }),
  // A new token checks the store's webhook subscriptions (UpdateItem: what it found).
  publicUrl: true,
};

/**
 * A bearer-key route that changes something counts its key's requests (shared/http/handler.ts): one
 * conditional UpdateItem of the key's rate window, whatever else the route does.
 */
const RATE_WINDOW_ACTIONS: TableAction[] = ['UpdateItem'];
const withRateWindow = (route: RouteSpec): RouteSpec =>
  route.auth === 'apiKey' && route.method !== 'GET'
    ? {
        ...route,
        access: { ...route.access, table: [...new Set([...(route.access.table ?? []), ...RATE_WINDOW_ACTIONS])] },
      }
    : route;

const ROUTES: RouteSpec[] = [
  {
    name: 'CreateResellerStore',
    method: 'POST',
    path: '/v1/reseller_stores',
    entry: 'functions/create-reseller-store.ts',
    auth: 'apiKey',
    request: { body: CreateResellerStoreBody },
    // UpdateItem (in idempotent's): the webhook subscriptions found, kept on the store (CONTRACT.md §12.1).
    access: {
      ...idempotent({ table: ['PutItem'], key: { actions: ['Encrypt'], fields: STORE_SECRETS } }),
      publicUrl: true,
    },
  },
  {
    name: 'ListResellerStores',
    method: 'GET',
    path: '/v1/reseller_stores',
    entry: 'functions/list-reseller-stores.ts',
    auth: 'apiKey',
    request: { query: PlainListQuery },
    access: readList('lists'),
  },
  {
    name: 'GetResellerStore',
    method: 'GET',
    path: '/v1/reseller_stores/{id}',
    entry: 'functions/get-reseller-store.ts',
    auth: 'apiKey',
    access: READ_ONE,
  },
  {
    name: 'UpdateResellerStore',
    method: 'PATCH',
    path: '/v1/reseller_stores/{id}',
    entry: 'functions/update-reseller-store.ts',
    auth: 'apiKey',
    request: { body: UpdateResellerStoreBody },
    access: idempotent({ table: ['UpdateItem'] }),
  },
  {
    name: 'RotateResellerStoreCredentials',
    method: 'POST',
    path: '/v1/reseller_stores/{id}/credentials',
    entry: 'functions/rotate-reseller-store-credentials.ts',
    auth: 'apiKey',
    request: { body: RotateCredentialsBody },
    access: ROTATE_CREDENTIALS,
  },
  {
    name: 'DeleteResellerStore',
    method: 'DELETE',
    path: '/v1/reseller_stores/{id}',
    entry: 'functions/delete-reseller-store.ts',
    auth: 'apiKey',
    access: { table: ['UpdateItem'] },
  },
  {
    name: 'CreateSourceStore',
    method: 'POST',
    path: '/v1/reseller_stores/{rst_id}/source_stores',
    entry: 'functions/create-source-store.ts',
    auth: 'apiKey',
    request: { body: CreateSourceStoreBody },
    // UpdateItem (in idempotent's): the webhook subscriptions found, kept on the store (CONTRACT.md §12.1).
    access: {
      ...idempotent({ table: ['GetItem', 'TransactWriteItems'], key: { actions: ['Encrypt'], fields: STORE_SECRETS } }),
      publicUrl: true,
    },
  },
  {
    name: 'ListSourceStores',
    method: 'GET',
    path: '/v1/reseller_stores/{rst_id}/source_stores',
    entry: 'functions/list-source-stores.ts',
    auth: 'apiKey',
    request: { query: PlainListQuery },
    access: readList('lists'),
  },
  {
    name: 'GetSourceStore',
    method: 'GET',
    path: '/v1/reseller_stores/{rst_id}/source_stores/{id}',
    entry: 'functions/get-source-store.ts',
    auth: 'apiKey',
    access: READ_ONE,
  },
  {
    name: 'DeleteSourceStore',
    method: 'DELETE',
    path: '/v1/reseller_stores/{rst_id}/source_stores/{id}',
    entry: 'functions/delete-source-store.ts',
    auth: 'apiKey',
    // The transaction soft-deletes the store and deletes its vendor-tag item.
    access: { table: ['GetItem', 'TransactWriteItems', 'DeleteItem'] },
  },
  {
    name: 'UpdateSourceStore',
    method: 'PATCH',
    path: '/v1/reseller_stores/{rst_id}/source_stores/{id}',
    entry: 'functions/update-source-store.ts',
    auth: 'apiKey',
    request: { body: UpdateSourceStoreBody },
    // A new vendor tag moves the tag item in the same transaction as the store. A promise without a zone
    // reads the shop's own from its platform (CONTRACT.md §16.1): the store's secrets, decrypted.
    access: idempotent({
      table: ['GetItem', 'TransactWriteItems', 'UpdateItem', 'PutItem', 'DeleteItem'],
      key: { actions: ['Decrypt'], fields: STORE_SECRETS },
    }),
  },
  {
    name: 'GetSourceStoreScorecard',
    method: 'GET',
    path: '/v1/reseller_stores/{rst_id}/source_stores/{id}/scorecard',
    entry: 'functions/get-source-store-scorecard.ts',
    auth: 'apiKey',
    request: { query: ScorecardQuery },
    // The store, then its window's per-day items (CONTRACT.md §16.3): one Query, never the jobs.
    access: { table: ['GetItem', 'Query'] },
  },
  {
    name: 'RotateSourceStoreCredentials',
    method: 'POST',
    path: '/v1/reseller_stores/{rst_id}/source_stores/{id}/credentials',
    entry: 'functions/rotate-source-store-credentials.ts',
    auth: 'apiKey',
    request: { body: RotateCredentialsBody },
    access: ROTATE_CREDENTIALS,
  },
  {
    name: 'ListOrders',
    method: 'GET',
    path: '/v1/reseller_stores/{rst_id}/orders',
    entry: 'functions/list-orders.ts',
    auth: 'apiKey',
    request: { query: ListOrdersQuery },
    // The store's orders and those with unrouted items are both in GSI7; a large order's body parts
    // (for its unrouted items' details) are read by a Query of its partition.
    access: readsOrderBody(readList('resourceLists')),
  },
  {
    name: 'GetOrder',
    method: 'GET',
    path: '/v1/reseller_stores/{rst_id}/orders/{externalOrderId}',
    entry: 'functions/get-order.ts',
    auth: 'apiKey',
    // The order's record at its first job's key; a large order's body parts.
    access: readsOrderBody(READ_ONE),
  },
  {
    name: 'GetDataRequest',
    method: 'GET',
    path: '/v1/reseller_stores/{rst_id}/data_requests/{id}',
    entry: 'functions/get-data-request.ts',
    auth: 'apiKey',
    // The reseller store (its owner), then the request kept under it.
    access: READ_ONE,
  },
  {
    name: 'ListSyncJobs',
    method: 'GET',
    path: '/v1/sync_jobs',
    entry: 'functions/list-sync-jobs.ts',
    auth: 'apiKey',
    request: { query: ListSyncJobsQuery },
    access: readsOrderBody(readList('lists', 'inFlight', 'storeLists', 'stateLists', 'storeStateLists')),
  },
  {
    name: 'GetSyncJob',
    method: 'GET',
    path: '/v1/sync_jobs/{id}',
    entry: 'functions/get-sync-job.ts',
    auth: 'apiKey',
    access: readsOrderBody(READ_ONE),
  },
  {
    name: 'ListSyncJobAttempts',
    method: 'GET',
    path: '/v1/sync_jobs/{id}/attempts',
    entry: 'functions/list-sync-job-attempts.ts',
    auth: 'apiKey',
    request: { query: PlainListQuery },
    // The history is on the job item: a page is one GetItem.
    access: READ_ONE,
  },
  {
    name: 'RetrySyncJob',
    method: 'POST',
    path: '/v1/sync_jobs/{id}/retry',
    entry: 'functions/retry-sync-job.ts',
    auth: 'apiKey',
    access: readsOrderBody(idempotent({ table: ['GetItem', 'TransactWriteItems'], queues: { sync: ['SendMessage'] } })),
  },
  {
    name: 'HoldSyncJob',
    method: 'POST',
    path: '/v1/sync_jobs/{id}/hold',
    entry: 'functions/hold-sync-job.ts',
    auth: 'apiKey',
    request: { body: HoldSyncJobBody },
    // The hold and its `sync_job.held` audit entry in one transaction (CONTRACT.md §11); no message.
    access: readsOrderBody(idempotent({ table: ['GetItem', 'TransactWriteItems'] })),
  },
  {
    name: 'ReleaseSyncJob',
    method: 'POST',
    path: '/v1/sync_jobs/{id}/release',
    entry: 'functions/release-sync-job.ts',
    auth: 'apiKey',
    // The release and its `sync_job.released` audit entry in one transaction, then the job's message.
    access: readsOrderBody(idempotent({ table: ['GetItem', 'TransactWriteItems'], queues: { sync: ['SendMessage'] } })),
  },
  {
    name: 'ListAuditLog',
    method: 'GET',
    path: '/v1/audit_log',
    entry: 'functions/list-audit-log.ts',
    auth: 'apiKey',
    request: { query: ListAuditLogQuery },
    access: readList('lists', 'storeLists', 'stateLists', 'storeStateLists', 'resourceLists'),
  },
  {
    name: 'ListEvents',
    method: 'GET',
    path: '/v1/events',
    entry: 'functions/list-events.ts',
    auth: 'apiKey',
    request: { query: ListEventsQuery },
    // Each type's list: the events themselves (a Query of the table: 16 shards each, merged for a group
    // or none) and GSI5's list of the first layout's until they expire; or the failing events (GSI6).
    access: { ...readList('stateLists', 'storeStateLists'), table: ['GetItem', 'BatchGetItem', 'Query'] },
  },
  {
    name: 'GetEvent',
    method: 'GET',
    path: '/v1/events/{id}',
    entry: 'functions/get-event.ts',
    auth: 'apiKey',
    // The event, then its deliveries (one BatchGet of the endpoints it names).
    access: { table: ['GetItem', 'BatchGetItem'] },
  },
  {
    name: 'CreateWebhookEndpoint',
    method: 'POST',
    path: '/v1/webhook_endpoints',
    entry: 'functions/create-webhook-endpoint.ts',
    auth: 'apiKey',
    request: { body: CreateWebhookEndpointBody },
    // The owner's count (the limit of 16), the endpoint and its audit entry in one transaction.
    access: idempotent({ table: ['TransactWriteItems', 'UpdateItem', 'PutItem'], key: ENDPOINT_SECRET_ENCRYPT }),
  },
  {
    name: 'ListWebhookEndpoints',
    method: 'GET',
    path: '/v1/webhook_endpoints',
    entry: 'functions/list-webhook-endpoints.ts',
    auth: 'apiKey',
    request: { query: PlainListQuery },
    // The owner's endpoints are one partition of the table (at most 16).
    access: { table: ['Query'] },
  },
  {
    name: 'GetWebhookEndpoint',
    method: 'GET',
    path: '/v1/webhook_endpoints/{id}',
    entry: 'functions/get-webhook-endpoint.ts',
    auth: 'apiKey',
    access: READ_ONE,
  },
  {
    name: 'UpdateWebhookEndpoint',
    method: 'PATCH',
    path: '/v1/webhook_endpoints/{id}',
    entry: 'functions/update-webhook-endpoint.ts',
    auth: 'apiKey',
    request: { body: UpdateWebhookEndpointBody },
    access: idempotent({ table: ['GetItem', 'TransactWriteItems', 'UpdateItem', 'PutItem'] }),
  },
  {
    name: 'DeleteWebhookEndpoint',
    method: 'DELETE',
    path: '/v1/webhook_endpoints/{id}',
    entry: 'functions/delete-webhook-endpoint.ts',
    auth: 'apiKey',
    // The endpoint deleted, the owner's count lowered and the audit entry, in one transaction.
    access: { table: ['GetItem', 'TransactWriteItems', 'DeleteItem', 'UpdateItem', 'PutItem'] },
  },
  {
    name: 'RotateWebhookEndpointSecret',
    method: 'POST',
    path: '/v1/webhook_endpoints/{id}/rotate_secret',
    entry: 'functions/rotate-webhook-endpoint-secret.ts',
    auth: 'apiKey',
    request: { body: RotateWebhookEndpointSecretBody },
    access: idempotent({
      table: ['GetItem', 'TransactWriteItems', 'UpdateItem', 'PutItem'],
      key: ENDPOINT_SECRET_ENCRYPT,
    }),
  },
  {
    name: 'RecoverWebhookEndpoint',
    method: 'POST',
    path: '/v1/webhook_endpoints/{id}/recover',
    entry: 'functions/recover-webhook-endpoint.ts',
    auth: 'apiKey',
    request: { body: RecoverWebhookEndpointBody },
    // The endpoint's failed deliveries (GSI7) from `since`, read (BatchGetItem), each message sent to the
    // delivery queue and each delivery made pending again; the audit entry.
    access: idempotent({
      table: ['GetItem', 'BatchGetItem', 'UpdateItem', 'PutItem'],
      indexes: ['resourceLists'],
      queues: { delivery: ['SendMessage'] },
    }),
  },
  {
    name: 'OrdersWebhook',
    method: 'POST',
    path: '/v1/orders/webhook',
    entry: 'functions/orders-webhook.ts',
    auth: 'webhook',
    access: {
      // Query: the reseller's vendor tags (its partition). BatchGetItem: a redelivery reads the
      // order's jobs, to write any a crash left unwritten (shared/order-flow/receiving.ts). UpdateItem
      // and TransactWriteItems: `orders/cancelled` moves the order's jobs, with their audit entries.
      table: ['Query', 'GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'TransactWriteItems'],
      // The stores of the shop domain, with their webhook secrets; a supplier's cancelled order's job.
      indexes: ['lookups'],
      key: { actions: ['Decrypt'], fields: ['webhookSecret'] },
      queues: { sync: ['SendMessage'] },
    },
  },
  {
    name: 'FulfillmentsWebhook',
    method: 'POST',
    path: '/v1/fulfillments/webhook',
    entry: 'functions/fulfillments-webhook.ts',
    auth: 'webhook',
    access: {
      // UpdateItem: the fulfillment's state on the job. PutItem: a kept fulfillment (its recheck goes
      // on the fulfillment queue).
      // Query: the order's lines, for a new parcel (readsOrderBody).
      table: ['GetItem', 'PutItem', 'UpdateItem', 'Query'],
      // The shop's stores, and the job by supplier order.
      indexes: ['lookups'],
      key: { actions: ['Decrypt'], fields: ['webhookSecret'] },
      queues: { fulfillment: ['SendMessage'] },
    },
  },
  {
    name: 'AppWebhook',
    method: 'POST',
    path: '/v1/app/webhook',
    entry: 'functions/app-webhook.ts',
    auth: 'webhook',
    access: {
      // GetItem: a store's replaced webhook secret. UpdateItem: `app/uninstalled` disconnects the
      // shop's stores. PutItem: a delivery kept for the app-webhook queue (shared/app-webhooks/topics.ts).
      table: ['GetItem', 'UpdateItem', 'PutItem'],
      // The stores of the shop domain, reseller and source, with their webhook secrets.
      indexes: ['lookups'],
      key: { actions: ['Decrypt'], fields: ['webhookSecret'] },
      queues: { app: ['SendMessage'] },
    },
  },
];

export const routes: RouteSpec[] = ROUTES.map(withRateWindow);

/**
 * The HTTP API's `$default` route: every request no route above matches (an unknown path, or a
 * known path with another method) gets the contract's 404 `resource_missing` with its request id,
 * never API Gateway's own `{"message":"Not Found"}`. Locally the front invokes the same handler.
 */
export const fallbackRoute = {
  name: 'NotFound',
  entry: 'functions/not-found.ts',
  access: {} satisfies Access,
};

/**
 * The operator console's files (functions/console.ts): `GET /console` and `GET /console/{file+}`,
 * without the authorizer. They hold no data: the page calls the API with the key its user pastes.
 */
export const consoleRoute = {
  name: 'Console',
  entry: 'functions/console.ts',
  paths: ['/console', '/console/{file+}'],
  access: {} satisfies Access,
};

/** The bearer-key authorizer in front of every `apiKey` route. */
export const authorizer = {
  name: 'Authorizer',
  entry: 'functions/authorizer.ts',
  access: { table: ['GetItem'] } satisfies Access,
};

/**
 * After an outage a DLQ's whole backlog arrives at once; each dead letter may look its order up on the
 * supplier. Two at a time drain it in order, without competing with the API and the workers for the
 * account's concurrency (SQS event sources take 2 at the least).
 */
export const DEAD_LETTER_CONCURRENCY = 2;

/** Five supplier calls of 10 s at most, and 10 s for the rest (lib/routes.ts, SyncWorker). */
export const SYNC_WORKER_TIMEOUT_SECONDS = 60;

export type ScheduleTrigger = { scheduleMinutes: number } | { pollInterval: true };

/**
 * The table's change stream (shared/dynamo/table-definition.ts): batches of writes in order, each shard's
 * next batch only once this one succeeded (the failed records of a batch are handed over again).
 */
export interface StreamTrigger {
  stream: 'table';
  batchSize: number;
}

/**
 * Invoked asynchronously by another function (its `access.invokes`): Lambda's own queue of events, no
 * event source and so no idle cost. `reservedConcurrency` bounds its environments (throttled events
 * wait in Lambda's queue); an event whose function threw is tried `retryAttempts` more times, and one
 * still failing, or older than `maxEventAgeSeconds`, goes to `onFailure` (its invocation record).
 */
export interface InvokedTrigger {
  invoked: { reservedConcurrency: number; retryAttempts: number; maxEventAgeSeconds: number; onFailure: QueueName };
}

/** Whether a consumer runs on a schedule (as opposed to a queue's messages or the change stream). */
export const isScheduled = (trigger: ConsumerSpec['trigger']): trigger is ScheduleTrigger =>
  'scheduleMinutes' in trigger || 'pollInterval' in trigger;

/** A schedule's period, in minutes, in a deployment of this poll interval. */
export const scheduleMinutes = (trigger: ScheduleTrigger, config: { pollIntervalSeconds: number }) =>
  'pollInterval' in trigger ? config.pollIntervalSeconds / 60 : trigger.scheduleMinutes;

export const consumers: ConsumerSpec[] = [
  {
    name: 'SyncWorker',
    entry: 'functions/sync-worker.ts',
    trigger: { queue: 'sync', batchSize: 10, maxConcurrency: 10 },
    // A record may make up to five supplier calls of up to 10 s each (PLATFORM_TIMEOUT_MS), the batch's
    // records side by side: 50 s of calls, plus the reads, writes and a cold start. A timed-out batch
    // skips every record's backoff, so the timeout covers the worst record (docs/design.md, "Margins").
    timeoutSeconds: SYNC_WORKER_TIMEOUT_SECONDS,
    access: {
      // Query (the kept fulfillments' partition), DeleteItem and the fulfillment queue: a completed
      // job releases the fulfillments kept for its supplier order (shared/order-flow/propagating.ts).
      // BatchGetItem and PutItem: the first job of an order written in chunks writes any job a crash
      // left unwritten (shared/order-flow/receiving.ts completeOrderJobs).
      table: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'TransactWriteItems', 'Query', 'DeleteItem'],
      // Both secrets: a custom platform's orders are signed with the webhook secret.
      key: CALLS_STORES,
      // SendMessage: a throttled job is deferred in a fresh, delayed message. ChangeMessageVisibility:
      // a failed attempt's message comes back after a growing backoff (docs/design.md).
      queues: { sync: ['SendMessage', 'ChangeMessageVisibility'], fulfillment: ['SendMessage'] },
    },
  },
  {
    name: 'SyncDeadLetter',
    entry: 'functions/sync-dead-letter.ts',
    trigger: { queue: 'syncDlq', batchSize: 10, maxConcurrency: DEAD_LETTER_CONCURRENCY },
    timeoutSeconds: 30,
    access: {
      // TransactWriteItems: the job ends dead, with its audit entry. Or the supplier has the order
      // (a lookup, with the source store's secrets): UpdateItem completes the job, and Query,
      // DeleteItem and the fulfillment queue release the fulfillments kept for its supplier order.
      table: ['GetItem', 'TransactWriteItems', 'UpdateItem', 'Query', 'DeleteItem'],
      key: CALLS_STORES,
      queues: { fulfillment: ['SendMessage'] },
    },
  },
  {
    name: 'SyncReconciler',
    entry: 'functions/sync-reconciler.ts',
    trigger: { scheduleMinutes: 5 },
    // A run reads until RECONCILE_MARGIN_MS (15 s) before its end, then keeps its place in the pass:
    // 105 s of reading a run, and never two runs of the schedule at once.
    timeoutSeconds: 120,
    // The work in flight (GSI3) and its jobs; UpdateItem: a re-send, or a job found placed on the
    // supplier (GetItem and the secrets: the source store, for the lookup); TransactWriteItems: a job
    // ended as dead, with its audit entry. Query, DeleteItem and the fulfillment queue: kept
    // fulfillments released, and propagations re-sent. GetItem and PutItem: the pass item (its place).
    access: {
      table: ['BatchGetItem', 'GetItem', 'PutItem', 'UpdateItem', 'TransactWriteItems', 'Query', 'DeleteItem'],
      indexes: ['inFlight'],
      key: CALLS_STORES,
      queues: { sync: ['SendMessage'], fulfillment: ['SendMessage'] },
    },
  },
  {
    name: 'FulfillmentWorker',
    entry: 'functions/fulfillment-worker.ts',
    trigger: { queue: 'fulfillment', batchSize: 10, maxConcurrency: 5 },
    timeoutSeconds: 30,
    // SendMessage: a throttled fulfillment is deferred in a fresh, delayed message. The lookups index
    // and DeleteItem: the delayed recheck of a kept fulfillment (job by supplier order, then release).
    access: {
      // Query: the order's lines (readsOrderBody).
      table: ['GetItem', 'UpdateItem', 'DeleteItem', 'Query'],
      indexes: ['lookups'],
      key: CALLS_STORES,
      queues: { fulfillment: ['SendMessage'] },
    },
  },
  {
    name: 'FulfillmentDeadLetter',
    entry: 'functions/fulfillment-dead-letter.ts',
    trigger: { queue: 'fulfillmentDlq', batchSize: 10, maxConcurrency: DEAD_LETTER_CONCURRENCY },
    timeoutSeconds: 30,
    // SendMessage: a message whose receives ran out goes back on the work queue, 15 minutes later.
    access: { table: ['GetItem', 'UpdateItem'], queues: { fulfillment: ['SendMessage'] } },
  },
  {
    name: 'EventDeliveryWorker',
    entry: 'functions/event-delivery-worker.ts',
    // A delivery is one message, and the batch's records run side by side (Powertools' BatchProcessor),
    // each record's outcome its own (ReportBatchItemFailures). No batch waits on a receiver longer than
    // DELIVERY_PROMPT_MS (2 s): only an endpoint known to answer promptly is POSTed here; any other try,
    // and a prompt one unanswered at 2 s, is handed to EventDeliverySlowTry (shared/events/README.md,
    // "Integrators isolated"). Batch size 1 would pay an invocation per delivery.
    trigger: { queue: 'delivery', batchSize: 10, maxConcurrency: 10 },
    // 2 s of POST at most per record, the records side by side, plus the reads, the writes and a cold start.
    timeoutSeconds: 30,
    // The delivery, its event, its endpoint; the try's outcome (a first try delivered: the delivery
    // alone; otherwise the delivery and the event's failing list in one transaction; the endpoint's
    // failing state and slow mark). The next try goes as a fresh delayed message; a try that could hang
    // is handed to the slow try by an asynchronous invoke (ids only).
    access: {
      table: ['GetItem', 'UpdateItem', 'TransactWriteItems'],
      key: { actions: ['Decrypt'], fields: ['endpointSecret'] },
      queues: { delivery: ['SendMessage'] },
      invokes: ['EventDeliverySlowTry'],
    },
  },
  {
    name: 'EventDeliverySlowTry',
    entry: 'functions/event-delivery-slow-try.ts',
    // One try of an endpoint not known to answer promptly, handed over by EventDeliveryWorker: under one
    // of its endpoint's 4 leases, with §14's 15 s. 40 environments at most (a hanging receiver holds 4 of
    // them 15 s; a try that finds no lease ends at once). A throw (the service's own error) is tried twice
    // more by Lambda, then set in the delivery DLQ, whose backlog alarm pages.
    trigger: {
      invoked: { reservedConcurrency: 40, retryAttempts: 2, maxEventAgeSeconds: 3600, onFailure: 'deliveryDlq' },
    },
    // 15 s of POST, the lease's and the outcome's writes, a cold start.
    timeoutSeconds: 30,
    // As the worker's, plus the endpoint's leases item (taken and given back) and its prompt mark; the
    // on-failure destination's SendMessage on the delivery DLQ (Lambda sends it with the function's role).
    access: {
      table: ['GetItem', 'UpdateItem', 'TransactWriteItems'],
      key: { actions: ['Decrypt'], fields: ['endpointSecret'] },
      queues: { delivery: ['SendMessage'], deliveryDlq: ['SendMessage'] },
    },
  },
  {
    name: 'EventRecorder',
    entry: 'functions/event-recorder.ts',
    // The change stream (shared/events/README.md, "Events and webhook endpoints"): each write that reports a change
    // becomes its event. 100 records a batch: most writes report nothing, and a burst shares invocations.
    trigger: { stream: 'table', batchSize: 100 },
    // A batch's events, each a Put and its deliveries' schedule, plus the objects' reads and a cold start.
    timeoutSeconds: 60,
    // PutItem: the event (conditional: a record handed over again writes nothing), then each of its
    // deliveries (conditional). GetItem: an order's body (a job's lines), a cursor's event. Query: the
    // owner's endpoints (kept 10 s). UpdateItem: the event's `endpointIds` (conditional, before its
    // deliveries); their messages on the delivery queue.
    access: {
      table: ['GetItem', 'BatchGetItem', 'PutItem', 'Query', 'UpdateItem'],
      queues: { delivery: ['SendMessage'] },
    },
  },
  {
    name: 'AppWebhookWorker',
    entry: 'functions/app-webhook-worker.ts',
    // The app webhooks handled durably (shared/app-webhooks/topics.ts, `queued`): few, and each its own.
    trigger: { queue: 'app', batchSize: 10, maxConcurrency: 2 },
    timeoutSeconds: 60,
    // The kept delivery (read, then deleted once handled); what its topic's handler writes. The
    // compliance topics (CONTRACT.md §13): an order's partition (Query) and its jobs (BatchGetItem),
    // erased (UpdateItem; PutItem and DeleteItem: its body's parts); a shop's orders (GSI7); the audit
    // entry and the data request (PutItem); a source store's soft delete with its tag (TransactWriteItems).
    access: {
      table: ['GetItem', 'DeleteItem', 'UpdateItem', 'Query', 'BatchGetItem', 'PutItem', 'TransactWriteItems'],
      indexes: ['resourceLists'],
    },
  },
  {
    name: 'LateSweep',
    entry: 'functions/late-sweep.ts',
    // Every 15 minutes (CONTRACT.md §16.2): the jobs due in the hours since the last run (GSI5's due
    // hours), read (BatchGetItem, an order body's parts by Query) and settled (UpdateItem); its mark.
    trigger: { scheduleMinutes: 15 },
    timeoutSeconds: 300,
    access: { table: ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem'], indexes: ['stateLists'] },
  },
  {
    name: 'RetentionSweep',
    entry: 'functions/retention-sweep.ts',
    // Daily (CONTRACT.md §13): the personal data of orders ended PERSONAL_DATA_RETENTION_DAYS ago, erased.
    trigger: { scheduleMinutes: 1440 },
    timeoutSeconds: 900,
    // The API keys' owners (GSI1 `APIKEYS`, their items), each owner's jobs (GSI1) from its marks
    // (GetItem, PutItem); an order's partition (Query) and jobs (BatchGetItem), erased (UpdateItem;
    // PutItem and DeleteItem: a body's parts). The owner's reseller stores (GSI1) and each store's
    // orders with unrouted items (GSI7), for the orders that have no job.
    access: {
      table: ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'],
      indexes: ['lists', 'resourceLists'],
    },
  },
  {
    name: 'PollScheduler',
    entry: 'functions/poll-scheduler.ts',
    // Every poll interval (CONTRACT.md §10.7): `-c pollIntervalSeconds` on AWS, POLL_INTERVAL_SECONDS locally.
    trigger: { pollInterval: true },
    timeoutSeconds: 300,
    // The active stores' keys (GSI5, keys only), and a message per store on the poll queue.
    access: { indexes: ['stateLists'], queues: { poll: ['SendMessage'] } },
  },
  {
    name: 'StorePoller',
    entry: 'functions/store-poller.ts',
    // Ten stores an invocation, two environments (SQS's least): 10,000 stores spread over ten minutes are
    // ~17 polls a second, and two warm environments keep every store's decrypted token (docs/performance.md).
    trigger: { queue: 'poll', batchSize: 10, maxConcurrency: 2 },
    timeoutSeconds: 120,
    // Each changed order takes its webhook's path: what the orders and fulfillments webhooks do
    // (their tables, indexes and queues), plus the store's watermark (UpdateItem on the store item).
    // Both secrets: a custom shop's reads are signed with its webhook secret.
    access: {
      table: ['Query', 'GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'TransactWriteItems'],
      indexes: ['lookups'],
      key: CALLS_STORES,
      queues: { sync: ['SendMessage'], fulfillment: ['SendMessage'] },
      // Each poll keeps the store's webhook subscriptions (CONTRACT.md §12.1).
      publicUrl: true,
    },
  },
];
