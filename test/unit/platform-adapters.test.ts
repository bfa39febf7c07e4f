import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { maxCostExceededBody } from '../../lib/local/shopify-cost.js';
import type { SupplierOrder } from '../../shared/domain/orders.js';
import { signBody, verifySignature } from '../../shared/domain/webhook-checks.js';
import { adapterFor, KNOWN } from '../../shared/platforms/adapters.js';
import { customAdapter } from '../../shared/platforms/custom.js';
import { PlatformError, platformBaseUrl, platformTimeoutMs } from '../../shared/platforms/http.js';
import { classify, type Platform, type ShopConnection, type Tracking } from '../../shared/platforms/port.js';
import { changesPage } from '../../shared/platforms/rest.js';
import { storePlatformAAdapter } from '../../shared/platforms/storeplatform-a.js';
import { orderCreateVariables, storePlatformBAdapter } from '../../shared/platforms/storeplatform-b.js';

interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  json: any;
}

type Responder = (request: RecordedRequest, res: ServerResponse) => void;

const TOKEN = 'shpat_test_token_0123456789';
const SECRET = 'whsec_test_secret_abcdef';
const SHOP = 'supplier.myshopify.com';

const storeOn = (platform: Platform): ShopConnection => ({
  platform,
  shopDomain: SHOP,
  accessToken: TOKEN,
  webhookSecret: SECRET,
});

const order: SupplierOrder = {
  source_identifier: 'reseller.myshopify.com:5551234',
  currency: 'USD',
  email: 'a@example.com',
  line_items: [{ title: 'Mug', sku: 'MUG-1', variant_id: 11, quantity: 2, price: '10.00', vendor: 'Acme' }],
  shipping_lines: [{ title: 'Standard', price: '5.00' }],
  shipping_address: { name: 'A B', address1: '1 Main St', city: 'X', zip: '1', country_code: 'US' },
  tags: 'reseller-order',
};

const tracking: Tracking = {
  company: 'UPS',
  number: '1Z999',
  numbers: ['1Z999'],
  url: 'https://ups.example/1Z999',
  urls: ['https://ups.example/1Z999'],
};

const noCompany: Tracking = { company: null, number: null, numbers: ['1Z1', '1Z2'], url: null, urls: [] };

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(text);
}

let server: Server;
let port: number;
let requests: RecordedRequest[] = [];
let respond: Responder = (_request, res) => answer(res, 500, { errors: 'no scenario' });
const pendingTimers = new Set<NodeJS.Timeout>();
const savedEnv = { url: process.env.PLATFORM_API_URL, timeout: process.env.PLATFORM_TIMEOUT_MS };

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let json: unknown;
      try {
        json = raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
      } catch {
        json = undefined;
      }
      const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, json };
      requests.push(recorded);
      respond(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

beforeEach(() => {
  requests = [];
  process.env.PLATFORM_API_URL = `http://127.0.0.1:${port}/{shopDomain}`;
  delete process.env.PLATFORM_TIMEOUT_MS;
});

afterEach(() => {
  for (const timer of pendingTimers) clearTimeout(timer);
  pendingTimers.clear();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  restoreEnv('PLATFORM_API_URL', savedEnv.url);
  restoreEnv('PLATFORM_TIMEOUT_MS', savedEnv.timeout);
});

function restoreEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

async function caught(promise: Promise<unknown>): Promise<PlatformError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(PlatformError);
    return error as PlatformError;
  }
  throw new Error('expected the call to fail');
}

describe('Platform HTTP: configuration', () => {
  it('builds the base URL from PLATFORM_API_URL at call time', () => {
    // Prepare
    process.env.PLATFORM_API_URL = 'http://sim.local:3001/{shopDomain}/';

    // Act + Assess
    expect(platformBaseUrl(SHOP)).toBe(`http://sim.local:3001/${SHOP}`);
  });

  it('defaults to https://{shopDomain} and a 10 s timeout', () => {
    // Prepare
    delete process.env.PLATFORM_API_URL;
    process.env.PLATFORM_TIMEOUT_MS = 'not a number';

    // Act + Assess
    expect(platformBaseUrl(SHOP)).toBe(`https://${SHOP}`);
    expect(platformTimeoutMs()).toBe(10_000);
  });
});

