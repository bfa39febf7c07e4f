import { startPlatformSimulator } from '../../lib/local/platform-simulator';
import { SHOPIFY_DOCUMENTS } from '../../shared/platforms/storeplatform-b-documents';
import { API, type CallOptions, SHOP, shopifyOrderInput, simulatorClient } from './simulator-client.js';

const orderBody = (externalId = '1001') => ({
  order: {
    source_identifier: `reseller.example.com:${externalId}`,
    currency: 'EUR',
    email: 'buyer@example.com',
    line_items: [{ title: 'Mug', sku: 'MUG-1', variant_id: 42, quantity: 2, price: '9.50', vendor: 'Acme' }],
    shipping_lines: [{ title: 'Standard', price: '4.90' }],
    shipping_address: { city: 'Berlin' },
    tags: 'reseller-order',
  },
});

const fulfillmentBody = {
  fulfillment: {
    tracking_company: 'DHL',
    tracking_number: 'TRK1',
    tracking_numbers: ['TRK1'],
    tracking_url: 'https://track.example/TRK1',
    tracking_urls: ['https://track.example/TRK1'],
    notify_customer: true,
  },
};

const {
  orderCreate: ORDER_CREATE,
  orderFulfillmentOrders: FULFILLMENT_ORDERS,
  orderFulfillmentTracking: FULFILLMENT_TRACKING,
  fulfillmentCreate: FULFILLMENT_CREATE,
} = SHOPIFY_DOCUMENTS;

/** An `OrderCreateOrderInput`, as the storeplatform_b adapter sends it. */
const shopifyOrder = (externalId = '1001', quantity = 2) =>
  shopifyOrderInput(`reseller.example.com:${externalId}`, quantity, {
    line: { vendor: 'Acme', properties: [{ name: 'Engraving', value: 'Happy Birthday' }] },
    order: { shippingLines: [{ title: 'Standard', priceSet: { shopMoney: { amount: '4.90', currencyCode: 'EUR' } } }] },
  });

