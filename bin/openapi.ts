import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type * as v from 'valibot';
import { isRateLimited } from '../lib/environment.js';
import { type RouteSpec, routes } from '../lib/routes.js';
import { AppWebhookPayload, appTopicNames } from '../shared/app-webhooks/topics.js';
import { EVENT_TYPES } from '../shared/entities/event.js';
import { FulfillmentEventPayload, FulfillmentPayload } from '../shared/order-flow/propagating-intake.js';
import { OrderPayload } from '../shared/order-flow/receiving-payload.js';
import { buildClientTypes } from './openapi/client-types.js';
import { errorStatuses, headers, listOf, ref, responseSchemas } from './openapi/components.js';
import { convert, requestComponents } from './openapi/convert.js';

/**
 * The OpenAPI 3.1 document, generated from the route table (lib/routes.ts) and the valibot schemas
 * its routes name, the ones the handlers parse with: `npm run openapi` writes docs/openapi.json and
 * the typed client's types (client/schema.d.ts). Everything per route is derived from its entry in lib/routes.ts, so a
 * new route appears by itself, or fails the generation when its resource has no response shape.
 */

/** What each route reads, by operation id: the schemas its entry in lib/routes.ts names. */
export const requests: Record<string, NonNullable<RouteSpec['request']>> = Object.fromEntries(
  routes.map((route) => [route.name, route.request ?? {}]),
);

/** The platform topics behind the webhook routes (CONTRACT.md §5, §10), the create topic first (the default). */
export const webhookTopics: Record<
  string,
  { topics: string[]; payload: v.GenericSchema; receipt: string; payloadOf?: Record<string, v.GenericSchema> }
> = {
  OrdersWebhook: {
    topics: ['orders/create', 'orders/cancelled', 'orders/updated'],
    payload: OrderPayload,
    receipt: 'order_webhook_receipt',
  },
  FulfillmentsWebhook: {
    topics: ['fulfillments/create', 'fulfillments/update', 'fulfillment_events/create'],
    payload: FulfillmentPayload,
    receipt: 'fulfillment_webhook_receipt',
    // CONTRACT.md §16.2: a carrier's event on a parcel has its own payload.
    payloadOf: { 'fulfillment_events/create': FulfillmentEventPayload },
  },
  AppWebhook: { topics: appTopicNames(), payload: AppWebhookPayload, receipt: 'app_webhook_receipt' },
};

const topicList = (topics: string[]) => topics.map((topic) => `\`${topic}\``).join(' and ');

/** A path's collection segment → the object its routes answer with. */
const resources: Record<string, string> = {
  reseller_stores: 'reseller_store',
  source_stores: 'source_store',
  orders: 'order',
  sync_jobs: 'sync_job',
  attempts: 'sync_job_attempt',
  audit_log: 'audit_log_entry',
  events: 'event',
  webhook_endpoints: 'webhook_endpoint',
  data_requests: 'data_request',
};

/** Actions whose answer is not the object they act on. */
const actionAnswers: Record<string, string> = {
  RecoverWebhookEndpoint: 'webhook_endpoint_recovery',
  GetSourceStoreScorecard: 'scorecard',
};

/** Routes whose DELETE removes the object (the others soft-delete it). */
const hardDeletes = ['DeleteWebhookEndpoint'];

/** Errors a route answers beyond those its shape implies (CONTRACT.md §3). */
const routeErrors: Record<string, Record<number, string[]>> = {
  CreateSourceStore: { 409: ['vendor_tag_conflict'] },
  UpdateSourceStore: { 409: ['vendor_tag_conflict'] },
  RetrySyncJob: { 400: ['sync_job_not_retryable'] },
  HoldSyncJob: { 409: ['invalid_state'] },
  ReleaseSyncJob: { 409: ['invalid_state'] },
  CreateWebhookEndpoint: { 400: ['webhook_endpoint_limit_reached'] },
};

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const headerRef = (name: keyof typeof headers) => ({ $ref: `#/components/headers/${name}` });

/** CONTRACT.md §9: every POST and PATCH of the API, not the webhooks (they have their own dedup). */
const isIdempotent = (route: RouteSpec) => route.auth === 'apiKey' && ['POST', 'PATCH'].includes(route.method);