describe('Platform adapter: storeplatform_a (REST)', () => {
  const adapter = adapterFor('storeplatform_a');

  it('creates an order with POST /admin/api/2025-07/orders.json and answers its id as a string', async () => {
    // Prepare
    respond = (_request, res) => answer(res, 201, { order: { id: 7002, ...order } });

    // Act
    const result = await adapter.createOrder(storeOn('storeplatform_a'), order, 'sj_123');

    // Assess
    expect(result).toEqual({ orderId: '7002', status: 201 });
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe(`/${SHOP}/admin/api/2025-07/orders.json`);
    expect(request.headers['x-platform-access-token']).toBe(TOKEN);
    expect(request.headers['idempotency-key']).toBe('sj_123');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.json).toEqual({ order });
  });

  it('creates a fulfillment with the REST body, "Unknown" for a missing company and notify_customer', async () => {
    // Prepare
    respond = (_request, res) => answer(res, 201, { fulfillment: { id: 9100, order_id: 7002, status: 'success' } });

    // Act
    const result = await adapter.createFulfillment(storeOn('storeplatform_a'), '7002', noCompany, 'ful_9001');

    // Assess
    expect(result).toEqual({ fulfillmentId: '9100' });
    const [request] = requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe(`/${SHOP}/admin/api/2025-07/orders/7002/fulfillments.json`);
    expect(request.headers['x-platform-access-token']).toBe(TOKEN);
    expect(request.headers['idempotency-key']).toBe('ful_9001');
    expect(request.json).toEqual({
      fulfillment: {
        tracking_company: 'Unknown',
        tracking_number: '1Z1',
        tracking_numbers: ['1Z1', '1Z2'],
        tracking_url: null,
        tracking_urls: [],
        notify_customer: true,
      },
    });
  });

  it('passes full tracking through unchanged', async () => {
    // Prepare
    respond = (_request, res) => answer(res, 200, { fulfillment: { id: 'f_1' } });

    // Act
    await adapter.createFulfillment(storeOn('storeplatform_a'), '7002', tracking, 'ful_1');

    // Assess
    expect(requests[0].json.fulfillment).toEqual({
      tracking_company: 'UPS',
      tracking_number: '1Z999',
      tracking_numbers: ['1Z999'],
      tracking_url: 'https://ups.example/1Z999',
      tracking_urls: ['https://ups.example/1Z999'],
      notify_customer: true,
    });
  });

  it('reduces a GraphQL order gid to its number in the REST path', async () => {
    // Prepare
    respond = (_request, res) => answer(res, 201, { fulfillment: { id: 1 } });

    // Act
    await adapter.createFulfillment(storeOn('storeplatform_a'), 'gid://platform/Order/7002', tracking, 'ful_1');

    // Assess
    expect(requests[0].path).toBe(`/${SHOP}/admin/api/2025-07/orders/7002/fulfillments.json`);
  });

  it('maps a 422 to a non-retryable error carrying the platform reason', async () => {
    // Prepare
    respond = (_request, res) => answer(res, 422, { errors: { line_items: ["can't be blank"] } });

    // Act
    const error = await caught(adapter.createOrder(storeOn('storeplatform_a'), order, 'sj_1'));

    // Assess
    expect(error.status).toBe(422);
    expect(error.retryable).toBe(false);
    expect(error.message).toBe("storeplatform_a answered 422: line_items can't be blank");
  });

  it('treats a 2xx without an order id as a retryable unexpected answer', async () => {
    // Prepare
    respond = (_request, res) => answer(res, 201, { something: 'else' });

    // Act
    const error = await caught(adapter.createOrder(storeOn('storeplatform_a'), order, 'sj_1'));

    // Assess
    expect(error.retryable).toBe(true);
    expect(error.message).toBe('storeplatform_a answered 201 with no order id');
  });
});

