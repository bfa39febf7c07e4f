/**
 * Local stand-in for the hosting platform's Admin API (PLATFORM-API.md, "The simulator").
 *
 * Serves storeplatform_a (REST), storeplatform_b (GraphQL) and custom signed pushes under
 * `http://127.0.0.1:<port>/<shopDomain>/…`, keeps every shop's orders and fulfillments in memory,
 * honours idempotency keys, answers lookups by `source_identifier` and understands test-mode access
 * tokens (`fail401`, `flaky`, `slow`, `lost`, …),
 * so the demo and the tests can exercise every success and failure path without a real platform.
 *
 * Standalone: `npx tsx lib/local/platform-simulator.ts` (port from PLATFORM_SIM_PORT, default 3001).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { SHOPIFY_API_VERSION } from '../../shared/platforms/storeplatform-b-documents.js';
import {
  executeShopify,
  type ShopifyStore,
  shopifyFlakyKey,
  shopifyOperation,
  THROTTLED_BODY,
} from './simulator-shopify.js';

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
  /** X-Platform-Hmac-SHA256 of custom pushes (null when absent); not set for the other platforms. */
  signature?: string | null;
  /** Set for a `lost` token: the call was carried out, then its connection closed without an answer. */
  lost?: true;
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
}

const API = '/admin/api/2025-07';
const MAX_BODY_BYTES = 4_000_000;

type Json = Record<string, unknown>;
type Kind = 'order' | 'fulfillment';

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Close the connection instead of answering (a `lost` token). */
  drop?: true;
}

interface StoredFulfillment extends Json {
  id: number;
  order_id: number;
  status: 'success';
  created_at: string;
}

interface StoredOrder extends Json {
  id: number;
  created_at: string;
  fulfillments: StoredFulfillment[];
}

interface Shop {
  orders: Map<number, StoredOrder>;
  /** `<kind>:<idempotencyKey>` → the entity the first call created. */
  replays: Map<string, StoredOrder | StoredFulfillment>;
  /** `<kind>:<idempotencyKey>` already answered 503 for a `flaky` token. */
  flakySeen: Set<string>;
}

interface State {
  shops: Map<string, Shop>;
  calls: SimulatorCall[];
  // Ids keep increasing across resets, so an id held from before a reset never matches a new entity.
  nextOrderId: number;
  nextFulfillmentId: number;
  nextLineItemId: number;
  slowMs: number;
  timers: Set<NodeJS.Timeout>;
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
  method: 'GET' | 'POST';
  pattern: RegExp;
  /** Operation kind of a write (idempotency and `flaky` namespace); reads have none and skip the token gate. */
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
    shop = { orders: new Map(), replays: new Map(), flakySeen: new Set() };
    state.shops.set(shopDomain, shop);
  }
  return shop;
}

/** Runs `create` unless the key was seen for this shop and kind; a replay returns the first entity. */
function once<T extends StoredOrder | StoredFulfillment>(shop: Shop, kind: Kind, key: string | null, create: () => T) {
  const slot = `${kind}:${key}`;
  const seen = key === null ? undefined : (shop.replays.get(slot) as T | undefined);
  if (seen) return { entity: seen, replay: true };
  const entity = create();
  if (key !== null) shop.replays.set(slot, entity);
  return { entity, replay: false };
}

function createOrder(state: State, shop: Shop, input: Json, id = state.nextOrderId++): StoredOrder {
  const order: StoredOrder = { ...input, id, created_at: now(), fulfillments: [] };
  shop.orders.set(id, order);
  return order;
}

/** An order the simulator has never seen, made when a fulfillment names it, so orders placed elsewhere get tracking. */
function stubOrder(state: State, shop: Shop, orderId: number): StoredOrder {
  const order = createOrder(state, shop, { stub: true, line_items: [] }, orderId);
  state.nextOrderId = Math.max(state.nextOrderId, orderId + 1); // later orders must not reuse the stub's id
  return order;
}

function createFulfillment(state: State, shop: Shop, orderId: number, input: Json): StoredFulfillment {
  const order = shop.orders.get(orderId) ?? stubOrder(state, shop, orderId);
  const fulfillment: StoredFulfillment = {
    ...input,
    id: state.nextFulfillmentId++,
    order_id: orderId,
    status: 'success',
    created_at: now(),
  };
  order.fulfillments.push(fulfillment);
  return fulfillment;
}

/** Order input wrapped in "order" (REST) or bare (custom pushes may send either). */
const orderInput = (body: unknown): Json | null => asObject(asObject(body)?.order) ?? asObject(body);
const fulfillmentInput = (body: unknown): Json => asObject(asObject(body)?.fulfillment) ?? asObject(body) ?? {};

// ---------------------------------------------------------------- storeplatform_a (REST)

function restCreateOrder(ctx: Ctx): Reply {
  const input = asObject(asObject(ctx.body)?.order);
  if (!input || !Array.isArray(input.line_items)) return REST_NO_LINE_ITEMS;
  const { entity, replay } = once(ctx.shop, 'order', ctx.call.idempotencyKey, () =>
    createOrder(ctx.state, ctx.shop, input),
  );
  return json(replay ? 200 : 201, { order: clone(entity) });
}