const segmentsOf = (route: RouteSpec) => route.path.split('/').filter(Boolean);

const resourceOf = (route: RouteSpec) => {
  const collection = segmentsOf(route)
    .filter((segment) => segment in resources)
    .at(-1);
  if (!collection) throw new Error(`${route.name}: no response shape for ${route.path} (bin/openapi.ts, resources)`);
  return resources[collection];
};

/** The success response of a route, from its method and path: collection, item or action. */
const successOf = (route: RouteSpec): [number, string, unknown] => {
  const webhook = webhookTopics[route.name];
  if (route.auth === 'webhook') {
    if (!webhook) throw new Error(`${route.name}: webhook route without its topic (bin/openapi.ts, webhookTopics)`);
    return [200, 'Accepted.', ref(webhook.receipt)];
  }
  const last = segmentsOf(route).at(-1) as string;
  const resource = resourceOf(route);
  const onCollection = last in resources;
  const onItem = last.startsWith('{');
  if (route.method === 'DELETE')
    return [
      204,
      hardDeletes.includes(route.name) ? 'Deleted.' : 'Deleted (a soft delete: the object stays readable).',
      undefined,
    ];
  if (route.name in actionAnswers) return [200, 'Done.', ref(actionAnswers[route.name])];
  if (route.method === 'GET' && onCollection) return [200, 'A page, newest first.', ref(`${resource}_list`)];
  if (route.method === 'POST' && onCollection) return [201, 'Created.', ref(resource)];
  if (route.method === 'GET' || route.method === 'PATCH' || !onItem) return [200, 'The object.', ref(resource)];
  throw new Error(`${route.name}: cannot tell the success response of ${route.method} ${route.path}`);
};

/** Each error status a route may answer, with the codes it carries there. */
const errorsOf = (route: RouteSpec) => {
  const request = requests[route.name] ?? {};
  const codes: Record<number, string[]> = { 500: ['internal_error'] };
  const add = (status: number, ...list: string[]) => {
    codes[status] = [...new Set([...(codes[status] ?? []), ...list])];
  };
  if (route.auth === 'webhook') {
    add(400, 'validation_failed');
    add(401, 'invalid_signature');
    add(413, 'payload_too_large');
    add(415, 'unsupported_media_type');
  } else add(401, 'unauthorized');
  if (request.body) {
    add(400, 'validation_failed');
    add(413, 'payload_too_large');
    add(415, 'unsupported_media_type');
  }
  if (request.query) add(400, 'validation_failed', 'invalid_cursor');
  if (route.path.includes('{')) add(404, 'resource_missing');
  if (isIdempotent(route)) {
    // validation_failed: an Idempotency-Key that is not 1-255 printable ASCII characters.
    add(400, 'validation_failed', 'idempotency_key_reused');
    add(409, 'idempotency_key_in_progress');
  }
  // A change counts against its key's rate (shared/http/handler.ts).
  if (isRateLimited({ route })) add(429, 'rate_limited');
  for (const [status, list] of Object.entries(routeErrors[route.name] ?? {})) add(Number(status), ...list);
  return codes;
};

const responseHeaders = (route: RouteSpec) => ({
  'Request-Id': headerRef('Request-Id'),
  // A replay answers the first request's status, errors included (except 5xx and validation_failed).
  ...(isIdempotent(route) ? { 'Idempotent-Replayed': headerRef('Idempotent-Replayed') } : {}),
});