describe("Platform adapter: storeplatform_b (Shopify's Admin GraphQL API)", () => {
  const adapter = adapterFor('storeplatform_b');
  const PATH = `/${SHOP}/admin/api/2026-10/graphql.json`;
  const graphqlAnswer =
    (byOperation: Record<string, unknown>): Responder =>
    (request, res) => {
      const name = /^(?:query|mutation) (\w+)/.exec(request.json.query)?.[1] ?? '';
      answer(res, 200, byOperation[name] ?? { errors: [{ message: `unexpected ${name}` }] });
    };
  const fulfillmentOrders = (fulfillments: unknown[] = []) => ({
    data: {
      order: {
        id: 'gid://shopify/Order/42',
        fulfillmentOrders: {
          nodes: [
            {
              id: 'gid://shopify/FulfillmentOrder/1',
              status: 'OPEN',
              lineItems: {
                nodes: [
                  {
                    id: 'gid://shopify/FulfillmentOrderLineItem/11',
                    remainingQuantity: 2,
                    lineItem: { id: 'gid://shopify/LineItem/7' },
                  },
                  {
                    id: 'gid://shopify/FulfillmentOrderLineItem/12',
                    remainingQuantity: 0,
                    lineItem: { id: 'gid://shopify/LineItem/8' },
                  },
                ],
              },
            },
            {
              id: 'gid://shopify/FulfillmentOrder/2',
              status: 'CLOSED',
              lineItems: {
                nodes: [
                  {
                    id: 'gid://shopify/FulfillmentOrderLineItem/13',
                    remainingQuantity: 1,
                    lineItem: { id: 'gid://shopify/LineItem/9' },
                  },
                ],
              },
            },
          ],
        },
        fulfillments,
      },
    },
  });
  const created = {
    data: {
      fulfillmentCreate: { fulfillment: { id: 'gid://shopify/Fulfillment/5', status: 'SUCCESS' }, userErrors: [] },
    },
  };

  it('places the order with orderCreate, Shopify’s token header and no key', async () => {
    // Prepare
    respond = graphqlAnswer({
      orderCreate: {
        data: {
          orderCreate: {
            order: { id: 'gid://shopify/Order/42', lineItems: { nodes: [{ id: 'gid://shopify/LineItem/7' }] } },
            userErrors: [],
          },
        },
      },
    });

    // Act
    const result = await adapter.createOrder(storeOn('storeplatform_b'), order, 'sj_456');

    // Assess
    expect(adapter.takesIdempotencyKeys).toBe(false);
    expect(result).toEqual({ orderId: '42', status: 200, lineItemIds: ['7'] });
    const [request] = requests;
    expect(request).toMatchObject({ method: 'POST', path: PATH });
    expect(request.headers['x-shopify-access-token']).toBe(TOKEN);
    expect(request.headers['x-platform-access-token']).toBeUndefined();
    expect(request.headers['idempotency-key']).toBeUndefined();
    expect(request.json.query).toContain('orderCreate(order: $order, options: $options)');
    expect(request.json.variables).toEqual(orderCreateVariables(order));
    expect(request.json.variables.order).toMatchObject({
      sourceIdentifier: order.source_identifier,
      tags: ['reseller-order'],
    });
  });

  it('ships what remains of the open fulfillment orders, with every tracking number', async () => {
    // Prepare
    respond = graphqlAnswer({ orderFulfillmentOrders: fulfillmentOrders(), fulfillmentCreate: created });

    // Act
    const result = await adapter.createFulfillment(storeOn('storeplatform_b'), '42', noCompany, 'ful_9001');

    // Assess
    expect(result).toEqual({ fulfillmentId: '5' });
    expect(requests.map((r) => r.json.variables)).toEqual([
      { id: 'gid://shopify/Order/42', first: 5, lines: 50 },
      {
        fulfillment: {
          lineItemsByFulfillmentOrder: [
            {
              fulfillmentOrderId: 'gid://shopify/FulfillmentOrder/1',
              fulfillmentOrderLineItems: [{ id: 'gid://shopify/FulfillmentOrderLineItem/11', quantity: 2 }],
            },
          ],
          trackingInfo: { company: 'Unknown', numbers: ['1Z1', '1Z2'], urls: [] },
          notifyCustomer: true,
        },
      },
    ]);
  });

  it('ships only the order lines asked for, never more than remains', async () => {
    respond = graphqlAnswer({ orderFulfillmentOrders: fulfillmentOrders(), fulfillmentCreate: created });

    await adapter.createFulfillment(storeOn('storeplatform_b'), '42', tracking, 'ful_1', {
      lineItems: [
        { id: '7', quantity: 5 },
        { id: '9', quantity: 1 },
      ],
    });

    expect(requests[1].json.variables.fulfillment.lineItemsByFulfillmentOrder).toEqual([
      {
        fulfillmentOrderId: 'gid://shopify/FulfillmentOrder/1',
        fulfillmentOrderLineItems: [{ id: 'gid://shopify/FulfillmentOrderLineItem/11', quantity: 2 }],
      },
    ]);
  });

  it('sending again, finds the parcel an earlier attempt made (same tracking) instead of making a second', async () => {
    const earlier = {
      id: 'gid://shopify/Fulfillment/77',
      status: 'SUCCESS',
      trackingInfo: [{ company: 'UPS', number: '1Z999', url: null }],
    };
    respond = graphqlAnswer({
      orderFulfillmentTracking: fulfillmentOrders([earlier]),
      orderFulfillmentOrders: fulfillmentOrders(),
      fulfillmentCreate: created,
    });

    const resent = await adapter.createFulfillment(storeOn('storeplatform_b'), '42', tracking, 'ful_1', {
      resend: true,
    });
    expect(resent).toEqual({ fulfillmentId: '77' });
    expect(requests).toHaveLength(1);
    expect(requests[0].json.variables).toEqual({ id: 'gid://shopify/Order/42', first: 50 });

    // A first attempt does not look: a second parcel may carry the same number.
    requests = [];
    expect(await adapter.createFulfillment(storeOn('storeplatform_b'), '42', tracking, 'ful_2')).toEqual({
      fulfillmentId: '5',
    });
    expect(requests).toHaveLength(2);
  });

  it('refuses, without a mutation, an order with nothing left to ship or one that does not exist', async () => {
    const closed = fulfillmentOrders();
    closed.data.order.fulfillmentOrders.nodes[0].status = 'CLOSED';
    respond = graphqlAnswer({ orderFulfillmentOrders: closed });
    expect(await caught(adapter.createFulfillment(storeOn('storeplatform_b'), '42', tracking, 'ful_1'))).toMatchObject({
      status: 422,
      retryable: false,
      message: 'storeplatform_b answered 422: nothing of the order is left to fulfill',
    });
    respond = graphqlAnswer({ orderFulfillmentOrders: { data: { order: null } } });
    expect(await caught(adapter.createFulfillment(storeOn('storeplatform_b'), '42', tracking, 'ful_1'))).toMatchObject({
      status: 404,
      retryable: false,
    });
  });

  it('maps userErrors to a non-retryable 422 with Shopify’s message', async () => {
    respond = (_request, res) =>
      answer(res, 200, {
        data: {
          orderCreate: { order: null, userErrors: [{ field: ['order', 'lineItems'], message: "can't be blank" }] },
        },
      });

    const error = await caught(adapter.createOrder(storeOn('storeplatform_b'), order, 'sj_1'));

    expect(error).toMatchObject({ status: 422, retryable: false });
    expect(error.message).toBe("storeplatform_b answered 422: order.lineItems: can't be blank");
  });

  it('maps other top-level errors (a document Shopify will not run) to a permanent refusal', async () => {
    respond = (_request, res) =>
      answer(res, 200, { errors: [{ message: "Field 'bogus' doesn't exist on type 'Mutation'" }] });

    const error = await caught(adapter.createOrder(storeOn('storeplatform_b'), order, 'sj_1'));

    expect(error).toMatchObject({ retryable: false, outcomeUnknown: false });
    expect(error.message).toBe("storeplatform_b refused the request: Field 'bogus' doesn't exist on type 'Mutation'");
  });

  it('maps MAX_COST_EXCEEDED (a document over 1,000 points, never run) to a permanent refusal', async () => {
    respond = (_request, res) => answer(res, 200, maxCostExceededBody(1234));

    const error = await caught(adapter.ordersChangedSince(storeOn('storeplatform_b'), '2026-01-01T00:00:00Z'));

    expect(error).toMatchObject({ retryable: false, outcomeUnknown: false });
    expect(error.message).toMatch(/^storeplatform_b refused the request: Query cost is 1234, which exceeds/);
    expect(classify(error, 'internal')).toMatchObject({ kind: 'permanent' });
  });

  it('maps THROTTLED (HTTP 200) to a 429 whose wait is the missing cost over the restore rate', async () => {
    respond = (_request, res) =>
      answer(res, 200, {
        errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED' } }],
        extensions: {
          cost: {
            requestedQueryCost: 50,
            throttleStatus: { maximumAvailable: 2000, currentlyAvailable: 10, restoreRate: 20 },
          },
        },
      });

    const error = await caught(adapter.createOrder(storeOn('storeplatform_b'), order, 'sj_1'));

    expect(error).toMatchObject({ status: 429, retryable: true, retryAfterSeconds: 2, outcomeUnknown: false });
  });

  it('reports a mutation answered 5xx as an unknown outcome (Shopify may have acted), a query as not', async () => {
    respond = (_request, res) => answer(res, 503, { errors: 'Service Unavailable' });

    const create = await caught(adapter.createOrder(storeOn('storeplatform_b'), order, 'sj_1'));
    const lookup = await caught(adapter.findOrder(storeOn('storeplatform_b'), 'x:1'));

    expect(create).toMatchObject({ status: 503, retryable: true, outcomeUnknown: true });
    expect(lookup).toMatchObject({ status: 503, retryable: true, outcomeUnknown: false });
  });

  it.each([
    [402, 'the shop is frozen (its plan is unpaid)'],
    [423, 'the shop is locked'],
  ])('maps HTTP %i to a permanent refusal that says why', async (status, why) => {
    respond = (_request, res) => answer(res, status, { errors: 'Unavailable Shop' });

    const error = await caught(adapter.createOrder(storeOn('storeplatform_b'), order, 'sj_1'));

    expect(error).toMatchObject({ status, retryable: false });
    expect(error.message).toBe(`storeplatform_b answered ${status}: Unavailable Shop (${why})`);
  });
});

