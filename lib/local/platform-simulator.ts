/**
 * Local stand-in for the hosting platform's Admin API (PLATFORM-API.md, "The simulator").
 *
 * Serves storeplatform_a (REST), storeplatform_b (Shopify's GraphQL, simulator-shopify.ts) and the
 * custom signed endpoint under `http://127.0.0.1:<port>/<shopDomain>/…`. Every shop's orders live in
 * memory in storeplatform_a's shape (simulator-store.ts): lines with ids and fulfilled quantities,
 * fulfillments with the lines they ship, their tracking and status, `cancelled_at` and `updated_at`.
 *
 * - Placing and shipping: order creates (idempotency keys honoured; storeplatform_b takes none),
 *   fulfillments of the lines named or of everything remaining (422 past what remains or on a
 *   cancelled order), lookups by `source_identifier`.
 * - After the order: cancelling an order (422 once anything shipped), updating its address, email and
 *   note (422 once shipped or cancelled), updating a fulfillment's tracking, cancelling a fulfillment
 *   (its quantities unfulfilled again); on storeplatform_a (REST), storeplatform_b (`orderCancel`,
 *   `orderUpdate`, `fulfillmentTrackingInfoUpdate`, `fulfillmentCancel`) and custom (cancel, PATCH, and the
 *   service's own `POST /reseller/fulfillments/{id}/update_tracking` and `…/cancel`).
 * - Orders changed since a time, oldest change first, a page at a time, filtered by tag (REST
 *   `GET orders.json?updated_at_min=`, the GraphQL `orders` search, custom `GET /reseller/orders`).
 * - Test-mode access tokens (`fail401`, `fail422`, `fail429`, `fail500`, `flaky`, `slow`, `lost`) on
 *   every write; reads take no token.
 * - Test controls, not recorded as calls: `POST /_sim/orders` (an order placed without a webhook),
 *   `POST /_sim/orders/{id}/cancel` and `POST /_sim/orders/{id}/fulfillments` (the shop itself cancels
 *   or ships), `GET /_sim/orders?shopDomain=` (each order whole), `GET /_sim/calls`, `POST /_sim/reset`,
 *   `POST /_sim/outages` (a shop answering one status to every call, reads included, until cleared).
 * - Staying connected (simulator-connect.ts): per order `financial_status`, `risk_recommendation` and
 *   `test`, changed by `PATCH /_sim/orders/{id}`; per shop webhook subscriptions (REST `webhooks.json`,
 *   GraphQL `webhookSubscriptions`/`webhookSubscriptionCreate`; `GET /_sim/webhooks`, `DELETE
 *   /_sim/webhooks/{id}`), tokens with expiry and Token refresh (`POST /_sim/shops/{domain}/tokens`,
 *   `…/revoke`), tags (`POST orders/{id}/tags.json`, `tagsAdd`), and `X-Shopify-API-Version` on every
 *   versioned answer (`POST /_sim/shops/{domain}/api` for another version or a deprecation reason).
 * - `POST /_sim/rate-limits` (a shop allowing N calls a second: see "Rate limits" below).
 * - After the sale (CONTRACT §15, simulator-after-sale.ts): edits to absolute quantities (REST `edits.json`,
 *   custom `…/edits`, Shopify's order edits), returns (REST `returns.json`, custom `…/returns`, `returnCreate`),
 *   their cancellation, and the controls `POST /_sim/orders/{id}/refunds|returns`, `POST /_sim/returns/{id}/
 *   close|cancel` (the shop refunds, opens, closes, cancels; each answers the webhook payload it stands for).
 * - Carrier progress (CONTRACT §16): `PATCH /_sim/fulfillments/{id}` moves a parcel's `shipment_status`
 *   (Shopify's `displayStatus`, `inTransitAt`) and answers its `fulfillment_events/create` payload.
 *
 * Standalone: `npx tsx lib/local/platform-simulator.ts` (port from PLATFORM_SIM_PORT, default 3001).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { SHOPIFY_API_VERSION } from '../../shared/platforms/http.js';
import {
  cancelReturn,
  closeReturn,
  editQuantities,
  openReturn,
  type ReturnLineInput,
  refundOrder,
  returnsOf,
} from './simulator-after-sale.js';
import {
  apiVersionHeaders,
  dropWebhook,
  isExpired,
  issueTokens,
  refreshToken,
  revoke,
  type SimWebhook,
  setApiVersion,
  shopChangeError,
  subscribe,
  tokensView,
  webhooksOf,
  withOrderFacts,
} from './simulator-connect.js';
import { executeShopify, shopifyFlakyKey, shopifyOperation, THROTTLED_BODY } from './simulator-shopify.js';
import { AFTER_SALE_SHOPIFY_KINDS } from './simulator-shopify-after-sale.js';
import {
  addTags,
  type ChangesQuery,
  cancelFulfillment,
  cancelOrder,
  changedOrders,
  changeOrderAsShop,
  decodeCursor,
  encodeCursor,
  fulfil,
  hasTag,
  isPosition,
  moveParcel,
  newLedger,
  placeOrder,
  type SimFulfillment,
  type SimLedger,
  type SimOrder,
  SimRefusalError,
  type SimShop,
  updateOrder,
  updateTracking,
} from './simulator-store.js';

export type SimulatorPlatform = 'storeplatform_a' | 'storeplatform_b' | 'custom';

export interface SimulatorCall {
  shopDomain: string;
  platform: SimulatorPlatform;
  method: string;
  /** The part of the path after `/<shopDomain>`, without the query string. */
  path: string;
  idempotencyKey: string | null;
  /** HTTP status answered; 0 while the call is still in progress (e.g. a `slow` token). */
  status: number;
  /** When the call was received (ISO, ms precision). */
  at: string;
  /** When its answer was sent (ISO, ms precision); unset while it is in progress. */
  answeredAt?: string;
  /** X-Platform-Hmac-SHA256 of custom pushes (null when absent); not set for the other platforms. */
  signature?: string | null;
  /** Set for a `lost` token: the call was carried out, then its connection closed without an answer. */
  lost?: true;
  /** Set for a call that lists, makes or deletes webhook subscriptions (`webhooks.json`, `webhookSubscription…`). */
  subscription?: true;
  /** Set for a call that tags an order (`orders/{id}/tags.json`, `tagsAdd`). */
  tag?: true;
  /** A GraphQL call's operation: its name, else its first root field (`returnCreate`, `orderReturns`…). */
  operation?: string;
}

export interface PlatformSimulator {
  port: number;
  url: string;
  calls(): SimulatorCall[];
  reset(): void;
  stop(): Promise<void>;
}

export interface PlatformSimulatorOptions {
  /** 0 = random free port. */
  port?: number;
  host?: string;
  /** How long a `slow` token delays its answer. */
  slowMs?: number;
  /**
   * For tests: called once a platform call has been carried out, before it is answered (a crash
   * test kills the caller there: the platform did it, the caller never heard).
   */
  beforeReply?: (call: SimulatorCall) => void | Promise<void>;
}

const API = '/admin/api/2025-07';
const MAX_BODY_BYTES = 4_000_000;