const responsesOf = (route: RouteSpec) => {
  const [status, description, schema] = successOf(route);
  const responses: Record<string, unknown> = {
    [status]: { description, headers: responseHeaders(route), ...(schema ? json(schema) : {}) },
  };
  for (const [code, list] of Object.entries(errorsOf(route)))
    responses[code] = {
      description: `${errorStatuses[Number(code)]}: ${list.map((c) => `\`${c}\``).join(', ')}.`,
      headers: {
        ...responseHeaders(route),
        ...(code === '429' ? { 'Retry-After': headerRef('Retry-After') } : {}),
      },
      ...json(ref('error')),
    };
  return responses;
};

const parameterRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });

const queryParameters = (schema: v.GenericSchema) => {
  const converted = convert(schema) as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(converted.properties ?? {}).map(([name, value]) => ({
    name,
    in: 'query',
    required: converted.required?.includes(name) ?? false,
    schema: value,
  }));
};

const pathParameters = (route: RouteSpec) =>
  [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));

/** The signature header as each platform spells it (header names are case-insensitive). */
const hmacHeader = (spelling: string) => (spelling === 'Shopify' ? 'X-Shopify-Hmac-Sha256' : 'X-Platform-Hmac-SHA256');

/** Each delivery header under both spellings (CONTRACT.md §5): the platform's and Shopify's. */
const webhookParameters = (topics: string[]) =>
  ['Platform', 'Shopify'].flatMap((spelling) => [
    parameterRef(hmacHeader(spelling)),
    parameterRef(`X-${spelling}-Shop-Domain`),
    {
      name: `X-${spelling}-Topic`,
      in: 'header',
      required: false,
      description:
        `When present it must name a topic of this endpoint (${topicList(topics)}; absent: ` +
        `\`${topics[0]}\`), else 400 \`validation_failed\`. Either spelling; both with different values: 400.`,
      schema: { enum: topics },
    },
    parameterRef(`X-${spelling}-Webhook-Id`),
  ]);

const EITHER =
  'Either spelling is taken (`X-Platform-…` or Shopify’s `X-Shopify-…`), one of the two is required; both sent ' +
  'with different values: 401 `invalid_signature`.';

const TAGS = [
  { name: 'Reseller stores', description: 'The merchant shops that sell, and send their orders here.' },
  { name: 'Source stores', description: 'The supplier shops a reseller store routes its line items to.' },
  { name: 'Orders', description: 'A reseller store’s orders as the service saw them, and what of them went nowhere.' },
  { name: 'Sync jobs', description: 'One order’s items for one supplier, and the placing of that supplier order.' },
  { name: 'Audit log', description: 'What was done to sync jobs, by whom: retries, and jobs that went dead.' },
  { name: 'Webhooks', description: 'What the platforms send: orders, and the suppliers’ fulfillments.' },
  { name: 'Events', description: 'What happened to jobs, parcels, orders and stores, kept 30 days (CONTRACT.md §14).' },
  {
    name: 'Webhook endpoints',
    description: 'Where events are delivered, signed per Standard Webhooks 1.0 (CONTRACT.md §14).',
  },
] as const;
type Tag = (typeof TAGS)[number]['name'];