describe('Platform adapter: custom (signed push)', () => {
  const adapter = adapterFor('custom');

  it('pushes the order to /reseller/orders signed over the exact bytes sent', async () => {
    // Prepare
    respond = (_request, res) => answer(res, 201, { id: 'ord_77' });

    // Act
    const result = await adapter.createOrder(storeOn('custom'), order, 'sj_789');

    // Assess
    expect(result).toEqual({ orderId: 'ord_77', status: 201 });
    const [request] = requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe(`/${SHOP}/reseller/orders`);
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(request.headers['idempotency-key']).toBe('sj_789');
    expect(request.headers['content-type']).toBe('application/json');
    const signature = request.headers['x-platform-hmac-sha256'] as string;
    expect(signature).toBe(signBody(SECRET, request.raw));
    expect(verifySignature(SECRET, request.raw, signature)).toBe(true);
    expect(request.json).toEqual({ order });
  });

  it('signs non-ASCII bodies over their UTF-8 bytes', async () => {
    // Prepare
    respond = (_request, res) => answer(res, 201, { id: 5 });
    const accented: SupplierOrder = { ...order, line_items: [{ ...order.line_items[0], title: 'Tasse à café ☕' }] };

    // Act
    const result = await adapter.createOrder(storeOn('custom'), accented, 'sj_1');

    // Assess
    expect(result).toEqual({ orderId: '5', status: 201 });
    expect(verifySignature(SECRET, requests[0].raw, requests[0].headers['x-platform-hmac-sha256'] as string)).toBe(
      true,
    );
    expect(requests[0].json.order.line_items[0].title).toBe('Tasse à café ☕');
  });

  it('posts a fulfillment to /reseller/orders/{orderId}/fulfillments with the REST body', async () => {
    // Prepare
    respond = (_request, res) => answer(res, 201, { id: 'ful_x' });

    // Act
    const result = await adapter.createFulfillment(storeOn('custom'), 'ord_77', noCompany, 'ful_9001');

    // Assess
    expect(result).toEqual({ fulfillmentId: 'ful_x' });
    const [request] = requests;
    expect(request.path).toBe(`/${SHOP}/reseller/orders/ord_77/fulfillments`);
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(request.headers['idempotency-key']).toBe('ful_9001');
    expect(verifySignature(SECRET, request.raw, request.headers['x-platform-hmac-sha256'] as string)).toBe(true);
    expect(request.json.fulfillment).toMatchObject({ tracking_company: 'Unknown', notify_customer: true });
  });
});