describe('platform simulator', () => {
  const { sim, call, rest, graphql, reseller, simOrders } = simulatorClient({ headers: true });
  const push = (path: string, body: unknown, options: CallOptions = {}) => reseller(path, { ...options, body });

  describe('storeplatform_a REST', () => {
    it('creates an order and answers the same order with 200 for a repeated idempotency key', async () => {
      const first = await rest('/orders.json', { body: orderBody(), key: 'job-1' });
      expect(first.status).toBe(201);
      expect(first.json.order).toMatchObject({ ...orderBody().order, fulfillments: [] });
      expect(typeof first.json.order.id).toBe('number');
      expect(first.json.order.created_at).toEqual(expect.any(String));

      const again = await rest('/orders.json', { body: orderBody(), key: 'job-1' });
      expect(again.status).toBe(200);
      expect(again.json.order).toEqual(first.json.order);

      const other = await rest('/orders.json', { body: orderBody('1002'), key: 'job-2' });
      expect(other.status).toBe(201);
      expect(other.json.order.id).toBeGreaterThan(first.json.order.id);
    });

    it('scopes idempotency keys per shop', async () => {
      const a = await call(`/shop-a.example${API}/orders.json`, { body: orderBody(), key: 'same' });
      const b = await call(`/shop-b.example${API}/orders.json`, { body: orderBody(), key: 'same' });
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(b.json.order.id).not.toBe(a.json.order.id);
    });

    it('reads one order, lists orders and answers 404 for an unknown order', async () => {
      const { json } = await rest('/orders.json', { body: orderBody(), key: 'job-1' });
      const got = await rest(`/orders/${json.order.id}.json`, { token: null });
      expect(got.status).toBe(200);
      expect(got.json.order).toEqual(json.order);

      const list = await rest('/orders.json', { token: null });
      expect(list.json.orders.map((o: { id: number }) => o.id)).toEqual([json.order.id]);

      const missing = await rest('/orders/1.json');
      expect(missing.status).toBe(404);
      expect(missing.json).toEqual({ errors: 'Not Found' });
    });

    it('rejects an order without line items with 422', async () => {
      const { status, json } = await rest('/orders.json', { body: { order: { currency: 'EUR' } }, key: 'job-1' });
      expect(status).toBe(422);
      expect(json).toEqual({ errors: { line_items: ["can't be blank"] } });
    });

    it('creates a fulfillment once per idempotency key and lists it on the order', async () => {
      const { json } = await rest('/orders.json', { body: orderBody(), key: 'job-1' });
      const id = json.order.id;
      const first = await rest(`/orders/${id}/fulfillments.json`, { body: fulfillmentBody, key: 'ful-1' });
      expect(first.status).toBe(201);
      expect(first.json.fulfillment).toMatchObject({ ...fulfillmentBody.fulfillment, order_id: id, status: 'success' });

      const again = await rest(`/orders/${id}/fulfillments.json`, { body: fulfillmentBody, key: 'ful-1' });
      expect(again.status).toBe(200);
      expect(again.json.fulfillment).toEqual(first.json.fulfillment);

      const list = await rest(`/orders/${id}/fulfillments.json`);
      expect(list.json.fulfillments).toEqual([first.json.fulfillment]);
      const order = await rest(`/orders/${id}.json`);
      expect(order.json.order.fulfillments).toEqual([first.json.fulfillment]);
    });

    it('creates a stub order when a fulfillment names an order it has never seen', async () => {
      const { status, json } = await rest('/orders/555/fulfillments.json', { body: fulfillmentBody, key: 'ful-1' });
      expect(status).toBe(201);
      expect(json.fulfillment.order_id).toBe(555);

      const order = await rest('/orders/555.json');
      expect(order.status).toBe(200);
      expect(order.json.order).toMatchObject({ id: 555, stub: true });
      expect(order.json.order.fulfillments).toHaveLength(1);
    });
  });

  describe("storeplatform_b: Shopify's Admin GraphQL schema, executed", () => {
    it('creates an order with orderCreate, gives its lines ids, and keeps it in the REST shape', async () => {
      const first = await graphql(ORDER_CREATE, shopifyOrder());
      expect(first.status).toBe(200);
      expect(first.json.data.orderCreate.userErrors).toEqual([]);
      const { id, lineItems } = first.json.data.orderCreate.order;
      expect(id).toMatch(/^gid:\/\/shopify\/Order\/\d+$/);
      expect(lineItems.nodes).toEqual([{ id: expect.stringMatching(/^gid:\/\/shopify\/LineItem\/\d+$/) }]);

      const [stored] = await simOrders();
      expect(stored).toMatchObject({
        id: Number(id.split('/').pop()),
        source_identifier: 'reseller.example.com:1001',
        tags: 'reseller-order',
        line_items: [
          {
            id: Number(lineItems.nodes[0].id.split('/').pop()),
            title: 'Mug',
            quantity: 2,
            price: '9.50',
            fulfilled_quantity: 0,
            properties: [{ name: 'Engraving', value: 'Happy Birthday' }],
          },
        ],
        shipping_lines: [{ title: 'Standard', price: '4.90' }],
      });
    });

    it('takes no idempotency key: the same create sent twice makes two orders, as on Shopify', async () => {
      await graphql(ORDER_CREATE, shopifyOrder());
      await graphql(ORDER_CREATE, shopifyOrder(), { key: 'ignored' });
      expect(await simOrders()).toHaveLength(2);
      expect(
        sim()
          .calls()
          .map((c) => c.idempotencyKey),
      ).toEqual([null, 'ignored']);
    });

    it('refuses, as Shopify does, a document or variables the schema does not allow, and creates nothing', async () => {
      const invented = `mutation orderCreate($order: OrderInput!, $idempotencyKey: String!) {
        orderCreate(order: $order, idempotencyKey: $idempotencyKey) { order { id } userErrors { field message } } }`;
      const old = await graphql(invented, { order: {}, idempotencyKey: 'k' });
      expect(old.status).toBe(200);
      expect(old.json.errors.map((e: { message: string }) => e.message)).toEqual(
        expect.arrayContaining([expect.stringContaining('Unknown argument "idempotencyKey"')]),
      );
      const badVariables = shopifyOrder();
      (badVariables.order.lineItems[0] as Record<string, unknown>).quantity = 'two';
      expect((await graphql(ORDER_CREATE, badVariables)).json.errors).toHaveLength(1);
      expect(await simOrders()).toEqual([]);
    });

    it('reports an order without line items as userErrors', async () => {
      const { status, json } = await graphql(ORDER_CREATE, { order: { currency: 'EUR' } });
      expect(status).toBe(200);
      expect(json.data.orderCreate).toEqual({
        order: null,
        userErrors: [{ field: ['order', 'lineItems'], message: "Line items can't be blank" }],
      });
    });

    it('ships through fulfillment orders, never more than remains, and shows it on the REST order', async () => {
      const created = await graphql(ORDER_CREATE, shopifyOrder('1001', 3));
      const orderId: string = created.json.data.orderCreate.order.id;
      const read = async () =>
        (await graphql(FULFILLMENT_ORDERS, { id: orderId, first: 5, lines: 50 })).json.data.order;
      const [fo] = (await read()).fulfillmentOrders.nodes;
      expect(fo).toMatchObject({ status: 'OPEN', lineItems: { nodes: [{ remainingQuantity: 3 }] } });
      const line = fo.lineItems.nodes[0];
      const ship = (quantity: number, number: string) =>
        graphql(FULFILLMENT_CREATE, {
          fulfillment: {
            lineItemsByFulfillmentOrder: [
              { fulfillmentOrderId: fo.id, fulfillmentOrderLineItems: [{ id: line.id, quantity }] },
            ],
            trackingInfo: { company: 'UPS', numbers: [number], urls: [`https://ups.example/${number}`] },
            notifyCustomer: true,
          },
        });

      const first = await ship(2, '1Z1');
      expect(first.json.data.fulfillmentCreate).toEqual({
        fulfillment: { id: expect.stringMatching(/^gid:\/\/shopify\/Fulfillment\/\d+$/), status: 'SUCCESS' },
        userErrors: [],
      });
      expect((await ship(2, '1Z2')).json.data.fulfillmentCreate.userErrors).toEqual([
        { field: ['fulfillment'], message: 'Quantity 2 is more than the 1 left to fulfill' },
      ]);
      const after = await read();
      expect(after.fulfillmentOrders.nodes[0].lineItems.nodes[0].remainingQuantity).toBe(1);
      const tracked = await graphql(FULFILLMENT_TRACKING, { id: orderId, first: 50 });
      expect(tracked.json.data.order.fulfillments).toEqual([
        expect.objectContaining({
          status: 'SUCCESS',
          trackingInfo: [{ company: 'UPS', number: '1Z1', url: 'https://ups.example/1Z1' }],
        }),
      ]);
      const [stored] = await simOrders();
      expect(stored.line_items[0].fulfilled_quantity).toBe(2);
      expect(stored.fulfillments).toEqual([
        expect.objectContaining({
          tracking_numbers: ['1Z1'],
          line_items: [{ id: stored.line_items[0].id, quantity: 2 }],
        }),
      ]);
    });

    it('makes a stub of an order it has never seen, whose fulfillment order takes any quantity', async () => {
      const { json } = await graphql(FULFILLMENT_ORDERS, { id: 'gid://shopify/Order/4242', first: 5, lines: 50 });
      const [fo] = json.data.order.fulfillmentOrders.nodes;
      const shipped = await graphql(FULFILLMENT_CREATE, {
        fulfillment: { lineItemsByFulfillmentOrder: [{ fulfillmentOrderId: fo.id }], trackingInfo: { numbers: ['T'] } },
      });
      expect(shipped.json.data.fulfillmentCreate.userErrors).toEqual([]);
      expect(await simOrders()).toEqual([expect.objectContaining({ id: 4242, stub: true })]);
    });

    it('answers an error for a field it does not simulate', async () => {
      // `shop` is simulated (its `ianaTimezone`, CONTRACT.md §16.1); `locations` is not.
      const { status, json } = await graphql('query { locations(first: 1) { nodes { id } } }', {});
      expect(status).toBe(200);
      expect(json.errors).toEqual([
        expect.objectContaining({ message: 'locations is not supported by the platform simulator' }),
      ]);
    });
  });

  describe('custom signed push', () => {
    it('accepts a signed order push, records the signature and is idempotent', async () => {
      const headers = { 'X-Platform-Hmac-SHA256': 'c2lnbmF0dXJl' };
      const first = await push('/orders', orderBody(), { headers, key: 'job-1' });
      expect(first.status).toBe(201);
      expect(first.json).toEqual({ id: expect.stringMatching(/^\d+$/) });

      const again = await push('/orders', orderBody().order, { headers, key: 'job-1' });
      expect(again.status).toBe(200);
      expect(again.json).toEqual(first.json);

      const calls = sim().calls();
      expect(calls[0]).toMatchObject({
        platform: 'custom',
        path: '/reseller/orders',
        signature: 'c2lnbmF0dXJl',
        status: 201,
      });
    });

    it('answers 401 when the signature header is missing', async () => {
      const { status, json } = await push('/orders', orderBody(), { key: 'job-1' });
      expect(status).toBe(401);
      expect(json).toEqual({ errors: 'missing signature' });
      expect(sim().calls()[0].signature).toBeNull();
    });

    it('accepts a signed fulfillment push for a reseller order', async () => {
      const headers = { 'X-Platform-Hmac-SHA256': 'sig' };
      const first = await push('/orders/7777/fulfillments', fulfillmentBody, { headers, key: 'ful-1' });
      expect(first.status).toBe(201);
      expect(first.json).toEqual({ id: expect.stringMatching(/^\d+$/) });
      const again = await push('/orders/7777/fulfillments', fulfillmentBody, { headers, key: 'ful-1' });
      expect([again.status, again.json]).toEqual([200, first.json]);
    });
  });

  describe('test-mode tokens', () => {
    it('answers 401 for a POST without a token and for a fail401 token', async () => {
      const none = await rest('/orders.json', { body: orderBody(), key: 'job-1', token: null });
      expect(none.status).toBe(401);
      const bad = await rest('/orders.json', { body: orderBody(), key: 'job-1', token: 'shpat_fail401' });
      expect(bad.status).toBe(401);
      expect(bad.json).toEqual({ errors: 'Invalid API key or access token' });
    });

    it('answers 422 for fail422 on REST and userErrors on GraphQL', async () => {
      const restReply = await rest('/orders.json', { body: orderBody(), key: 'job-1', token: 'fail422' });
      expect(restReply.status).toBe(422);
      expect(restReply.json).toEqual({ errors: { base: ['rejected by test token'] } });

      const gql = await graphql(ORDER_CREATE, shopifyOrder(), { token: 'fail422' });
      expect(gql.status).toBe(200);
      expect(gql.json.data.orderCreate.userErrors).toEqual([{ field: ['base'], message: 'rejected by test token' }]);
    });

    it('answers 429 with Retry-After for fail429', async () => {
      const { status, headers } = await rest('/orders.json', { body: orderBody(), key: 'job-1', token: 'x-fail429' });
      expect(status).toBe(429);
      expect(headers.get('retry-after')).toBe('1');
    });

    it('answers 500 for fail500, also on GraphQL', async () => {
      expect((await rest('/orders.json', { body: orderBody(), key: 'job-1', token: 'fail500' })).status).toBe(500);
      const gql = await graphql(ORDER_CREATE, shopifyOrder(), { token: 'fail500' });
      expect(gql.status).toBe(500);
    });

    it('answers THROTTLED (HTTP 200) for fail429 on GraphQL, its cost restoring in a second', async () => {
      const { status, json } = await graphql(ORDER_CREATE, shopifyOrder(), { token: 'fail429' });
      expect(status).toBe(200);
      expect(json.errors[0].extensions.code).toBe('THROTTLED');
      const { requestedQueryCost, throttleStatus } = json.extensions.cost;
      expect((requestedQueryCost - throttleStatus.currentlyAvailable) / throttleStatus.restoreRate).toBe(1);
      expect(await simOrders()).toEqual([]);
    });

    it('fails a flaky Shopify shop’s first create of each sourceIdentifier, creating nothing', async () => {
      expect((await graphql(ORDER_CREATE, shopifyOrder('1'), { token: 'flaky' })).status).toBe(503);
      expect(await simOrders()).toEqual([]);
      expect((await graphql(ORDER_CREATE, shopifyOrder('1'), { token: 'flaky' })).status).toBe(200);
      expect((await graphql(ORDER_CREATE, shopifyOrder('2'), { token: 'flaky' })).status).toBe(503);
      expect(await simOrders()).toHaveLength(1);
    });

    it('answers 503 once per idempotency key for flaky, then succeeds with the same key', async () => {
      const first = await rest('/orders.json', { body: orderBody(), key: 'job-1', token: 'flaky' });
      expect(first.status).toBe(503);
      const retry = await rest('/orders.json', { body: orderBody(), key: 'job-1', token: 'flaky' });
      expect(retry.status).toBe(201);
      const otherKey = await rest('/orders.json', { body: orderBody(), key: 'job-2', token: 'flaky' });
      expect(otherKey.status).toBe(503);
    });

    it('succeeds after slowMs for slow', async () => {
      const started = Date.now();
      const { status } = await rest('/orders.json', { body: orderBody(), key: 'job-1', token: 'slow' });
      expect(status).toBe(201);
      expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    });

    it('creates the order of a slow call at once; only the answer waits', async () => {
      const slowSim = await startPlatformSimulator({ port: 0, slowMs: 2_000 });
      try {
        const answer = fetch(`${slowSim.url}/${SHOP}${API}/orders.json`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Platform-Access-Token': 'slow', 'Idempotency-Key': 'k' },
          body: JSON.stringify(orderBody('2001')),
        });
        await new Promise((r) => setTimeout(r, 300));
        const source = encodeURIComponent('reseller.example.com:2001');
        const lookup = await fetch(`${slowSim.url}/${SHOP}${API}/orders.json?source_identifier=${source}`);
        expect(((await lookup.json()) as { orders: unknown[] }).orders).toHaveLength(1);
        expect((await answer).status).toBe(201);
      } finally {
        await slowSim.stop();
      }
    });

    it('creates the order of a lost call, then closes the connection without an answer', async () => {
      await expect(rest('/orders.json', { body: orderBody('3001'), key: 'job-lost', token: 'lost' })).rejects.toThrow();
      const [order] = (await rest('/orders.json')).json.orders;
      expect(order.source_identifier).toBe('reseller.example.com:3001');
      expect(sim().calls()[0]).toMatchObject({ method: 'POST', status: 201, lost: true });
      // The same key again (from a worker that retries) still gets that one order back... and is lost again.
      await expect(rest('/orders.json', { body: orderBody('3001'), key: 'job-lost', token: 'lost' })).rejects.toThrow();
      expect((await rest('/orders.json')).json.orders).toHaveLength(1);
    });

    it('ignores test-mode tokens on reads', async () => {
      const { status } = await rest('/orders.json', { token: 'fail500' });
      expect(status).toBe(200);
    });

    it('applies a Bearer test token to custom pushes', async () => {
      const { status } = await push('/orders', orderBody(), {
        headers: { 'X-Platform-Hmac-SHA256': 'sig', Authorization: 'Bearer fail429' },
        key: 'job-1',
      });
      expect(status).toBe(429);
    });
  });

  describe('lookups by source_identifier', () => {
    const id = (external: string) => `reseller.example.com:${external}`;

    beforeEach(async () => {
      await rest('/orders.json', { body: orderBody('1001'), key: 'a' });
      await rest('/orders.json', { body: orderBody('1002'), key: 'b' });
    });

    it('filters REST GET orders.json by source_identifier, and answers an empty list when none matches', async () => {
      const found = await rest(`/orders.json?source_identifier=${encodeURIComponent(id('1002'))}`, { token: null });
      expect(found.json.orders.map((o: { source_identifier: string }) => o.source_identifier)).toEqual([id('1002')]);
      const none = await rest(`/orders.json?source_identifier=${encodeURIComponent(id('9'))}`, { token: null });
      expect(none).toMatchObject({ status: 200, json: { orders: [] } });
    });

    it('answers the GraphQL orders query, with the search as a variable or inline', async () => {
      const ORDERS = SHOPIFY_DOCUMENTS.ordersBySourceIdentifier;
      const byVariable = await graphql(
        ORDERS,
        { query: `source_identifier:'${id('1001')}'`, lines: 250 },
        { token: 'fail500' },
      );
      expect(byVariable.json.data.orders.nodes).toEqual([
        expect.objectContaining({
          id: expect.stringMatching(/^gid:\/\/shopify\/Order\//),
          sourceIdentifier: id('1001'),
        }),
      ]);
      const inline = `query { orders(first: 1, query: "source_identifier:'${id('1002')}'") { nodes { id } } }`;
      const byInline = await graphql(inline, {});
      expect(byInline.json.data.orders.nodes).toHaveLength(1);
      expect(byInline.json.data.orders.nodes[0].id).not.toBe(byVariable.json.data.orders.nodes[0].id);
      const none = await graphql(ORDERS, { query: `source_identifier:'${id('9')}'`, lines: 250 });
      expect(none.json.data.orders.nodes).toEqual([]);
    });

    it('answers the custom signed lookup, and refuses it unsigned', async () => {
      const path = `/${SHOP}/reseller/orders?source_identifier=${encodeURIComponent(id('1001'))}`;
      const signed = await call(path, { token: null, headers: { 'X-Platform-Hmac-SHA256': 'sig' } });
      expect(signed).toMatchObject({ status: 200, json: { orders: [{ id: expect.any(String) }] } });
      expect((await call(path, { token: null })).status).toBe(401);
    });
  });

  describe('bad input', () => {
    it('answers 400 for invalid JSON and 404 for unknown paths, and keeps serving', async () => {
      const bad = await rest('/orders.json', { rawBody: '{"order":', key: 'job-1' });
      expect(bad.status).toBe(400);
      expect(bad.json).toEqual({ errors: 'invalid JSON' });

      const unknown = await call(`/${SHOP}/nowhere`);
      expect(unknown.status).toBe(404);
      expect(unknown.json).toEqual({ errors: 'Not Found' });

      expect((await rest('/orders.json')).status).toBe(200);
    });
  });

  describe('/_sim endpoints', () => {
    it('lists every call in order and resets calls, orders and idempotency', async () => {
      await rest('/orders.json', { body: orderBody(), key: 'job-1' });
      await rest('/orders.json');
      const { json } = await call('/_sim/calls');
      expect(json.calls).toEqual([
        {
          shopDomain: SHOP,
          platform: 'storeplatform_a',
          method: 'POST',
          path: `${API}/orders.json`,
          idempotencyKey: 'job-1',
          status: 201,
          at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          answeredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        },
        expect.objectContaining({ method: 'GET', path: `${API}/orders.json`, idempotencyKey: null, status: 200 }),
      ]);
      expect(sim().calls()).toEqual(json.calls);

      const graphqlCall = await graphql(ORDER_CREATE, shopifyOrder());
      expect(graphqlCall.status).toBe(200);
      expect(sim().calls()[2]).toMatchObject({ platform: 'storeplatform_b', idempotencyKey: null, status: 200 });

      expect((await call('/_sim/reset', { method: 'POST' })).status).toBe(200);
      expect((await call('/_sim/calls')).json.calls).toEqual([]);
      expect((await rest('/orders.json')).json.orders).toEqual([]);
      expect((await rest('/orders.json', { body: orderBody(), key: 'job-1' })).status).toBe(201);

      await call('/_sim/calls', { method: 'DELETE' });
      expect(sim().calls()).toEqual([]);
    });

    it('lists a shop’s orders with their fulfillments', async () => {
      const { json } = await rest('/orders.json', { body: orderBody(), key: 'job-1' });
      await rest(`/orders/${json.order.id}/fulfillments.json`, { body: fulfillmentBody, key: 'ful-1' });
      await call(`/other.example${API}/orders.json`, { body: orderBody(), key: 'job-1' });

      const listed = await call(`/_sim/orders?shopDomain=${SHOP}`);
      expect(listed.json.orders).toHaveLength(1);
      expect(listed.json.orders[0]).toMatchObject({
        id: json.order.id,
        fulfillments: [expect.objectContaining({ tracking_number: 'TRK1' })],
      });
      expect((await call('/_sim/orders?shopDomain=unknown.example')).json).toEqual({ orders: [] });
    });
  });
});