/** What linters and integrators read first: each operation's summary, description and tag. */
const OPERATIONS: Record<string, { summary: string; description: string; tag: Tag }> = {
  ListEvents: {
    summary: 'List events',
    description:
      'The caller’s events of the last 30 days, newest first: `type` (one type, or a group such as ' +
      '`sync_job.*`), `created_gte`, `created_lt`, and `delivery_success=false` for the events a delivery of ' +
      'which has failed and not succeeded since.',
    tag: 'Events',
  },
  GetEvent: {
    summary: 'Retrieve an event',
    description: 'One event of the caller, with where its delivery to each endpoint stands.',
    tag: 'Events',
  },
  CreateWebhookEndpoint: {
    summary: 'Create a webhook endpoint',
    description:
      'Events of the types in `enabledEvents` are delivered to `url` from now on. The answer carries the signing ' +
      '`secret`, shown this once. At most 16 endpoints per owner.',
    tag: 'Webhook endpoints',
  },
  ListWebhookEndpoints: {
    summary: 'List webhook endpoints',
    description: 'The caller’s webhook endpoints, newest first.',
    tag: 'Webhook endpoints',
  },
  GetWebhookEndpoint: {
    summary: 'Retrieve a webhook endpoint',
    description: 'One webhook endpoint of the caller (never its secret).',
    tag: 'Webhook endpoints',
  },
  UpdateWebhookEndpoint: {
    summary: 'Update a webhook endpoint',
    description: 'Its `url`, `enabledEvents`, `description`, or `status` (enabling one clears `disabledReason`).',
    tag: 'Webhook endpoints',
  },
  DeleteWebhookEndpoint: {
    summary: 'Delete a webhook endpoint',
    description: 'Nothing more is delivered to it.',
    tag: 'Webhook endpoints',
  },
  RotateWebhookEndpointSecret: {
    summary: 'Rotate a webhook endpoint’s secret',
    description:
      'A new signing secret, shown in this answer only; the old one signs beside it for 24 hours, so ' +
      'deliveries carry two signatures meanwhile.',
    tag: 'Webhook endpoints',
  },
  RecoverWebhookEndpoint: {
    summary: 'Resend failed deliveries',
    description: 'Each event since `since` whose delivery to this endpoint `failed` is sent again.',
    tag: 'Webhook endpoints',
  },
  CreateResellerStore: {
    summary: 'Create a reseller store',
    description: 'Registers a merchant shop that sells; its secrets are encrypted and never returned.',
    tag: 'Reseller stores',
  },
  ListResellerStores: {
    summary: 'List reseller stores',
    description: 'The active reseller stores of the caller, newest first.',
    tag: 'Reseller stores',
  },
  GetResellerStore: {
    summary: 'Retrieve a reseller store',
    description: 'One reseller store of the caller; a deleted one comes with `deletedAt`.',
    tag: 'Reseller stores',
  },
  UpdateResellerStore: {
    summary: 'Update a reseller store',
    description: 'Renames a reseller store (SPEC 4.2: `name` only).',
    tag: 'Reseller stores',
  },
  DeleteResellerStore: {
    summary: 'Delete a reseller store',
    description: 'Soft delete: its orders are no longer routed; what is under way goes on.',
    tag: 'Reseller stores',
  },
  CreateSourceStore: {
    summary: 'Create a source store',
    description: 'A supplier of the reseller store: the line items whose `vendor` equals its `vendorTag` go to it.',
    tag: 'Source stores',
  },
  ListSourceStores: {
    summary: 'List source stores',
    description: 'The active source stores of a reseller store, newest first.',
    tag: 'Source stores',
  },
  GetSourceStore: {
    summary: 'Retrieve a source store',
    description: 'One source store; a deleted one comes with `deletedAt`.',
    tag: 'Source stores',
  },
  GetSourceStoreScorecard: {
    summary: 'Retrieve a source store’s scorecard',
    description:
      'How the supplier kept its promise over the jobs due from `from` to `to` (its zone; default the 30 days ' +
      'up to today; at most 366): on-time, late and cancellation rates, hours to tracking (CONTRACT.md §16.3).',
    tag: 'Source stores',
  },
  UpdateSourceStore: {
    summary: 'Update a source store',
    description:
      'Changes `name`, `vendorTag` (409 `vendor_tag_conflict` when another active store holds it), or `pricingMode` ' +
      'with its `pricingConfig`. Jobs placed afterwards use the new values; placed jobs keep theirs.',
    tag: 'Source stores',
  },
  RotateSourceStoreCredentials: {
    summary: 'Rotate a source store’s credentials',
    description:
      'A new `accessToken` and/or `webhookSecret`. The replaced webhook secret keeps verifying for 24 hours; ' +
      'audited as `source_store.credentials_rotated`; no secret is ever returned.',
    tag: 'Source stores',
  },
  RotateResellerStoreCredentials: {
    summary: 'Rotate a reseller store’s credentials',
    description:
      'A new `accessToken` and/or `webhookSecret`. The replaced webhook secret keeps verifying for 24 hours; ' +
      'audited as `reseller_store.credentials_rotated`; no secret is ever returned.',
    tag: 'Reseller stores',
  },
  DeleteSourceStore: {
    summary: 'Delete a source store',
    description: 'Soft delete: its vendor tag is free again; jobs already accepted are still placed.',
    tag: 'Source stores',
  },
  ListOrders: {
    summary: 'List a reseller store’s orders',
    description:
      'The orders the service received for the store, newest first (CONTRACT.md §10.8); `unrouted=true`: only ' +
      'those with items that went to no supplier, a merchant’s list of suppliers to add. The cursor ' +
      '`starting_after` is an order’s `externalOrderId`.',
    tag: 'Orders',
  },
  GetDataRequest: {
    summary: 'Retrieve a shopper’s data request',
    description:
      'What a platform’s `customers/data_request` asked of the reseller store, and which personal fields the ' +
      'service keeps of each order it named (names, never values); readable for 30 days (CONTRACT.md §13).',
    tag: 'Orders',
  },
  GetOrder: {
    summary: 'Retrieve an order',
    description:
      'One order as the service saw it: how it arrived, its sync jobs, and its items that went to no supplier ' +
      'with why. `externalOrderId` is the reseller platform’s order id, URL-encoded.',
    tag: 'Orders',
  },
  ListSyncJobs: {
    summary: 'List sync jobs',
    description:
      'The caller’s sync jobs, newest first, filtered by `status`, `reseller_store_id`, `held` ' +
      '(`held=true`: the jobs a hold keeps from their supplier, CONTRACT.md §11) and `credit_due` ' +
      '(`credit_due=true`: the jobs whose closed returns are worth more than the supplier refunded, §15.3).',
    tag: 'Sync jobs',
  },
  GetSyncJob: {
    summary: 'Retrieve a sync job',
    description: 'One sync job, with its supplier order and the fulfillments carried back.',
    tag: 'Sync jobs',
  },
  ListSyncJobAttempts: {
    summary: 'List a sync job’s attempts',
    description: 'The attempt history of a job, newest first (CONTRACT.md §6).',
    tag: 'Sync jobs',
  },
  RetrySyncJob: {
    summary: 'Retry a sync job',
    description: 'Sends a `failed` or `dead` job again, with a fresh throttling budget; audited.',
    tag: 'Sync jobs',
  },
  HoldSyncJob: {
    summary: 'Hold a sync job',
    description:
      'Holds a `pending` job (`manual`, CONTRACT.md §11): it goes to no supplier until released or cancelled. ' +
      'The body is optional; its `note` is kept in the `sync_job.held` audit entry. 409 `invalid_state` for a job ' +
      'that is not `pending`.',
    tag: 'Sync jobs',
  },
  ReleaseSyncJob: {
    summary: 'Release a held sync job',
    description:
      'Ends every hold of a held job (`delay`, `payment`, `risk`, `test_order` and `manual` alike) and sends it ' +
      'to its supplier at once; audited as `sync_job.released` with the reasons ended. 409 `invalid_state` when ' +
      'the job is not held.',
    tag: 'Sync jobs',
  },
  ListAuditLog: {
    summary: 'List audit log entries',
    description: 'Retries and deaths of sync jobs, newest first, filtered by action, resource and store.',
    tag: 'Audit log',
  },
  OrdersWebhook: {
    summary: 'Receive an order webhook',
    description:
      'The reseller platform’s `orders/create`; `orders/cancelled` from the reseller’s shop or a supplier’s ' +
      '(CONTRACT.md §10.4–10.5); `orders/updated` (§10.6). The answer lists the order’s sync jobs.',
    tag: 'Webhooks',
  },
  FulfillmentsWebhook: {
    summary: 'Receive a fulfillment webhook',
    description:
      'A supplier platform’s `fulfillments/create` (a parcel, with the line items it ships) and ' +
      '`fulfillments/update` (new tracking, or `status: cancelled`), CONTRACT.md §10.2–10.3.',
    tag: 'Webhooks',
  },
  AppWebhook: {
    summary: 'Receive an app webhook',
    description:
      'The platform’s `app/uninstalled` (the shop’s stores become `uninstalled` and are no longer called, ' +
      'CONTRACT.md §12.2) and the compliance topics (§13), verified against the shop’s reseller and source ' +
      'stores. A topic the service does not handle is answered 200 and ignored.',
    tag: 'Webhooks',
  },
};