/** The shop's orders carrying this `source_identifier` (unique on a shop), for lookups. */
const ordersBySource = (shop: Shop, sourceIdentifier: string) =>
  [...shop.orders.values()].filter((order) => order.source_identifier === sourceIdentifier);

/** GET orders.json, filtered by `source_identifier` when given (a lookup). */
function restListOrders(ctx: Ctx): Reply {
  const source = ctx.query.get('source_identifier');
  const orders = source === null ? [...ctx.shop.orders.values()] : ordersBySource(ctx.shop, source);
  return json(200, { orders: clone(orders) });
}

function restGetOrder(ctx: Ctx): Reply {
  const order = ctx.shop.orders.get(Number(ctx.params[0]));
  return order ? json(200, { order: clone(order) }) : NOT_FOUND;
}

function restCreateFulfillment(ctx: Ctx): Reply {
  const orderId = Number(ctx.params[0]);
  const input = fulfillmentInput(ctx.body);
  const { entity, replay } = once(ctx.shop, 'fulfillment', ctx.call.idempotencyKey, () =>
    createFulfillment(ctx.state, ctx.shop, orderId, input),
  );
  return json(replay ? 200 : 201, { fulfillment: clone(entity) });
}

function restListFulfillments(ctx: Ctx): Reply {
  const order = ctx.shop.orders.get(Number(ctx.params[0]));
  return order ? json(200, { fulfillments: clone(order.fulfillments) }) : NOT_FOUND;
}

// ---------------------------------------------------------------- storeplatform_b (Shopify's GraphQL)

const SHOPIFY_PATH = `/admin/api/${SHOPIFY_API_VERSION}/graphql.json`;

/** The shop's store as the Shopify executor sees it; ids are the simulator's, shared with the REST view. */
function shopifyStore(state: State, shop: Shop): ShopifyStore {
  return {
    order: (id) => shop.orders.get(id),
    orders: () => [...shop.orders.values()],
    createOrder: (input) =>
      createOrder(state, shop, {
        ...input,
        line_items: (input.line_items as Json[]).map((line) => ({
          ...line,
          id: state.nextLineItemId++,
          fulfilled_quantity: 0,
        })),
      }),
    orderOrStub: (id) => shop.orders.get(id) ?? stubOrder(state, shop, id),
    nextFulfillmentId: () => state.nextFulfillmentId++,
  };
}

const shopify = async (ctx: Ctx): Promise<Reply> =>
  json(200, await executeShopify(shopifyStore(ctx.state, ctx.shop), ctx.body));

/** A `fail422` shop refuses every mutation with a userError, as Shopify reports a refusal. */
function shopifyRejected(ctx: Ctx): Reply | Promise<Reply> {
  const { write, field } = shopifyOperation(ctx.body);
  if (!write || !field) return shopify(ctx);
  const entity = field === 'fulfillmentCreate' ? 'fulfillment' : 'order';
  return json(200, {
    data: { [field]: { [entity]: null, userErrors: [{ field: ['base'], message: 'rejected by test token' }] } },
  });
}

/** Mutations are writes (test-mode tokens apply); queries are reads and ignore them. */
const shopifyKind = (ctx: Ctx): Kind | null => {
  const { write, field } = shopifyOperation(ctx.body);
  if (!write) return null;
  return field === 'fulfillmentCreate' ? 'fulfillment' : 'order';
};

// ---------------------------------------------------------------- custom (signed push)

// The simulator does not know the shops' webhook secrets: it records the signature but only checks it is there.
const MISSING_SIGNATURE = json(401, { errors: 'missing signature' });

function customCreateOrder(ctx: Ctx): Reply {
  if (!ctx.call.signature) return MISSING_SIGNATURE;
  const input = orderInput(ctx.body);
  if (!input || !Array.isArray(input.line_items)) return REST_NO_LINE_ITEMS;
  const { entity, replay } = once(ctx.shop, 'order', ctx.call.idempotencyKey, () =>
    createOrder(ctx.state, ctx.shop, input),
  );
  return json(replay ? 200 : 201, { id: String(entity.id) });
}

/** GET /reseller/orders?source_identifier=…: signed over its path and query string, as pushes are over their body. */
function customListOrders(ctx: Ctx): Reply {
  if (!ctx.call.signature) return MISSING_SIGNATURE;
  const source = ctx.query.get('source_identifier');
  const orders = source === null ? [...ctx.shop.orders.values()] : ordersBySource(ctx.shop, source);
  return json(200, { orders: orders.map((order) => ({ id: String(order.id) })) });
}

function customCreateFulfillment(ctx: Ctx): Reply {
  if (!ctx.call.signature) return MISSING_SIGNATURE;
  const orderId = Number(ctx.params[0]);
  const input = fulfillmentInput(ctx.body);
  const { entity, replay } = once(ctx.shop, 'fulfillment', ctx.call.idempotencyKey, () =>
    createFulfillment(ctx.state, ctx.shop, orderId, input),
  );
  return json(replay ? 200 : 201, { id: String(entity.id) });
}