describe('Platform adapters loaded on demand (adapters.ts)', () => {
  it.each([
    ['storeplatform_a', storePlatformAAdapter],
    ['storeplatform_b', storePlatformBAdapter],
    ['custom', customAdapter],
  ] as const)('%s: what is known before it loads is what the adapter has', (platform, loaded) => {
    const lazy = adapterFor(platform);
    expect(lazy.takesIdempotencyKeys).toBe(loaded.takesIdempotencyKeys);
    expect(KNOWN[platform].takesIdempotencyKeys).toBe(loaded.takesIdempotencyKeys);
    const calls = (adapter: object) =>
      Object.entries(adapter)
        .filter(([, value]) => typeof value === 'function')
        .map(([name]) => name)
        .sort();
    expect(calls(lazy)).toEqual(calls(loaded));
  });
});

describe.each(['storeplatform_a', 'storeplatform_b', 'custom'] as const)('Platform errors: %s', (platform) => {
  const adapter = adapterFor(platform);
  const store = storeOn(platform);

  it.each([
    [401, { errors: 'Invalid API key or access token' }, 'Invalid API key or access token'],
    [404, { errors: 'Not Found' }, 'Not Found'],
    [422, { errors: { line_items: ["can't be blank"] } }, "line_items can't be blank"],
  ])('maps HTTP %i to a non-retryable error with the platform reason', async (status, body, reason) => {
    // Prepare
    respond = (_request, res) => answer(res, status, body);

    // Act
    const error = await caught(adapter.createOrder(store, order, 'sj_1'));

    // Assess
    expect(error.status).toBe(status);
    expect(error.retryable).toBe(false);
    expect(error.platform).toBe(platform);
    expect(error.message).toBe(`${platform} answered ${status}: ${reason}`);
    expect(error.retryAfterSeconds).toBeUndefined();
  });

  it('maps 429 to a retryable error with retryAfterSeconds from Retry-After', async () => {
    // Prepare
    respond = (_request, res) => answer(res, 429, { errors: 'Exceeded 2 calls per second' }, { 'Retry-After': '7' });

    // Act
    const error = await caught(adapter.createOrder(store, order, 'sj_1'));

    // Assess
    expect(error.status).toBe(429);
    expect(error.retryable).toBe(true);
    expect(error.retryAfterSeconds).toBe(7);
  });

  it('maps 500 and an HTML 503 to retryable errors', async () => {
    // Prepare
    respond = (_request, res) => answer(res, 500, { errors: 'Internal error' });

    // Act
    const error500 = await caught(adapter.createFulfillment(store, '7002', tracking, 'ful_1'));
    respond = (_request, res) => {
      res.writeHead(503, { 'Content-Type': 'text/html' });
      res.end('<html><body>Service Unavailable</body></html>');
    };
    const error503 = await caught(adapter.createFulfillment(store, '7002', tracking, 'ful_1'));

    // Assess
    expect(error500).toMatchObject({ status: 500, retryable: true });
    expect(error500.message).toBe(`${platform} answered 500: Internal error`);
    expect(error503).toMatchObject({ status: 503, retryable: true });
    expect(error503.message).toBe(`${platform} answered 503: HTTP 503`);
  });

  it('maps a timeout to a retryable error with status 0', async () => {
    // Prepare
    process.env.PLATFORM_TIMEOUT_MS = '100';
    respond = (_request, res) => {
      pendingTimers.add(setTimeout(() => answer(res, 201, { order: { id: 1 }, id: 1 }), 2_000));
    };

    // Act
    const started = Date.now();
    const error = await caught(adapter.createOrder(store, order, 'sj_1'));

    // Assess
    expect(error.status).toBe(0);
    expect(error.retryable).toBe(true);
    expect(error.message).toBe(`${platform} did not answer within 100 ms`);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('maps an unreachable platform to a retryable error with status 0', async () => {
    // Prepare: a port that was just free
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    process.env.PLATFORM_API_URL = `http://127.0.0.1:${closedPort}/{shopDomain}`;

    // Act
    const error = await caught(adapter.createOrder(store, order, 'sj_1'));

    // Assess
    expect(error.status).toBe(0);
    expect(error.retryable).toBe(true);
    expect(error.message).toBe(`${platform} could not be reached: ECONNREFUSED`);
  });

  it('never puts the access token or the secret in an error message, even when the platform echoes them', async () => {
    // Prepare
    respond = (request, res) =>
      answer(res, 401, {
        errors: `Invalid access token ${TOKEN} (headers: ${JSON.stringify(request.headers)}, secret ${SECRET})`,
      });

    // Act
    const error = await caught(adapter.createOrder(store, order, 'sj_1'));

    // Assess
    expect(error.status).toBe(401);
    for (const text of [error.message, String(error), error.stack ?? '', JSON.stringify(error)]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(SECRET);
    }
    expect(error.message).toContain('[redacted]');
  });
});

describe('Platform adapters: lookups by source_identifier (PLATFORM-API.md, "Lookups")', () => {
  const SOURCE = 'reseller.myshopify.com:5551234';
  const query = `?source_identifier=${encodeURIComponent(SOURCE)}`;

  it('storeplatform_a: GET orders.json?source_identifier=…, the first order that carries it', async () => {
    respond = (_request, res) =>
      answer(res, 200, {
        orders: [
          { id: 1, source_identifier: 'other:1' },
          { id: 7002, source_identifier: SOURCE },
        ],
      });

    const found = await adapterFor('storeplatform_a').findOrder(storeOn('storeplatform_a'), SOURCE);

    expect(found).toEqual({ orderId: '7002' });
    expect(requests[0]).toMatchObject({ method: 'GET', path: `/${SHOP}/admin/api/2025-07/orders.json${query}` });
    expect(requests[0].headers['x-platform-access-token']).toBe(TOKEN);
    expect(requests[0].headers['idempotency-key']).toBeUndefined();
  });

  it('storeplatform_a and custom: the lines found (sku, quantity, vendor), all of them or none', async () => {
    const line = (quantity: unknown) => ({ id: 9, sku: 'MUG-1', quantity, vendor: 'Acme', price: '1.00' });
    for (const platform of ['storeplatform_a', 'custom'] as const) {
      respond = (_request, res) => answer(res, 200, { orders: [{ id: 7002, line_items: [line(2), line(1)] }] });
      expect(await adapterFor(platform).findOrder(storeOn(platform), SOURCE)).toEqual({
        orderId: '7002',
        lineItemIds: ['9', '9'],
        lines: [
          { sku: 'MUG-1', quantity: 2, vendor: 'Acme' },
          { sku: 'MUG-1', quantity: 1, vendor: 'Acme' },
        ],
      });
      // A line without a whole quantity: the lines cannot be compared, so none are answered.
      respond = (_request, res) => answer(res, 200, { orders: [{ id: 7002, line_items: [line(2), line('1')] }] });
      expect(await adapterFor(platform).findOrder(storeOn(platform), SOURCE)).not.toHaveProperty('lines');
    }
  });

  it('storeplatform_a: null for an empty list', async () => {
    respond = (_request, res) => answer(res, 200, { orders: [] });
    expect(await adapterFor('storeplatform_a').findOrder(storeOn('storeplatform_a'), SOURCE)).toBeNull();
  });

  it('storeplatform_b: the orders query with the quoted identifier, answering number and lines', async () => {
    respond = (_request, res) =>
      answer(res, 200, {
        data: {
          orders: {
            nodes: [
              {
                id: 'gid://shopify/Order/42',
                sourceIdentifier: "it's:1",
                lineItems: { nodes: [{ id: 'gid://shopify/LineItem/7', sku: null, quantity: 2, vendor: 'Acme' }] },
              },
            ],
          },
        },
      });

    const found = await adapterFor('storeplatform_b').findOrder(storeOn('storeplatform_b'), "it's:1");

    expect(found).toEqual({ orderId: '42', lineItemIds: ['7'], lines: [{ sku: null, quantity: 2, vendor: 'Acme' }] });
    expect(requests[0].json.query).toMatch(/orders\(first: 1, query: \$query\)/);
    expect(requests[0].json.variables).toEqual({ query: "source_identifier:'it\\'s:1'", lines: 250 });
  });

  it('storeplatform_b: null for no nodes; a throttled lookup is a retryable 429', async () => {
    respond = (_request, res) => answer(res, 200, { data: { orders: { nodes: [] } } });
    expect(await adapterFor('storeplatform_b').findOrder(storeOn('storeplatform_b'), SOURCE)).toBeNull();

    respond = (_request, res) =>
      answer(res, 200, { data: { orders: { nodes: [{ id: 'gid://shopify/Order/1', sourceIdentifier: 'other:1' }] } } });
    expect(await adapterFor('storeplatform_b').findOrder(storeOn('storeplatform_b'), SOURCE)).toBeNull();

    respond = (_request, res) =>
      answer(res, 200, { errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED' } }] });
    const error = await adapterFor('storeplatform_b')
      .findOrder(storeOn('storeplatform_b'), SOURCE)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, retryable: true });
  });

  it('custom: GET /reseller/orders?source_identifier=…, signed over its path and query string', async () => {
    respond = (_request, res) => answer(res, 200, { orders: [{ id: 'ord_77' }] });

    const found = await adapterFor('custom').findOrder(storeOn('custom'), SOURCE);

    expect(found).toEqual({ orderId: 'ord_77' });
    const [request] = requests;
    expect(request).toMatchObject({ method: 'GET', path: `/${SHOP}/reseller/orders${query}` });
    expect(request.headers['x-platform-hmac-sha256']).toBe(signBody(SECRET, `/reseller/orders${query}`));
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('treats an answer without a list of orders as an unknown outcome', async () => {
    respond = (_request, res) => answer(res, 200, { something: 'else' });
    const error = await adapterFor('storeplatform_a')
      .findOrder(storeOn('storeplatform_a'), SOURCE)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({ retryable: true, outcomeUnknown: true });
  });
});

describe('adapterFor', () => {
  it('answers one adapter per platform', () => {
    const adapters = (['storeplatform_a', 'storeplatform_b', 'custom'] as const).map(adapterFor);
    expect(new Set(adapters).size).toBe(3);
    for (const adapter of adapters) {
      expect(typeof adapter.createOrder).toBe('function');
      expect(typeof adapter.findOrder).toBe('function');
      expect(typeof adapter.createFulfillment).toBe('function');
      for (const call of [
        adapter.updateFulfillmentTracking,
        adapter.cancelFulfillment,
        adapter.cancelOrder,
        adapter.updateOrder,
        adapter.ordersChangedSince,
      ]) {
        expect(typeof call).toBe('function');
      }
    }
  });

  it('throws for an unknown platform', () => {
    expect(() => adapterFor('shopify' as Platform)).toThrow('no adapter for platform "shopify"');
  });
});

describe('Orders changed since: a page the watermark can follow', () => {
  it('takes a REST page whose orders all have an id and a time, and refuses one whose time is no instant', () => {
    const order = { id: 7, updated_at: '2026-11-25T10:00:00+05:30', line_items: [{ id: 1 }] };
    expect(changesPage({ orders: [order], next_page_info: null })).toMatchObject({
      orders: [{ updatedAt: '2026-11-25T10:00:00+05:30', payload: { id: '7' } }],
      nextCursor: null,
    });
    // The poll fails loudly (counted, alarmed) rather than moving its watermark to nowhere.
    expect(changesPage({ orders: [order, { ...order, id: 8, updated_at: 'yesterday' }] })).toBeUndefined();
    expect(changesPage({ orders: [{ ...order, updated_at: 1732530000 }] })).toBeUndefined();
  });
});