const docsOf = (route: RouteSpec) => {
  const docs = OPERATIONS[route.name];
  if (!docs) throw new Error(`bin/openapi.ts: the route ${route.name} has no summary, description and tag`);
  return docs;
};

const operationOf = (route: RouteSpec) => {
  const request = requests[route.name] ?? {};
  const webhook = webhookTopics[route.name];
  const body = webhook?.payload ?? request.body;
  const docs = docsOf(route);
  return {
    operationId: route.name,
    summary: docs.summary,
    description: docs.description,
    tags: [docs.tag],
    ...(webhook
      ? {
          summary: `The platform's ${topicList(webhook.topics)} webhook${webhook.topics.length > 1 ? 's' : ''}`,
          description:
            `${docs.description} Signed by the platform with the store's \`webhookSecret\`; no bearer key. ` +
            'Verified on the raw bytes before any parsing (CONTRACT.md §5).',
          security: [],
        }
      : {}),
    parameters: [
      ...pathParameters(route),
      ...(request.query ? queryParameters(request.query) : []),
      ...(webhook ? webhookParameters(webhook.topics) : []),
      ...(isIdempotent(route) ? [parameterRef('Idempotency-Key')] : []),
    ],
    ...(body ? { requestBody: { required: true, ...json(convert(body)) } } : {}),
    responses: responsesOf(route),
  };
};