type Json = Record<string, unknown>;
/** A write's kind: the namespace of its idempotency keys and of a `flaky` token's first failure. */
type Kind =
  | 'order'
  | 'fulfillment'
  | 'order_cancel'
  | 'order_update'
  | 'fulfillment_tracking'
  | 'fulfillment_cancel'
  | 'webhook'
  | 'order_tags'
  | 'order_edit'
  | 'return_create'
  | 'return_cancel'
  | 'return_close';

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Close the connection instead of answering (a `lost` token). */
  drop?: true;
}

interface Shop extends SimShop {
  /** `<kind>:<idempotencyKey>` → the entity the first create made. */
  replays: Map<string, SimOrder | SimFulfillment>;
  /** `<kind>:<idempotencyKey>` → the first answer of any other write, given again to the same key. */
  answers: Map<string, Reply>;
  /** `<kind>:<idempotencyKey>` already answered 503 for a `flaky` token. */
  flakySeen: Set<string>;
}

interface State {
  shops: Map<string, Shop>;
  /** `POST /_sim/outages`: shops whose every call (reads too) answers this status, until cleared. */
  outages: Map<string, { status: number; retryAfter?: number }>;
  /** `POST /_sim/rate-limits`: shops' buckets of calls (see "Rate limits"). */
  rateLimits: Map<string, RateBucket>;
  calls: SimulatorCall[];
  ledger: SimLedger;
  slowMs: number;
  timers: Set<NodeJS.Timeout>;
  beforeReply?: PlatformSimulatorOptions['beforeReply'];
}

interface Ctx {
  state: State;
  req: IncomingMessage;
  shopDomain: string;
  shop: Shop;
  params: string[];
  /** The query string of the call. */
  query: URLSearchParams;
  body: unknown;
  call: SimulatorCall;
}

interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  pattern: RegExp;
  /** Kind of a write (idempotency and `flaky` namespace); reads have none and skip the token gate. */
  kind?: (ctx: Ctx) => Kind | null;
  handle: (ctx: Ctx) => Reply | Promise<Reply>;
  /** How a `fail422` token is answered; GraphQL reports it as userErrors with HTTP 200. */
  rejected?: (ctx: Ctx) => Reply | Promise<Reply>;
}

const json = (status: number, body: unknown, headers?: Record<string, string>): Reply => ({ status, body, headers });
const NOT_FOUND = json(404, { errors: 'Not Found' });
const INVALID_TOKEN = json(401, { errors: 'Invalid API key or access token' });
const REST_REJECTED = json(422, { errors: { base: ['rejected by test token'] } });
const REST_NO_LINE_ITEMS = json(422, { errors: { line_items: ["can't be blank"] } });
const invalid = (field: string) => json(400, { errors: { [field]: ['is invalid'] } });

const asObject = (v: unknown): Json | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;
/**
 * JSON as a platform keeps it: every number exactly as sent (Node 24's reviver hands over its source
 * text, and `JSON.rawJSON` writes it back), so a test sees the digits the service sent. Past the
 * reviver's recursion limit (a few thousand levels) the plain parse keeps the simulator answering.
 */
const rawJSON = (JSON as unknown as { rawJSON: (text: string) => unknown }).rawJSON;
const exactNumbers = (_key: string, value: unknown, context?: { source?: string }) =>
  typeof value === 'number' && context?.source !== undefined && JSON.stringify(value) !== context.source
    ? rawJSON(context.source)
    : value;
const parseExact = (text: string): unknown => {
  try {
    return JSON.parse(text, exactNumbers as (key: string, value: unknown) => unknown);
  } catch (error) {
    if (error instanceof RangeError) return JSON.parse(text);
    throw error;
  }
};
const clone = <T>(v: T): T => {
  try {
    return parseExact(JSON.stringify(v)) as T;
  } catch {
    return structuredClone(v);
  }
};
const now = () => new Date().toISOString();

function header(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s ? s : null;
}

// ---------------------------------------------------------------- store

function shopOf(state: State, shopDomain: string): Shop {
  let shop = state.shops.get(shopDomain);
  if (!shop) {
    shop = { ledger: state.ledger, orders: new Map(), replays: new Map(), answers: new Map(), flakySeen: new Set() };
    state.shops.set(shopDomain, shop);
  }
  return shop;
}

/** Runs `create` unless the key was seen for this shop and kind; a replay returns the first entity. */
function once<T extends SimOrder | SimFulfillment>(shop: Shop, kind: Kind, key: string | null, create: () => T) {
  const slot = `${kind}:${key}`;
  const seen = key === null ? undefined : (shop.replays.get(slot) as T | undefined);
  if (seen) return { entity: seen, replay: true };
  const entity = create();
  if (key !== null) shop.replays.set(slot, entity);
  return { entity, replay: false };
}

/**
 * A write other than a create, under its idempotency key: the same key again answers what the first
 * call answered, without doing it again. Refusals are not kept: the same call again is decided anew.
 */
function idempotent(ctx: Ctx, kind: Kind, write: () => Reply): Reply {
  const key = ctx.call.idempotencyKey;
  const slot = `${kind}:${key}`;
  const seen = key === null ? undefined : ctx.shop.answers.get(slot);
  if (seen) return seen;
  const reply = refusalsAs422(write);
  if (key !== null && reply.status < 300) ctx.shop.answers.set(slot, reply);
  return reply;
}

/** A refusal as storeplatform_a answers it: 422 `{"errors": {"<field>": ["<message>"]}}`. */
function refusalsAs422(write: () => Reply): Reply {
  try {
    return write();
  } catch (error) {
    if (error instanceof SimRefusalError) return json(422, { errors: { [error.field]: [error.message] } });
    throw error;
  }
}

/** Order input wrapped in "order" (REST) or bare (custom pushes may send either). */
const orderInput = (body: unknown): Json | null => asObject(asObject(body)?.order) ?? asObject(body);
const fulfillmentInput = (body: unknown): Json => asObject(asObject(body)?.fulfillment) ?? asObject(body) ?? {};

/** The shop's orders carrying this `source_identifier` (unique on a shop), for lookups. */
const ordersBySource = (shop: Shop, sourceIdentifier: string) =>
  [...shop.orders.values()].filter((order) => order.source_identifier === sourceIdentifier);

/** An "orders changed since" list: asked with `updated_at_min`, `page_info` or `limit` (PLATFORM-API.md). */
const asksForChanges = (query: URLSearchParams) =>
  query.has('updated_at_min') || query.has('page_info') || query.has('limit');

/**
 * One page of orders changed since `updated_at_min`, oldest change first, filtered by `tag`;
 * `page_info` carries the filters of the first page on, as storeplatform_a's cursors do.
 */
function changesPage(shop: Shop, query: URLSearchParams, defaultLimit: number): Reply {
  const limitText = query.get('limit');
  const limit = limitText === null ? defaultLimit : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1) return invalid('limit');
  let changes: ChangesQuery;
  const pageInfo = query.get('page_info');
  if (pageInfo !== null) {
    const cursor = asObject(decodeCursor(pageInfo));
    const since = cursor?.since;
    const tag = cursor?.tag;
    if (
      !cursor ||
      !isPosition(cursor.after) ||
      !(since === null || typeof since === 'number') ||
      !(tag === null || typeof tag === 'string')
    ) {
      return invalid('page_info');
    }
    changes = { since, tag, after: cursor.after };
  } else {
    const min = query.get('updated_at_min');
    const since = min === null ? null : Date.parse(min);
    if (since !== null && Number.isNaN(since)) return invalid('updated_at_min');
    changes = { since, tag: query.get('tag'), after: null };
  }
  const { orders, next } = changedOrders(shop, changes, Math.min(limit, 250));
  return json(200, {
    orders: clone(orders),
    next_page_info: next && encodeCursor({ since: changes.since, tag: changes.tag, after: next }),
  });
}