// ---------------------------------------------------------------- routing

const order = () => 'order' as const;
const fulfillment = () => 'fulfillment' as const;

/** Paths are matched against the part after `/<shopDomain>`. */
const ROUTES: Route[] = [
  {
    method: 'POST',
    pattern: new RegExp(`^${SHOPIFY_PATH.replace(/\./g, '\\.')}$`),
    kind: shopifyKind,
    handle: shopify,
    rejected: shopifyRejected,
  },
  { method: 'POST', pattern: new RegExp(`^${API}/orders\\.json$`), kind: order, handle: restCreateOrder },
  { method: 'GET', pattern: new RegExp(`^${API}/orders\\.json$`), handle: restListOrders },
  { method: 'GET', pattern: new RegExp(`^${API}/orders/(\\d+)\\.json$`), handle: restGetOrder },
  {
    method: 'POST',
    pattern: new RegExp(`^${API}/orders/(\\d+)/fulfillments\\.json$`),
    kind: fulfillment,
    handle: restCreateFulfillment,
  },
  { method: 'GET', pattern: new RegExp(`^${API}/orders/(\\d+)/fulfillments\\.json$`), handle: restListFulfillments },
  { method: 'POST', pattern: /^\/reseller\/orders$/, kind: order, handle: customCreateOrder },
  { method: 'GET', pattern: /^\/reseller\/orders$/, handle: customListOrders },
  {
    method: 'POST',
    pattern: /^\/reseller\/orders\/(\d+)\/fulfillments$/,
    kind: fulfillment,
    handle: customCreateFulfillment,
  },
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
  state.calls.push(call);
  const reply = await routeCall(state, req, call, query);
  call.status = reply.status;
  if (reply.drop) call.lost = true;
  return reply;
}

async function routeCall(
  state: State,
  req: IncomingMessage,
  call: SimulatorCall,
  query: URLSearchParams,
): Promise<Reply> {
  const route = ROUTES.find((r) => r.method === call.method && r.pattern.test(call.path));
  if (!route) return NOT_FOUND;
  let body: unknown = {};
  if (route.method === 'POST') {
    const text = await readBody(req);
    try {
      body = text.trim() === '' ? {} : parseExact(text);
    } catch {
      return json(400, { errors: 'invalid JSON' });
    }
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
  state.calls = [];
}

/**
 * `POST /_sim/orders` `{shopDomain, order}`: an order placed on a shop without any webhook being sent
 * (PLATFORM-API.md, "The simulator"). Ids given are kept, missing ones assigned; every line gets an
 * id and a fulfilled quantity.
 */
function placeOrder(state: State, body: unknown): Reply {
  const request = asObject(body);
  const input = asObject(request?.order);
  if (typeof request?.shopDomain !== 'string' || !input || !Array.isArray(input.line_items)) {
    return json(400, { errors: 'shopDomain and an order with line_items are required' });
  }
  const shop = shopOf(state, request.shopDomain);
  const id = typeof input.id === 'number' || /^\d+$/.test(String(input.id)) ? Number(input.id) : state.nextOrderId++;
  if (shop.orders.has(id)) return json(409, { errors: `order ${id} exists` });
  state.nextOrderId = Math.max(state.nextOrderId, id + 1);
  const lineItems = input.line_items.map((line) => {
    const item = asObject(line) ?? {};
    return { ...item, id: item.id ?? state.nextLineItemId++, fulfilled_quantity: 0 };
  });
  const order = createOrder(state, shop, { ...input, line_items: lineItems }, id);
  return json(201, { order: clone(order) });
}

async function simCall(
  state: State,
  req: IncomingMessage,
  method: string,
  pathname: string,
  query: URLSearchParams,
): Promise<Reply> {
  if (method === 'GET' && pathname === '/_sim/calls') return json(200, { calls: state.calls });
  if ((method === 'DELETE' && pathname === '/_sim/calls') || (method === 'POST' && pathname === '/_sim/reset')) {
    resetState(state);
    return json(200, { ok: true });
  }
  if (method === 'GET' && pathname === '/_sim/orders') {
    const shopDomain = query.get('shopDomain');
    if (!shopDomain) return json(400, { errors: 'shopDomain is required' });
    return json(200, { orders: [...(state.shops.get(shopDomain)?.orders.values() ?? [])] });
  }
  if (method === 'POST' && pathname === '/_sim/orders') {
    try {
      return placeOrder(state, parseExact(await readBody(req)));
    } catch (error) {
      if (error instanceof BodyTooLarge) throw error;
      return json(400, { errors: 'invalid JSON' });
    }
  }
  return NOT_FOUND;
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
    calls: [],
    nextOrderId: 7001,
    nextFulfillmentId: 9001,
    nextLineItemId: 1_071_823_001,
    slowMs: options.slowMs ?? 30_000,
    timers: new Set(),
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