/** Schemas no operation reaches are left out, so the document describes only what is served. */
const reachable = (document: unknown, schemas: Record<string, unknown>) => {
  const seen = new Set<string>();
  const visit = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object')
      for (const [key, value] of Object.entries(node)) {
        const name = key === '$ref' && typeof value === 'string' && value.match(/^#\/components\/schemas\/(.+)$/)?.[1];
        if (name && !seen.has(name)) {
          seen.add(name);
          visit(schemas[name]);
        } else visit(value);
      }
  };
  visit(document);
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => seen.has(name)));
};

/** The webhooks' headers, in both spellings (`X-Platform-…`, `X-Shopify-…`), as parameters. */
const webhookHeaderParameters = () =>
  Object.fromEntries(
    ['Platform', 'Shopify'].flatMap((spelling) => [
      [
        hmacHeader(spelling),
        {
          name: hmacHeader(spelling),
          in: 'header',
          required: false,
          description: `Base64 HMAC-SHA256 of the raw body bytes with the store's \`webhookSecret\`. ${EITHER}`,
          schema: { type: 'string', contentEncoding: 'base64' },
        },
      ],
      [
        `X-${spelling}-Shop-Domain`,
        {
          name: `X-${spelling}-Shop-Domain`,
          in: 'header',
          required: false,
          description: `The shop that sent the webhook; its stores hold the webhook secret. ${EITHER}`,
          schema: ref('shop_domain'),
        },
      ],
      [
        `X-${spelling}-Webhook-Id`,
        {
          name: `X-${spelling}-Webhook-Id`,
          in: 'header',
          required: false,
          description: "The platform's delivery id; redeliveries are recognised by the order id, not by it.",
          schema: { type: 'string' },
        },
      ],
    ]),
  );

const components = () => {
  const schemas: Record<string, unknown> = { ...requestComponents(), ...responseSchemas };
  for (const resource of Object.values(resources)) schemas[`${resource}_list`] = listOf(resource);
  return {
    securitySchemes: {
      bearer: {
        type: 'http',
        scheme: 'bearer',
        description: 'An API key (`sk_test_…` locally, `sk_live_…` deployed): `npm run keys -- create`.',
      },
    },
    headers,
    parameters: {
      'Idempotency-Key': {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Makes a retried request safe (CONTRACT.md §9): the first request with a key runs, later ones with the ' +
          'same key, method, path and body get its response again with `Idempotent-Replayed: true`. Keys are ' +
          "scoped to the caller's owner and kept 24 hours. Another method, path or body: 400 " +
          '`idempotency_key_reused`; while the first still runs: 409 `idempotency_key_in_progress`.',
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
      },
      ...webhookHeaderParameters(),
    },
    schemas,
  };
};

/** A Standard Webhooks 1.0 header of an event's delivery (CONTRACT.md §14). */
const deliveryHeader = (name: string, description: string, schema: Record<string, unknown>) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema,
});

/**
 * What the service sends to a webhook endpoint: one entry per event type, the signed POST of the event
 * (CONTRACT.md §14), which any Standard Webhooks library verifies with the endpoint's secret.
 */