// ---------------------------------------------------------------- storeplatform_a (REST)

function restCreateOrder(ctx: Ctx): Reply {
  const input = asObject(asObject(ctx.body)?.order);
  if (!input || !Array.isArray(input.line_items)) return REST_NO_LINE_ITEMS;
  const { entity, replay } = once(ctx.shop, 'order', ctx.call.idempotencyKey, () => placeOrder(ctx.shop, input));
  return json(replay ? 200 : 201, { order: clone(entity) });
}

/**
 * GET orders.json: a lookup by `source_identifier`; orders changed since `updated_at_min`, a page
 * at a time; or every order (filtered by `tag` when given).
 */
function restListOrders(ctx: Ctx): Reply {
  const source = ctx.query.get('source_identifier');
  if (source !== null) return json(200, { orders: clone(ordersBySource(ctx.shop, source)) });
  if (asksForChanges(ctx.query)) return changesPage(ctx.shop, ctx.query, 50);
  const tag = ctx.query.get('tag');
  const orders = [...ctx.shop.orders.values()].filter((order) => tag === null || hasTag(order, tag));
  return json(200, { orders: clone(orders) });
}

function restGetOrder(ctx: Ctx): Reply {
  const order = ctx.shop.orders.get(Number(ctx.params[0]));
  return order ? json(200, { order: clone(order) }) : NOT_FOUND;
}

function restCreateFulfillment(ctx: Ctx): Reply {
  const orderId = Number(ctx.params[0]);
  const input = fulfillmentInput(ctx.body);
  return refusalsAs422(() => {
    const { entity, replay } = once(ctx.shop, 'fulfillment', ctx.call.idempotencyKey, () =>
      fulfil(ctx.shop, orderId, input),
    );
    return json(replay ? 200 : 201, { fulfillment: clone(entity) });
  });
}

function restListFulfillments(ctx: Ctx): Reply {
  const order = ctx.shop.orders.get(Number(ctx.params[0]));
  return order ? json(200, { fulfillments: clone(order.fulfillments) }) : NOT_FOUND;
}

/** POST orders/{id}/cancel.json `{"reason"}`: 200 also when already cancelled; 422 once anything shipped. */
const restCancelOrder = (ctx: Ctx): Reply =>
  idempotent(ctx, 'order_cancel', () => {
    const order = cancelOrder(ctx.shop, Number(ctx.params[0]), asObject(ctx.body)?.reason);
    return order ? json(200, { order: clone(order) }) : NOT_FOUND;
  });

/** PUT orders/{id}.json `{"order": {shipping_address, email, note, note_attributes}}` (those present). */
const restUpdateOrder = (ctx: Ctx): Reply =>
  idempotent(ctx, 'order_update', () => {
    const changes = asObject(asObject(ctx.body)?.order);
    if (!changes) return json(422, { errors: { order: ["can't be blank"] } });
    const order = updateOrder(ctx.shop, Number(ctx.params[0]), changes);
    return order ? json(200, { order: clone(order) }) : NOT_FOUND;
  });

/** POST fulfillments/{id}/update_tracking.json `{"fulfillment": {tracking_company, tracking_numbers, …}}`. */
const restUpdateTracking = (ctx: Ctx): Reply =>
  idempotent(ctx, 'fulfillment_tracking', () => {
    const fulfillment = updateTracking(ctx.shop, Number(ctx.params[0]), fulfillmentInput(ctx.body));
    return fulfillment ? json(200, { fulfillment: clone(fulfillment) }) : NOT_FOUND;
  });

/** POST fulfillments/{id}/cancel.json: its quantities are unfulfilled again. */
const restCancelFulfillment = (ctx: Ctx): Reply =>
  idempotent(ctx, 'fulfillment_cancel', () => {
    const fulfillment = cancelFulfillment(ctx.shop, Number(ctx.params[0]));
    return fulfillment ? json(200, { fulfillment: clone(fulfillment) }) : NOT_FOUND;
  });

// ---------------------------------------------------------------- storeplatform_a: staying connected

const restWebhook = (webhook: SimWebhook) => ({ id: webhook.id, topic: webhook.topic, address: webhook.address });

/** GET webhooks.json: the shop's subscriptions, whichever platform's call made them. */
const restListWebhooks = (ctx: Ctx): Reply => json(200, { webhooks: webhooksOf(ctx.shop).map(restWebhook) });

/** POST webhooks.json `{"webhook": {topic, address, format}}`: 201, 422 for an address it cannot reach. */
const restCreateWebhook = (ctx: Ctx): Reply =>
  idempotent(ctx, 'webhook', () => {
    const input = asObject(asObject(ctx.body)?.webhook) ?? {};
    const made = subscribe(ctx.shop, input.topic, input.address);
    if ('field' in made) return json(422, { errors: { [made.field]: [made.message] } });
    return json(201, { webhook: restWebhook(made.webhook) });
  });

/** POST orders/{id}/tags.json `{"tags": [...]}`: adds, never removes; a tag already there changes nothing. */
function restAddTags(ctx: Ctx): Reply {
  const tags = asObject(ctx.body)?.tags;
  if (!Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string')) {
    return json(422, { errors: { tags: ['must be a list of strings'] } });
  }
  const order = addTags(ctx.shop, Number(ctx.params[0]), tags);
  return order ? json(200, { order: clone(order) }) : NOT_FOUND;
}

/** POST /admin/oauth/access_token: Token refresh, for storeplatform_a and storeplatform_b shops alike. */
const tokenRefresh = (ctx: Ctx): Reply => refreshToken(ctx.shop, ctx.body);

// ---------------------------------------------------------------- storeplatform_b (Shopify's GraphQL)

const SHOPIFY_PATH = `/admin/api/${SHOPIFY_API_VERSION}/graphql.json`;

const shopify = async (ctx: Ctx): Promise<Reply> => json(200, await executeShopify(ctx.shop, ctx.body));

/** A `fail422` shop refuses every mutation with userErrors, as Shopify reports a refusal. */
const shopifyRejected = async (ctx: Ctx): Promise<Reply> =>
  json(200, await executeShopify(ctx.shop, ctx.body, { refuseWrites: 'rejected by test token' }));

const SHOPIFY_KINDS: Record<string, Kind> = {
  fulfillmentCreate: 'fulfillment',
  orderCancel: 'order_cancel',
  orderUpdate: 'order_update',
  fulfillmentTrackingInfoUpdate: 'fulfillment_tracking',
  fulfillmentCancel: 'fulfillment_cancel',
  webhookSubscriptionCreate: 'webhook',
  tagsAdd: 'order_tags',
  ...AFTER_SALE_SHOPIFY_KINDS,
};

/** Mutations are writes (test-mode tokens apply); queries are reads and ignore them. */
const shopifyKind = (ctx: Ctx): Kind | null => {
  const { write, field } = shopifyOperation(ctx.body);
  if (!write) return null;
  return SHOPIFY_KINDS[field ?? ''] ?? 'order';
};

// ---------------------------------------------------------------- custom (signed push)

// The simulator does not know the shops' webhook secrets: it records the signature but only checks it is there.
const MISSING_SIGNATURE = json(401, { errors: 'missing signature' });

function customCreateOrder(ctx: Ctx): Reply {
  if (!ctx.call.signature) return MISSING_SIGNATURE;
  const input = orderInput(ctx.body);
  if (!input || !Array.isArray(input.line_items)) return REST_NO_LINE_ITEMS;
  const { entity, replay } = once(ctx.shop, 'order', ctx.call.idempotencyKey, () => placeOrder(ctx.shop, input));
  return json(replay ? 200 : 201, { id: String(entity.id) });
}

/**
 * GET /reseller/orders, signed over its path and query string as pushes are over their body: a
 * lookup by `source_identifier` (ids only), or orders changed since `updated_at_min`, each whole.
 */
function customListOrders(ctx: Ctx): Reply {
  if (!ctx.call.signature) return MISSING_SIGNATURE;
  const source = ctx.query.get('source_identifier');
  if (source === null && asksForChanges(ctx.query)) return changesPage(ctx.shop, ctx.query, 250);
  const orders = source === null ? [...ctx.shop.orders.values()] : ordersBySource(ctx.shop, source);
  return json(200, { orders: orders.map((order) => ({ id: String(order.id) })) });
}

function customCreateFulfillment(ctx: Ctx): Reply {
  if (!ctx.call.signature) return MISSING_SIGNATURE;
  const orderId = Number(ctx.params[0]);
  const input = fulfillmentInput(ctx.body);
  return refusalsAs422(() => {
    const { entity, replay } = once(ctx.shop, 'fulfillment', ctx.call.idempotencyKey, () =>
      fulfil(ctx.shop, orderId, input),
    );
    return json(replay ? 200 : 201, { id: String(entity.id) });
  });
}

/** POST /reseller/orders/{id}/cancel, signed: as storeplatform_a's cancel. */
const customCancelOrder = (ctx: Ctx): Reply => (ctx.call.signature ? restCancelOrder(ctx) : MISSING_SIGNATURE);

/** PATCH /reseller/orders/{id}, signed: the order's changes, wrapped in "order" or bare. */
function customUpdateOrder(ctx: Ctx): Reply {
  if (!ctx.call.signature) return MISSING_SIGNATURE;
  return idempotent(ctx, 'order_update', () => {
    const order = updateOrder(ctx.shop, Number(ctx.params[0]), orderInput(ctx.body) ?? {});
    return order ? json(200, { order: clone(order) }) : NOT_FOUND;
  });
}

/**
 * POST /reseller/fulfillments/{id}/update_tracking and /cancel, signed: the service's own routes for a
 * custom shop (PLATFORM-API.md names none), with storeplatform_a's bodies and answers.
 */
const customUpdateTracking = (ctx: Ctx): Reply => (ctx.call.signature ? restUpdateTracking(ctx) : MISSING_SIGNATURE);
const customCancelFulfillment = (ctx: Ctx): Reply =>
  ctx.call.signature ? restCancelFulfillment(ctx) : MISSING_SIGNATURE;

// ---------------------------------------------------------------- after the sale (CONTRACT §15)

/** A return as storeplatform_a's REST answers it: `line_items` with `reason` and `note`. */
const restReturn = (entry: Json) => {
  const { return_line_items: lines, admin_graphql_api_id: _gid, name: _name, ...rest } = entry;
  return {
    ...rest,
    line_items: (Array.isArray(lines) ? lines : []).map((line) => {
      const { return_reason, return_reason_note, admin_graphql_api_id: _lineGid, ...kept } = line as Json;
      return { ...kept, reason: return_reason, note: return_reason_note };
    }),
  };
};

/** The REST lines of an edit or a return (`line_items`), each an object. */
const restLines = (body: unknown, key: string | null): Json[] => {
  const outer = key === null ? asObject(body) : asObject(asObject(body)?.[key]);
  const lines = outer?.line_items;
  return Array.isArray(lines) ? lines.map((line) => asObject(line) ?? {}) : [];
};

/** POST orders/{id}/edits.json `{"line_items": [{"id", "quantity"}]}` (absolute): 200 `{"order"}`, 422, 404. */
const restEditOrder = (ctx: Ctx): Reply =>
  idempotent(ctx, 'order_edit', () => {
    const order = editQuantities(ctx.shop, Number(ctx.params[0]), restLines(ctx.body, null));
    return order ? json(200, { order: clone(order) }) : NOT_FOUND;
  });

/** POST orders/{id}/returns.json `{"return": {"line_items": [{line_item_id, quantity, reason, note}]}}`: 201. */
const restCreateReturn = (ctx: Ctx): Reply =>
  idempotent(ctx, 'return_create', () => {
    const lines: ReturnLineInput[] = restLines(ctx.body, 'return').map((line) => ({
      line_item_id: line.line_item_id,
      quantity: line.quantity,
      return_reason: line.reason,
      return_reason_note: line.note,
    }));
    const made = openReturn(ctx.shop, Number(ctx.params[0]), lines);
    return made ? json(201, { return: restReturn(clone(made)) }) : NOT_FOUND;
  });

/** GET orders/{id}/returns.json: the order's returns, whatever their status. */
function restListReturns(ctx: Ctx): Reply {
  const order = ctx.shop.orders.get(Number(ctx.params[0]));
  return order ? json(200, { returns: returnsOf(order).map((entry) => restReturn(clone(entry))) }) : NOT_FOUND;
}

/** POST returns/{id}/cancel.json: 200 (also when already canceled), 422 once work was done on it. */
const restCancelReturn = (ctx: Ctx): Reply =>
  idempotent(ctx, 'return_cancel', () => {
    const entry = cancelReturn(ctx.shop, Number(ctx.params[0]));
    return entry ? json(200, { return: restReturn(clone(entry)) }) : NOT_FOUND;
  });

/** POST /reseller/orders/{id}/edits and …/returns, signed: storeplatform_a's bodies and answers. */
const customEditOrder = (ctx: Ctx): Reply => (ctx.call.signature ? restEditOrder(ctx) : MISSING_SIGNATURE);
const customCreateReturn = (ctx: Ctx): Reply => (ctx.call.signature ? restCreateReturn(ctx) : MISSING_SIGNATURE);

/** The routes of CONTRACT §15 (PLATFORM-API.md, "Refunds and returns"). */
const AFTER_SALE_ROUTES = (rest: (path: string) => RegExp): Route[] => [
  { method: 'POST', pattern: rest('/orders/(\\d+)/edits.json'), kind: () => 'order_edit', handle: restEditOrder },
  {
    method: 'POST',
    pattern: rest('/orders/(\\d+)/returns.json'),
    kind: () => 'return_create',
    handle: restCreateReturn,
  },
  { method: 'GET', pattern: rest('/orders/(\\d+)/returns.json'), handle: restListReturns },
  {
    method: 'POST',
    pattern: rest('/returns/(\\d+)/cancel.json'),
    kind: () => 'return_cancel',
    handle: restCancelReturn,
  },
  { method: 'POST', pattern: /^\/reseller\/orders\/(\d+)\/edits$/, kind: () => 'order_edit', handle: customEditOrder },
  {
    method: 'POST',
    pattern: /^\/reseller\/orders\/(\d+)\/returns$/,
    kind: () => 'return_create',
    handle: customCreateReturn,
  },
];