const eventWebhooks = () =>
  Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          summary: `The \`${type}\` event, sent to your endpoint`,
          description:
            `Sent to each enabled webhook endpoint whose \`enabledEvents\` take \`${type}\` (or \`*\`). ` +
            "Verify the signature with the endpoint's secret (a Standard Webhooks library), answer 2xx within " +
            '15 seconds; anything else is tried again after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h.',
          operationId: `${type.replace(/[._]([a-z])/g, (_, c: string) => c.toUpperCase())}Event`,
          tags: ['Webhook endpoints'],
          security: [],
          parameters: [
            deliveryHeader('webhook-id', 'The event id: the same on every try, your idempotency key', {
              type: 'string',
              pattern: '^evt_',
            }),
            deliveryHeader('webhook-timestamp', 'Unix seconds of this try', { type: 'string', pattern: '^[0-9]+$' }),
            deliveryHeader(
              'webhook-signature',
              '`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the ' +
                "secret's bytes after `whsec_`; two, space-separated, while a rotated secret still signs",
              { type: 'string', pattern: '^v1,' },
            ),
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: { allOf: [ref('delivered_event'), { type: 'object', properties: { type: { const: type } } }] },
              },
            },
          },
          responses: {
            '200': { description: 'Delivered (any 2xx within 15 seconds)' },
            '500': { description: 'Not delivered (as is any answer but 2xx, or none): tried again later' },
          },
        },
      },
    ]),
  );

export const buildOpenApi = () => {
  const paths: Record<string, Record<string, unknown>> = {};
  const webhooks: Record<string, unknown> = {};
  // A catch-all entry (API Gateway's `$default`) is no path a client calls.
  for (const route of routes.filter((r) => r.path.startsWith('/'))) {
    const operation = operationOf(route);
    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = operation;
    const webhook = webhookTopics[route.name];
    // The same delivery, listed by topic: what the platform sends once subscribed to this path.
    for (const topic of webhook?.topics ?? []) {
      const { operationId: _, ...delivery } = operation;
      const name = topic.replace(/[^a-z]+(.)/g, (__, c: string) => c.toUpperCase());
      webhooks[topic] = {
        post: {
          ...delivery,
          summary: `The platform's \`${topic}\` webhook`,
          // Its own id: operation ids are unique across paths and webhooks.
          operationId: `${route.name}${name[0].toUpperCase()}${name.slice(1)}Delivery`,
          description: `Subscribe \`${topic}\` to \`${route.path}\`. ${delivery.description}`,
          ...(webhook?.payloadOf?.[topic]
            ? { requestBody: { required: true, ...json(convert(webhook.payloadOf[topic])) } }
            : {}),
        },
      };
    }
  }
  Object.assign(webhooks, eventWebhooks());
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'Reseller order routing',
      version: '1',
      contact: { name: 'Reseller order routing maintainers' },
      license: { name: 'UNLICENSED: proprietary, all rights reserved', identifier: 'LicenseRef-Proprietary' },
      description:
        'Routes the orders of a reseller store to its supplier ("source") stores and carries tracking back. ' +
        'Stripe-style: bearer keys, JSON, `request_id` in every body and `Request-Id` header, errors as ' +
        '`{"error": {"type", "code", "message", "param"}}`, cursor pagination (`limit`, `starting_after`, newest ' +
        'first), `Idempotency-Key` on every POST and PATCH.',
    },
    servers: [
      { url: 'http://127.0.0.1:3000', description: 'the local service (`npm start`)' },
      {
        url: 'https://{apiId}.execute-api.{region}.amazonaws.com',
        description: 'a deployed stack: its `ApiUrl` output',
        variables: { apiId: { default: 'abcdef1234' }, region: { default: 'us-east-1' } },
      },
    ],
    security: [{ bearer: [] }],
    tags: TAGS.map((tag) => ({ ...tag })),
    paths,
    webhooks,
  };
  const all = components();
  return {
    ...document,
    components: { ...all, schemas: reachable({ document, all: { ...all, schemas: {} } }, all.schemas) },
  };
};

/** Writes both files, or with `--check` only says which of them is out of date (exit 1). */
const main = async (check: boolean) => {
  const document = buildOpenApi();
  const outputs = {
    'docs/openapi.json': `${JSON.stringify(document, null, 2)}\n`,
    'client/schema.d.ts': await buildClientTypes(document),
  };
  for (const [file, text] of Object.entries(outputs)) {
    if (!check) writeFileSync(file, text);
    else if (!existsSync(file) || readFileSync(file, 'utf8') !== text) {
      console.error(`${file} is out of date: run \`npm run openapi\``);
      process.exitCode = 1;
    }
  }
  if (!check) console.log(`wrote ${Object.keys(outputs).join(' and ')}`);
};

// No top-level await: jest loads this module as CommonJS.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  void main(process.argv[2] === '--check');