// ---------------------------------------------------------------- routing

const kindOf = (kind: Kind) => () => kind;
const rest = (path: string) => new RegExp(`^${API}${path.replace(/\./g, '\\.')}$`);

/** Paths are matched against the part after `/<shopDomain>`. */
const ROUTES: Route[] = [
  {
    method: 'POST',
    pattern: new RegExp(`^${SHOPIFY_PATH.replace(/\./g, '\\.')}$`),
    kind: shopifyKind,
    handle: shopify,
    rejected: shopifyRejected,
  },
  { method: 'POST', pattern: rest('/orders.json'), kind: kindOf('order'), handle: restCreateOrder },
  { method: 'GET', pattern: rest('/orders.json'), handle: restListOrders },
  { method: 'GET', pattern: rest('/orders/(\\d+).json'), handle: restGetOrder },
  { method: 'GET', pattern: rest('/webhooks.json'), handle: restListWebhooks },
  { method: 'POST', pattern: rest('/webhooks.json'), kind: kindOf('webhook'), handle: restCreateWebhook },
  { method: 'POST', pattern: rest('/orders/(\\d+)/tags.json'), kind: kindOf('order_tags'), handle: restAddTags },
  { method: 'POST', pattern: /^\/admin\/oauth\/access_token$/, handle: tokenRefresh },
  { method: 'PUT', pattern: rest('/orders/(\\d+).json'), kind: kindOf('order_update'), handle: restUpdateOrder },
  {
    method: 'POST',
    pattern: rest('/orders/(\\d+)/cancel.json'),
    kind: kindOf('order_cancel'),
    handle: restCancelOrder,
  },
  {
    method: 'POST',
    pattern: rest('/orders/(\\d+)/fulfillments.json'),
    kind: kindOf('fulfillment'),
    handle: restCreateFulfillment,
  },
  { method: 'GET', pattern: rest('/orders/(\\d+)/fulfillments.json'), handle: restListFulfillments },
  {
    method: 'POST',
    pattern: rest('/fulfillments/(\\d+)/update_tracking.json'),
    kind: kindOf('fulfillment_tracking'),
    handle: restUpdateTracking,
  },
  {
    method: 'POST',
    pattern: rest('/fulfillments/(\\d+)/cancel.json'),
    kind: kindOf('fulfillment_cancel'),
    handle: restCancelFulfillment,
  },
  { method: 'POST', pattern: /^\/reseller\/orders$/, kind: kindOf('order'), handle: customCreateOrder },
  { method: 'GET', pattern: /^\/reseller\/orders$/, handle: customListOrders },
  {
    method: 'PATCH',
    pattern: /^\/reseller\/orders\/(\d+)$/,
    kind: kindOf('order_update'),
    handle: customUpdateOrder,
  },
  {
    method: 'POST',
    pattern: /^\/reseller\/orders\/(\d+)\/cancel$/,
    kind: kindOf('order_cancel'),
    handle: customCancelOrder,
  },
  {
    method: 'POST',
    pattern: /^\/reseller\/orders\/(\d+)\/fulfillments$/,
    kind: kindOf('fulfillment'),
    handle: customCreateFulfillment,
  },
  {
    method: 'POST',
    pattern: /^\/reseller\/fulfillments\/(\d+)\/update_tracking$/,
    kind: kindOf('fulfillment_tracking'),
    handle: customUpdateTracking,
  },
  {
    method: 'POST',
    pattern: /^\/reseller\/fulfillments\/(\d+)\/cancel$/,
    kind: kindOf('fulfillment_cancel'),
    handle: customCancelFulfillment,
  },
  ...AFTER_SALE_ROUTES(rest),
];

function platformOf(path: string): SimulatorPlatform {
  if (path.startsWith('/reseller/')) return 'custom';
  if (path === SHOPIFY_PATH) return 'storeplatform_b';
  return 'storeplatform_a';
}

/** Custom pushes carry no platform token; a `Bearer` token, if sent, still selects a test mode. */
function tokenOf(req: IncomingMessage, platform: SimulatorPlatform): string | null {
  if (platform === 'storeplatform_b') return header(req, 'x-shopify-access-token');
  if (platform !== 'custom') return header(req, 'x-platform-access-token');
  return /^Bearer\s+(.+)$/i.exec(header(req, 'authorization') ?? '')?.[1] ?? null;
}

function sleep(state: State, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      state.timers.delete(timer);
      resolve();
    }, ms);
    state.timers.add(timer);
  });
}

/**
 * Test-mode tokens, like card numbers in a payment provider's test mode: a reply instead of the
 * call, `slow` or `lost` (the call is carried out, then its answer delayed or never sent), or
 * null to carry on normally.
 */
async function testModeGate(
  ctx: Ctx,
  route: Route,
  kind: Kind | null,
): Promise<Reply | Promise<Reply> | 'slow' | 'lost' | null> {
  const token = tokenOf(ctx.req, ctx.call.platform);
  const shopify = ctx.call.platform === 'storeplatform_b';
  if (token === null) return ctx.call.platform === 'custom' ? null : INVALID_TOKEN;
  if (token.includes('fail401')) return INVALID_TOKEN;
  if (token.includes('fail422')) return route.rejected ? route.rejected(ctx) : REST_REJECTED;
  if (token.includes('fail429')) {
    return shopify ? json(200, THROTTLED_BODY) : json(429, { errors: 'Too Many Requests' }, { 'Retry-After': '1' });
  }
  if (token.includes('fail500')) return json(500, { errors: 'Internal Server Error' });
  if (token.includes('flaky')) {
    // Shopify takes no key: a flaky shop fails the first create of each order (by sourceIdentifier).
    const slot = shopify ? shopifyFlakyKey(ctx.body) : `${kind ?? 'unknown'}:${ctx.call.idempotencyKey}`;
    if (!ctx.shop.flakySeen.has(slot)) {
      ctx.shop.flakySeen.add(slot);
      return json(503, { errors: 'Service Unavailable' });
    }
  }
  if (token.includes('slow')) return 'slow';
  if (token.includes('lost')) return 'lost';
  return null;
}

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) reject(new BodyTooLarge());
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A platform call: record it, route it, parse the body, apply test-mode tokens, answer. */
async function platformCall(
  state: State,
  req: IncomingMessage,
  pathname: string,
  query: URLSearchParams,
): Promise<Reply> {
  const [, shopDomain = '', path = ''] = /^\/([^/]*)(.*)$/.exec(pathname) ?? [];
  const platform = platformOf(path);
  const call: SimulatorCall = {
    shopDomain,
    platform,
    method: req.method ?? 'GET',
    path,
    idempotencyKey: header(req, 'idempotency-key'),
    status: 0,
    at: now(),
    ...(platform === 'custom' ? { signature: header(req, 'x-platform-hmac-sha256') } : {}),
  };
  // Marked before any outage or rate limit answers it (a GraphQL call is marked once its body is read).
  if (REST_SUBSCRIPTIONS.test(path)) call.subscription = true;
  state.calls.push(call);
  const outage = state.outages.get(shopDomain);
  const routed = outage
    ? outageReply(outage)
    : (rateLimited(state, shopDomain, platform) ?? (await routeCall(state, req, call, query)));
  const versioned = platform === 'custom' ? {} : apiVersionHeaders(state.shops.get(shopDomain), path);
  const reply = { ...routed, headers: { ...routed.headers, ...versioned } };
  call.status = reply.status;
  if (reply.drop) call.lost = true;
  await state.beforeReply?.(call);
  call.answeredAt = now();
  return reply;
}

/** Whether a call keeps webhook subscriptions (CONTRACT.md §12.1) rather than doing an order's work. */
const REST_SUBSCRIPTIONS = /\/webhooks(\/[^/]+)?\.json$/;
const isSubscriptionCall = (call: SimulatorCall, body: unknown) =>
  REST_SUBSCRIPTIONS.test(call.path) ||
  (call.platform === 'storeplatform_b' && /^webhookSubscription/.test(shopifyOperation(body).field ?? ''));

/** Whether a call tags an order (CONTRACT.md §12.5): the merchant's view, beside an order's own work. */
const REST_TAGS = /\/orders\/[^/]+\/tags\.json$/;
const isTagCall = (call: SimulatorCall, body: unknown) =>
  REST_TAGS.test(call.path) || (call.platform === 'storeplatform_b' && shopifyOperation(body).field === 'tagsAdd');

async function routeCall(
  state: State,
  req: IncomingMessage,
  call: SimulatorCall,
  query: URLSearchParams,
): Promise<Reply> {
  const route = ROUTES.find((r) => r.method === call.method && r.pattern.test(call.path));
  if (!route) return NOT_FOUND;
  let body: unknown = {};
  if (route.method !== 'GET') {
    const text = await readBody(req);
    try {
      body = text.trim() === '' ? {} : parseExact(text);
    } catch {
      return json(400, { errors: 'invalid JSON' });
    }
  }
  if (isSubscriptionCall(call, body)) call.subscription = true;
  if (isTagCall(call, body)) call.tag = true;
  if (call.platform === 'storeplatform_b') {
    const { name, field } = shopifyOperation(body);
    if (name ?? field) call.operation = name ?? field ?? undefined;
  }
  const params = route.pattern.exec(call.path)?.slice(1) ?? [];
  const ctx: Ctx = {
    state,
    req,
    shopDomain: call.shopDomain,
    shop: shopOf(state, call.shopDomain),
    params,
    query,
    body,
    call,
  };
  // An access token the shop issued and that has expired is refused on every call, reads included.
  if (isExpired(ctx.shop, tokenOf(req, call.platform))) return INVALID_TOKEN;
  const kind = route.kind?.(ctx);
  // Reads (no kind) take no token and ignore test-mode tokens.
  const gated = kind ? await testModeGate(ctx, route, kind) : null;
  if (gated === null) return route.handle(ctx);
  if (gated === 'slow') {
    // The order exists at once; only the answer is late.
    const reply = await route.handle(ctx);
    await sleep(ctx.state, ctx.state.slowMs);
    return reply;
  }
  if (gated === 'lost') return { ...(await route.handle(ctx)), drop: true };
  return gated;
}

// ---------------------------------------------------------------- /_sim control endpoints (not recorded)

function resetState(state: State): void {
  state.shops.clear();
  state.outages.clear();
  state.rateLimits.clear();
  state.calls = [];
}

/**
 * `POST /_sim/orders` `{shopDomain, order}`: an order placed on a shop without any webhook being sent
 * (PLATFORM-API.md, "The simulator"). Ids given are kept, missing ones assigned; every line gets an
 * id and a fulfilled quantity. `created_at`, `updated_at` and `cancelled_at` given are kept too, so a
 * test can place an order older than a store.
 */
function simPlaceOrder(state: State, body: unknown): Reply {
  const request = asObject(body);
  const input = asObject(request?.order);
  if (typeof request?.shopDomain !== 'string' || !input || !Array.isArray(input.line_items)) {
    return json(400, { errors: 'shopDomain and an order with line_items are required' });
  }
  const shop = shopOf(state, request.shopDomain);
  const id = typeof input.id === 'number' || /^\d+$/.test(String(input.id)) ? Number(input.id) : undefined;
  if (id !== undefined && shop.orders.has(id)) return json(409, { errors: `order ${id} exists` });
  // Payment, risk and test as the body gives them, else paid, none and false (PLATFORM-API.md).
  const placed = placeOrder(shop, withOrderFacts(input), { id, keepGiven: true });
  return json(201, { order: clone(placed) });
}

/** `POST /_sim/orders/{id}/cancel` `{shopDomain, reason?}`: the shop itself cancels, shipped or not. */
function simCancelOrder(state: State, orderId: number, body: unknown): Reply {
  const request = asObject(body);
  if (typeof request?.shopDomain !== 'string') return json(400, { errors: 'shopDomain is required' });
  const order = cancelOrder(shopOf(state, request.shopDomain), orderId, request.reason, true);
  return order ? json(200, { order: clone(order) }) : NOT_FOUND;
}

/**
 * `POST /_sim/orders/{id}/fulfillments` `{shopDomain, fulfillment}`: the shop itself ships, its
 * `line_items` as in `fulfillments/create`; an order never seen becomes a stub that takes any lines.
 */
function simFulfil(state: State, orderId: number, body: unknown): Reply {
  const request = asObject(body);
  if (typeof request?.shopDomain !== 'string') return json(400, { errors: 'shopDomain is required' });
  const shop = shopOf(state, request.shopDomain);
  const input = asObject(request.fulfillment) ?? {};
  return refusalsAs422(() => json(201, { fulfillment: clone(fulfil(shop, orderId, input)) }));
}

/** A shop's outage answer: the status, with `Retry-After` when given (a 429). */
function outageReply(outage: { status: number; retryAfter?: number }): Reply {
  const headers = outage.retryAfter === undefined ? undefined : { 'Retry-After': String(outage.retryAfter) };
  return { status: outage.status, body: { errors: `simulated outage (${outage.status})` }, headers };
}

/**
 * `POST /_sim/outages` `{shopDomain, status, retryAfter?}`: every call to the shop, reads and polls
 * included, answers `status` (with `Retry-After` when given); `status: null` ends the outage.
 */
function simOutage(state: State, body: unknown): Reply {
  const request = asObject(body);
  if (typeof request?.shopDomain !== 'string') return json(400, { errors: 'shopDomain is required' });
  if (request.status === null) state.outages.delete(request.shopDomain);
  else if (typeof request.status === 'number' && request.status >= 400 && request.status <= 599) {
    const retryAfter = typeof request.retryAfter === 'number' ? request.retryAfter : undefined;
    state.outages.set(request.shopDomain, { status: request.status, retryAfter });
  } else return json(400, { errors: 'status must be a 4xx or 5xx status, or null' });
  return json(200, { ok: true });
}

/** A control's JSON body, or the 400 that answers it. */
async function readJson(req: IncomingMessage): Promise<{ parsed: unknown } | Reply> {
  try {
    const text = await readBody(req);
    return { parsed: text.trim() === '' ? {} : parseExact(text) };
  } catch (error) {
    if (error instanceof BodyTooLarge) throw error;
    return json(400, { errors: 'invalid JSON' });
  }
}

async function simCall(
  state: State,
  req: IncomingMessage,
  method: string,
  pathname: string,
  query: URLSearchParams,
): Promise<Reply> {
  if (method === 'GET' && pathname === '/_sim/calls') return json(200, { calls: state.calls });
  const connect = await connectControl(state, req, method, pathname, query);
  if (connect) return connect;
  const afterSale = await afterSaleControl(state, req, method, pathname);
  if (afterSale) return afterSale;
  const carrier = await carrierControl(state, req, method, pathname);
  if (carrier) return carrier;
  if ((method === 'DELETE' && pathname === '/_sim/calls') || (method === 'POST' && pathname === '/_sim/reset')) {
    resetState(state);
    return json(200, { ok: true });
  }
  if (method === 'GET' && pathname === '/_sim/orders') {
    const shopDomain = query.get('shopDomain');
    if (!shopDomain) return json(400, { errors: 'shopDomain is required' });
    return json(200, { orders: [...(state.shops.get(shopDomain)?.orders.values() ?? [])] });
  }
  if (method === 'POST' && pathname === '/_sim/rate-limits') {
    const read = await readJson(req);
    return 'parsed' in read ? simRateLimit(state, read.parsed) : read;
  }
  if (method === 'POST' && pathname === '/_sim/outages') {
    const read = await readJson(req);
    return 'parsed' in read ? simOutage(state, read.parsed) : read;
  }
  const control = /^\/_sim\/orders\/(\d+)\/(cancel|fulfillments)$/.exec(pathname);
  if (method !== 'POST' || (pathname !== '/_sim/orders' && !control)) return NOT_FOUND;
  const read = await readJson(req);
  if (!('parsed' in read)) return read;
  if (!control) return simPlaceOrder(state, read.parsed);
  const orderId = Number(control[1]);
  return control[2] === 'cancel' ? simCancelOrder(state, orderId, read.parsed) : simFulfil(state, orderId, read.parsed);
}

// ---------------------------------------------------------------- /_sim controls of staying connected

/** `PATCH /_sim/orders/{id}` `{shopDomain, financial_status, risk_recommendation, test, shipping_address, email}`. */
function simChangeOrder(state: State, orderId: number, body: unknown): Reply {
  const request = asObject(body);
  if (typeof request?.shopDomain !== 'string') return json(400, { errors: 'shopDomain is required' });
  const problem = shopChangeError(request);
  if (problem) return json(400, { errors: problem });
  const order = changeOrderAsShop(shopOf(state, request.shopDomain), orderId, request);
  return order ? json(200, { order: clone(order) }) : NOT_FOUND;
}

/** `GET /_sim/webhooks?shopDomain=`: the shop's subscriptions, REST-shaped whichever platform made them. */
function simWebhooks(state: State, query: URLSearchParams): Reply {
  const shopDomain = query.get('shopDomain');
  if (!shopDomain) return json(400, { errors: 'shopDomain is required' });
  const shop = state.shops.get(shopDomain);
  return json(200, { webhooks: shop ? webhooksOf(shop) : [] });
}

/** The shop controls: `tokens` (POST issues, GET counts refreshes), `revoke`, `api` (version, deprecation). */
async function simShopControl(state: State, req: IncomingMessage, shopDomain: string, control: string) {
  const shop = shopOf(state, shopDomain);
  if (req.method === 'GET') return control === 'tokens' ? json(200, tokensView(shop)) : NOT_FOUND;
  const read = await readJson(req);
  if (!('parsed' in read)) return read;
  if (control === 'tokens') return issueTokens(shop, read.parsed);
  return control === 'revoke' ? revoke(shop) : setApiVersion(shop, read.parsed);
}

/** The controls of PLATFORM-API.md's last paragraph; null for any other path. */
async function connectControl(
  state: State,
  req: IncomingMessage,
  method: string,
  pathname: string,
  query: URLSearchParams,
): Promise<Reply | null> {
  if (method === 'GET' && pathname === '/_sim/webhooks') return simWebhooks(state, query);
  const webhook = /^\/_sim\/webhooks\/(\d+)$/.exec(pathname);
  if (method === 'DELETE' && webhook) {
    return dropWebhook(state.shops.values(), Number(webhook[1])) ? json(200, { ok: true }) : NOT_FOUND;
  }
  const order = /^\/_sim\/orders\/(\d+)$/.exec(pathname);
  if (method === 'PATCH' && order) {
    const read = await readJson(req);
    return 'parsed' in read ? simChangeOrder(state, Number(order[1]), read.parsed) : read;
  }
  const shop = /^\/_sim\/shops\/([^/]+)\/(tokens|revoke|api)$/.exec(pathname);
  const allowed = shop && (method === 'POST' || (method === 'GET' && shop[2] === 'tokens'));
  return shop && allowed ? simShopControl(state, req, decodeURIComponent(shop[1]), shop[2]) : null;
}

// ---------------------------------------------------------------- /_sim controls after the sale (CONTRACT §15)

/** `returns/approve`'s payload of a return (Shopify's REST shape): what a test signs and sends to the service. */
const approvePayload = (entry: Json) => ({
  id: entry.id,
  admin_graphql_api_id: entry.admin_graphql_api_id,
  status: entry.status,
  name: entry.name,
  order: { id: entry.order_id, admin_graphql_api_id: `gid://shopify/Order/${String(entry.order_id)}` },
  return_line_items: (Array.isArray(entry.return_line_items) ? entry.return_line_items : []).map((value) => {
    const line = asObject(value) ?? {};
    return {
      id: line.id,
      admin_graphql_api_id: line.admin_graphql_api_id,
      fulfillment_line_item: { id: line.fulfillment_line_item_id, line_item: { id: line.line_item_id } },
      quantity: line.quantity,
      return_reason: line.return_reason,
      return_reason_note: line.return_reason_note,
    };
  }),
});

/** `returns/close` and `returns/cancel`'s payload: `{id, admin_graphql_api_id, order_id, status}`. */
const statusPayload = (entry: Json) => ({
  id: entry.id,
  admin_graphql_api_id: entry.admin_graphql_api_id,
  order_id: entry.order_id,
  status: entry.status,
});

/**
 * `POST /_sim/orders/{id}/refunds` `{shopDomain, refund}`, `…/returns` `{shopDomain, return}`, and
 * `POST /_sim/returns/{id}/close|cancel` `{shopDomain}`: the shop refunds, opens and approves a return,
 * closes or cancels one, without a webhook. Each answers what it made or changed and, as `webhook`, the
 * payload of the topic it stands for (`refunds/create`, `returns/approve`, `returns/close`, `returns/cancel`).
 */
async function afterSaleControl(state: State, req: IncomingMessage, method: string, pathname: string) {
  const onOrder = /^\/_sim\/orders\/(\d+)\/(refunds|returns)$/.exec(pathname);
  const onReturn = /^\/_sim\/returns\/(\d+)\/(close|cancel)$/.exec(pathname);
  if (method !== 'POST' || !(onOrder || onReturn)) return null;
  const read = await readJson(req);
  if (!('parsed' in read)) return read;
  const request = asObject(read.parsed);
  if (typeof request?.shopDomain !== 'string') return json(400, { errors: 'shopDomain is required' });
  const shop = shopOf(state, request.shopDomain);
  return refusalsAs422(() => {
    if (onReturn) {
      const id = Number(onReturn[1]);
      const entry = onReturn[2] === 'close' ? closeReturn(shop, id) : cancelReturn(shop, id);
      return entry ? json(200, { return: clone(entry), webhook: statusPayload(entry) }) : NOT_FOUND;
    }
    const orderId = Number(onOrder![1]);
    if (onOrder![2] === 'refunds') {
      const refund = refundOrder(shop, orderId, asObject(request.refund) ?? {});
      return refund ? json(201, { refund: clone(refund), webhook: clone(refund) }) : NOT_FOUND;
    }
    const lines = asObject(request.return)?.return_line_items;
    const inputs = (Array.isArray(lines) ? lines : []).map(
      (line) => ({ quantity: undefined, ...asObject(line) }) as ReturnLineInput,
    );
    const made = openReturn(shop, orderId, inputs);
    return made ? json(201, { return: clone(made), webhook: approvePayload(made) }) : NOT_FOUND;
  });
}

/**
 * `PATCH /_sim/fulfillments/{id}` `{shopDomain, shipment_status, happened_at?}`: the carrier moves a
 * parcel (CONTRACT §16), without a webhook. Answers the fulfillment and, as `webhook`, the
 * `fulfillment_events/create` payload that stands for it.
 */
async function carrierControl(state: State, req: IncomingMessage, method: string, pathname: string) {
  const parcel = /^\/_sim\/fulfillments\/(\d+)$/.exec(pathname);
  if (method !== 'PATCH' || !parcel) return null;
  const read = await readJson(req);
  if (!('parsed' in read)) return read;
  const request = asObject(read.parsed);
  if (typeof request?.shopDomain !== 'string' || typeof request.shipment_status !== 'string') {
    return json(400, { errors: 'shopDomain and shipment_status are required' });
  }
  const happenedAt = typeof request.happened_at === 'string' ? request.happened_at : undefined;
  const moved = moveParcel(shopOf(state, request.shopDomain), Number(parcel[1]), request.shipment_status, happenedAt);
  return moved ? json(200, { fulfillment: clone(moved.fulfillment), webhook: moved.event }) : NOT_FOUND;
}

// ---------------------------------------------------------------- rate limits (a supplier's pace)

/**
 * A shop that allows `perSecond` calls a second, as a platform's bucket does (Shopify's leaky
 * bucket): it holds `perSecond` calls, refills at `perSecond` a second, and every call takes one,
 * reads included. A call finding it empty is answered as the platform throttles: REST and custom
 * 429 with `Retry-After` (whole seconds until a call is free, at least 1) and `RateLimit-Policy:
 * <perSecond>;w=1`; Shopify a THROTTLED 200 whose `throttleStatus` restores `perSecond` creates a
 * second. A throttled call is recorded, as on a platform.
 */
interface RateBucket {
  perSecond: number;
  tokens: number;
  at: number;
}

/** What a Shopify create asks for in points, in the simulator's THROTTLED answers. */
const SHOPIFY_CREATE_COST = 10;

function rateLimited(state: State, shopDomain: string, platform: SimulatorPlatform): Reply | undefined {
  const bucket = state.rateLimits.get(shopDomain);
  if (!bucket) return undefined;
  const at = Date.now();
  bucket.tokens = Math.min(bucket.perSecond, bucket.tokens + ((at - bucket.at) / 1000) * bucket.perSecond);
  bucket.at = at;
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return undefined;
  }
  if (platform === 'storeplatform_b') {
    const restoreRate = bucket.perSecond * SHOPIFY_CREATE_COST;
    const currentlyAvailable = Math.floor(bucket.tokens * SHOPIFY_CREATE_COST);
    const throttleStatus = { maximumAvailable: restoreRate, currentlyAvailable, restoreRate };
    const cost = { requestedQueryCost: SHOPIFY_CREATE_COST, actualQueryCost: null, throttleStatus };
    return json(200, { errors: THROTTLED_BODY.errors, extensions: { cost } });
  }
  const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / bucket.perSecond));
  return json(
    429,
    { errors: 'Exceeded the rate limit of calls a second' },
    { 'Retry-After': String(retryAfter), 'RateLimit-Policy': `${bucket.perSecond};w=1` },
  );
}

/** `POST /_sim/rate-limits` `{shopDomain, perSecond}`: the shop allows that many calls a second; `null` lifts it. */
function simRateLimit(state: State, body: unknown): Reply {
  const request = asObject(body);
  if (typeof request?.shopDomain !== 'string') return json(400, { errors: 'shopDomain is required' });
  if (request.perSecond === null) state.rateLimits.delete(request.shopDomain);
  else if (typeof request.perSecond === 'number' && request.perSecond > 0) {
    state.rateLimits.set(request.shopDomain, {
      perSecond: request.perSecond,
      tokens: request.perSecond,
      at: Date.now(),
    });
  } else return json(400, { errors: 'perSecond must be a positive number, or null' });
  return json(200, { ok: true });
}

// ---------------------------------------------------------------- server

function send(res: ServerResponse, reply: Reply): void {
  if (res.headersSent || res.destroyed) return;
  if (reply.drop) {
    res.socket?.destroy();
    return;
  }
  res.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers });
  let text: string;
  try {
    text = JSON.stringify(reply.body);
  } catch {
    text = JSON.stringify({ errors: 'the simulator cannot write this order back (nested too deeply)' });
  }
  res.end(text);
}

async function handle(state: State, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // Split by hand: `new URL('//x/…', base)` would read the first segment as a host name.
  const [pathname = '/', rawQuery = ''] = (req.url ?? '/').split('?', 2);
  try {
    const reply = pathname.startsWith('/_sim/')
      ? await simCall(state, req, req.method ?? 'GET', pathname, new URLSearchParams(rawQuery))
      : await platformCall(state, req, pathname, new URLSearchParams(rawQuery));
    send(res, reply);
  } catch (err) {
    // A bug or a misbehaving client must cost one request, never the server.
    if (err instanceof BodyTooLarge) return send(res, json(413, { errors: 'body too large' }));
    send(res, json(500, { errors: `simulator error: ${(err as Error).message}` }));
  }
}

export async function startPlatformSimulator(options: PlatformSimulatorOptions = {}): Promise<PlatformSimulator> {
  const host = options.host ?? '127.0.0.1';
  const state: State = {
    shops: new Map(),
    outages: new Map(),
    rateLimits: new Map(),
    calls: [],
    ledger: newLedger(),
    slowMs: options.slowMs ?? 30_000,
    timers: new Set(),
    beforeReply: options.beforeReply,
  };
  const server = createServer((req, res) => void handle(state, req, res));
  // The functions' clients close idle connections first, so none is reset while a call is sent on it.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.on('clientError', (_err, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    url: `http://${host}:${port}`,
    calls: () => state.calls.map((c) => ({ ...c })),
    reset: () => resetState(state),
    stop: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of state.timers) clearTimeout(timer); // `slow` calls in flight must not hold the process
        state.timers.clear();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.PLATFORM_SIM_PORT ?? 3001);
  startPlatformSimulator({ port })
    .then((sim) => console.log(`platform simulator listening on ${sim.url}`))
    .catch((err: unknown) => {
      console.error('platform simulator failed to start:', err);
      process.exit(1);
    });
}
