/**
 * The three platform adapters after the order (PLATFORM-API.md, "After the order", "Orders changed
 * since"), each call against the real platform simulator over HTTP: what the shop holds afterwards is
 * read back through `GET /_sim/orders`, and failures go through the one failure policy (port.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { adapterFor } from '../../shared/platforms/adapters.js';
import { type ChangedOrder, classify, type Platform, type Tracking } from '../../shared/platforms/port.js';
import { SHOPIFY_PAGE_SIZES } from '../../shared/platforms/storeplatform-b-documents.js';
import { adaptersAgainstSimulator, orderToPlace, platformFailure, simOrderOn, simShop } from './adapter-simulator.js';

const SHOP = 'supplier.example.com';
const SECRET = 'whsec_after_secret';
const PLATFORMS = ['storeplatform_a', 'storeplatform_b', 'custom'] as const;

const shopOn = (platform: Platform, accessToken = 'shpat_after_ok') =>
  simShop(platform, SHOP, { accessToken, webhookSecret: SECRET });
const supplierOrder = (job: string) =>
  orderToPlace(job, { note: 'leave at the door', note_attributes: [{ name: 'gift', value: 'yes' }] });

const tracking = (number: string, company: string | null = 'UPS'): Tracking => ({
  company,
  number,
  numbers: [number],
  url: `https://track.example/${number}`,
  urls: [`https://track.example/${number}`],
});

interface SimLine {
  id: number;
  quantity: number;
  fulfilled_quantity: number;
}
interface SimFulfillment {
  id: number;
  status: string;
  tracking_company: unknown;
  tracking_numbers: unknown[];
  tracking_urls: unknown[];
  line_items: Array<{ id: unknown; quantity: number }>;
}
interface SimOrder {
  id: number;
  email: unknown;
  note: unknown;
  note_attributes: unknown;
  shipping_address: Record<string, unknown>;
  cancelled_at: string | null;
  line_items: SimLine[];
  fulfillments: SimFulfillment[];
}

const simulator = adaptersAgainstSimulator();

const simOrder = (orderId: string) => simOrderOn<SimOrder>(simulator(), SHOP, orderId);

/** An order the shop has without the service placing it (`POST /_sim/orders`), for polling. */
async function placedByShop(order: Record<string, unknown>): Promise<SimOrder> {
  const res = await fetch(`${simulator().url}/_sim/orders`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ shopDomain: SHOP, order }),
  });
  expect(res.status).toBe(201);
  return JSON.parse(await res.text()).order;
}

describe.each(PLATFORMS)('Platform adapter after the order: %s, against the simulator', (platform) => {
  const adapter = adapterFor(platform);
  const shop = shopOn(platform);
  /** Places a supplier order as the sync worker does; answers its id and the shop's line ids. */
  const place = async (job = 'sj_1') => {
    const { orderId } = await adapter.createOrder(shop, supplierOrder(job), job);
    const stored = await simOrder(orderId);
    return { orderId, lineIds: stored.line_items.map((line) => String(line.id)) };
  };

  it('answers the supplier line ids, in the order sent, from create and from a lookup where shown', async () => {
    const created = await adapter.createOrder(shop, supplierOrder('sj_1'), 'sj_1');
    const stored = await simOrder(created.orderId);
    const lineIds = stored.line_items.map((line) => String(line.id));
    expect(lineIds).toHaveLength(2);
    const found = await adapter.findOrder(shop, supplierOrder('sj_1').source_identifier);
    if (platform === 'custom') {
      // The simulator's custom endpoint answers `{"id"}` only (PLATFORM-API.md): nothing to read lines from.
      expect(created.lineItemIds).toBeUndefined();
      expect(found).toEqual({ orderId: created.orderId });
    } else {
      expect(created.lineItemIds).toEqual(lineIds);
      // The lines too, as a lookup by an identifier jobs once shared compares them (sku, quantity, vendor).
      const lines = [
        { sku: 'MUG-1', quantity: 3, vendor: 'Acme' },
        { sku: 'CAP-1', quantity: 1, vendor: 'Acme' },
      ];
      expect(found).toEqual({ orderId: created.orderId, lineItemIds: lineIds, lines });
    }
  });

  it('ships exactly the order lines and quantities named', async () => {
    const { orderId, lineIds } = await place();
    const { fulfillmentId } = await adapter.createFulfillment(shop, orderId, tracking('T1'), 'ful_1', {
      lineItems: [{ id: lineIds[0], quantity: 2 }],
    });
    const stored = await simOrder(orderId);
    expect(stored.fulfillments).toHaveLength(1);
    expect(String(stored.fulfillments[0].id)).toBe(fulfillmentId);
    expect(stored.fulfillments[0].line_items.map((line) => [String(line.id), line.quantity])).toEqual([
      [lineIds[0], 2],
    ]);
    expect(stored.line_items.map((line) => line.fulfilled_quantity)).toEqual([2, 0]);
  });

  it('updates a fulfillment’s tracking, the customer told', async () => {
    const { orderId, lineIds } = await place();
    const { fulfillmentId } = await adapter.createFulfillment(shop, orderId, tracking('T1'), 'ful_1', {
      lineItems: [{ id: lineIds[1], quantity: 1 }],
    });
    const changed: Tracking = { company: 'DHL', number: null, numbers: ['D1', 'D2'], url: null, urls: [] };
    await adapter.updateFulfillmentTracking(shop, fulfillmentId, changed, 'ful_1:t1');
    const [fulfillment] = (await simOrder(orderId)).fulfillments;
    expect(fulfillment).toMatchObject({
      status: 'success',
      tracking_company: 'DHL',
      tracking_numbers: ['D1', 'D2'],
      notify_customer: true,
    });
    expect(fulfillment.line_items.map((line) => String(line.id))).toEqual([lineIds[1]]);
  });

  it('cancels a fulfillment, whose quantities are unfulfilled again; cancelling it again is success', async () => {
    const { orderId, lineIds } = await place();
    const { fulfillmentId } = await adapter.createFulfillment(shop, orderId, tracking('T1'), 'ful_1', {
      lineItems: [{ id: lineIds[0], quantity: 3 }],
    });
    expect((await simOrder(orderId)).line_items[0].fulfilled_quantity).toBe(3);
    await adapter.cancelFulfillment(shop, fulfillmentId, 'ful_1:cancel');
    let stored = await simOrder(orderId);
    expect(stored.fulfillments[0].status).toBe('cancelled');
    expect(stored.line_items.map((line) => line.fulfilled_quantity)).toEqual([0, 0]);

    await expect(adapter.cancelFulfillment(shop, fulfillmentId, 'ful_1:cancel-again')).resolves.toBeUndefined();
    stored = await simOrder(orderId);
    expect(stored.line_items.map((line) => line.fulfilled_quantity)).toEqual([0, 0]);
  });

  it('cancels an order; one already cancelled is success', async () => {
    const { orderId } = await place();
    await adapter.cancelOrder(shop, orderId, 'customer', 'sj_1:cancel');
    const stored = await simOrder(orderId);
    expect(stored).toMatchObject({ cancelled_at: expect.any(String), cancel_reason: 'customer' });
    await expect(adapter.cancelOrder(shop, orderId, 'customer', 'sj_1:cancel-2')).resolves.toBeUndefined();
    expect((await simOrder(orderId)).cancelled_at).toBe(stored.cancelled_at);
  });

  it('refuses to cancel a shipped order: the platform’s 422, a permanent failure', async () => {
    const { orderId, lineIds } = await place();
    await adapter.createFulfillment(shop, orderId, tracking('T1'), 'ful_1', {
      lineItems: [{ id: lineIds[1], quantity: 1 }],
    });
    const error = await platformFailure(adapter.cancelOrder(shop, orderId, 'customer', 'sj_1:cancel'));
    expect(error).toMatchObject({ platform, status: 422, retryable: false });
    expect(error.message).toMatch(/some of it has shipped|with fulfillments/);
    expect(classify(error, 'internal')).toMatchObject({ kind: 'permanent', status: 422 });
    expect((await simOrder(orderId)).cancelled_at).toBeNull();
  });

  it('updates the shipping address, email, note and note attributes; refuses once shipped (422)', async () => {
    const { orderId, lineIds } = await place();
    await adapter.updateOrder(
      shop,
      orderId,
      {
        shippingAddress: { first_name: 'Ada', last_name: 'Byron', city: 'Hamburg', zip: '20095', country_code: 'DE' },
        email: 'new@example.com',
        note: 'ring twice',
        noteAttributes: [{ name: 'gift', value: 'no' }],
      },
      'sj_1:update-1',
    );
    let stored = await simOrder(orderId);
    expect(stored).toMatchObject({
      email: 'new@example.com',
      note: 'ring twice',
      note_attributes: [{ name: 'gift', value: 'no' }],
      shipping_address: { last_name: 'Byron', city: 'Hamburg', zip: '20095', country_code: 'DE' },
    });
    await adapter.updateOrder(shop, orderId, { note: null }, 'sj_1:update-2');
    stored = await simOrder(orderId);
    expect(stored).toMatchObject({ note: null, email: 'new@example.com' });

    await adapter.createFulfillment(shop, orderId, tracking('T1'), 'ful_1', {
      lineItems: [{ id: lineIds[0], quantity: 1 }],
    });
    const error = await platformFailure(adapter.updateOrder(shop, orderId, { note: 'too late' }, 'sj_1:update-3'));
    expect(classify(error, 'internal')).toMatchObject({ kind: 'permanent', status: 422 });
    expect((await simOrder(orderId)).note).toBeNull();
  });

  it('pages orders changed since, oldest first, 250 a page (Shopify fewer), tagged only, webhook-shaped', async () => {
    // Shopify's page is smaller: its cost (shared/platforms/README.md, "What a document costs").
    const size = platform === 'storeplatform_b' ? SHOPIFY_PAGE_SIZES.changedOrders : 250;
    const before = new Date(Date.now() - 1000).toISOString();
    // 252 orders the service placed (tagged) and 3 of the shop's own, placed in between.
    const tagged: string[] = [];
    for (let batch = 0; batch < 9; batch++) {
      const placed = await Promise.all(
        Array.from({ length: 28 }, (_, n) =>
          placedByShop({
            source_identifier: `reseller.example.com:${batch * 28 + n}:sj`,
            currency: 'EUR',
            tags: 'reseller-order',
            line_items: [{ title: 'Mug', quantity: 1, price: '9.50', vendor: 'Acme' }],
          }),
        ),
      );
      tagged.push(...placed.map((order) => String(order.id)));
      if (batch % 3 === 0) await placedByShop({ tags: 'manual', line_items: [{ title: 'Other', quantity: 1 }] });
    }
    // The first order changes last: it ships and is cancelled afterwards.
    const first = tagged[0];
    const { fulfillmentId } = await adapter.createFulfillment(shop, first, tracking('Z1'), 'ful_z1');
    await adapter.cancelFulfillment(shop, fulfillmentId, 'ful_z1:cancel');
    await adapter.cancelOrder(shop, first, 'inventory', 'sj_z:cancel');

    const pages: ChangedOrder[][] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await adapter.ordersChangedSince(shop, before, { tag: 'reseller-order', cursor });
      pages.push(page.orders);
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
      expect(pages.length).toBeLessThan(252 / size + 3);
    }
    expect(pages.map((page) => page.length)).toEqual([...Array(Math.floor(252 / size)).fill(size), 252 % size]);
    const seen = pages.flat();
    expect(seen.map((order) => order.payload.id)).toEqual([...tagged.slice(1), first]);
    const times = seen.map((order) => order.updatedAt);
    expect([...times].sort()).toEqual(times);

    const changed = seen.at(-1);
    if (!changed) throw new Error('no changed order');
    expect(changed.payload).toMatchObject({
      id: first,
      currency: 'EUR',
      source_identifier: 'reseller.example.com:0:sj',
      cancelled_at: expect.any(String),
      cancel_reason: 'inventory',
      updated_at: changed.updatedAt,
      line_items: [expect.objectContaining({ id: expect.stringMatching(/^\d+$/), quantity: 1, vendor: 'Acme' })],
    });
    expect(changed.payload.line_items).toEqual([expect.objectContaining({ title: 'Mug', price: '9.50' })]);
    const lineId = (changed.payload.line_items as Array<{ id: string }>)[0].id;
    expect(changed.fulfillments).toEqual([
      expect.objectContaining({
        id: fulfillmentId,
        order_id: first,
        status: 'cancelled',
        tracking_company: 'UPS',
        tracking_numbers: ['Z1'],
        tracking_urls: ['https://track.example/Z1'],
        line_items: [{ id: lineId, quantity: 1 }],
        updated_at: expect.any(String),
      }),
    ]);

    // Since the last change: only that order.
    const later = await adapter.ordersChangedSince(shop, changed.updatedAt ?? '', { tag: 'reseller-order' });
    expect(later).toEqual({ orders: [expect.objectContaining({ updatedAt: changed.updatedAt })], nextCursor: null });
    // Without a tag, the shop's own orders come too.
    const all = await adapter.ordersChangedSince(shop, before);
    expect(all.orders.length).toBe(size);
    const untagged = [...all.orders];
    for (let next = all.nextCursor; next !== null && untagged.length < 30; ) {
      const page = await adapter.ordersChangedSince(shop, before, { cursor: next });
      untagged.push(...page.orders);
      next = page.nextCursor;
    }
    expect(untagged.some((order) => String(order.payload.tags).includes('manual'))).toBe(true);
  });

  it.each([
    ['fail429', 'throttled'],
    ['fail500', platform === 'storeplatform_b' ? 'unknown_outcome' : 'transient'],
    ['fail422', 'permanent'],
  ])('classifies a cancellation answered with a %s token as %s', async (token, kind) => {
    const { orderId } = await place();
    const error = await platformFailure(
      adapterFor(platform).cancelOrder(shopOn(platform, token), orderId, 'customer', 'k'),
    );
    const classified = classify(error, 'internal');
    expect(classified.kind).toBe(kind);
    if (classified.kind === 'throttled') expect(classified.delaySeconds).toBeGreaterThanOrEqual(1);
    expect((await simOrder(orderId)).cancelled_at).toBeNull();
  });
});

describe.each(['storeplatform_a', 'custom'] as const)('%s: one idempotency key, one change', (platform) => {
  const adapter = adapterFor(platform);
  const shop = shopOn(platform);

  it('applies a tracking update or an order update sent twice under one key once', async () => {
    const { orderId } = await adapter.createOrder(shop, supplierOrder('sj_1'), 'sj_1');
    const { fulfillmentId } = await adapter.createFulfillment(shop, orderId, tracking('T1'), 'ful_1');
    await adapter.updateFulfillmentTracking(shop, fulfillmentId, tracking('A1', 'DHL'), 'track-a');
    await adapter.updateFulfillmentTracking(shop, fulfillmentId, tracking('B1', 'DHL'), 'track-b');
    await adapter.updateFulfillmentTracking(shop, fulfillmentId, tracking('A1', 'DHL'), 'track-a');
    expect((await simOrder(orderId)).fulfillments[0].tracking_numbers).toEqual(['B1']);

    const other = await adapter.createOrder(shop, supplierOrder('sj_2'), 'sj_2');
    await adapter.updateOrder(shop, other.orderId, { note: 'first' }, 'update-a');
    await adapter.updateOrder(shop, other.orderId, { note: 'second' }, 'update-b');
    await adapter.updateOrder(shop, other.orderId, { note: 'first' }, 'update-a');
    expect((await simOrder(other.orderId)).note).toBe('second');

    const keyed = simulator()
      .calls()
      .filter((call) => call.idempotencyKey?.startsWith('track-'));
    expect(keyed.map((call) => [call.method, call.path])).toEqual(
      Array(3).fill([
        'POST',
        platform === 'custom'
          ? `/reseller/fulfillments/${fulfillmentId}/update_tracking`
          : `/admin/api/2025-07/fulfillments/${fulfillmentId}/update_tracking.json`,
      ]),
    );
    if (platform === 'custom') expect(keyed.every((call) => typeof call.signature === 'string')).toBe(true);
  });
});

describe('storeplatform_b: Shopify ids and the cancellation job', () => {
  const adapter = adapterFor('storeplatform_b');
  const shop = shopOn('storeplatform_b');

  it('takes a fulfillment id as its number (what createFulfillment answers) or as its gid', async () => {
    const { orderId } = await adapter.createOrder(shop, supplierOrder('sj_1'), 'sj_1');
    const { fulfillmentId } = await adapter.createFulfillment(shop, orderId, tracking('T1'), 'ful_1');
    expect(fulfillmentId).toMatch(/^\d+$/);
    await adapter.updateFulfillmentTracking(shop, `gid://shopify/Fulfillment/${fulfillmentId}`, tracking('G1'), 'k');
    expect((await simOrder(orderId)).fulfillments[0].tracking_numbers).toEqual(['G1']);
    await adapter.cancelFulfillment(shop, `gid://shopify/Fulfillment/${fulfillmentId}`, 'k');
    expect((await simOrder(orderId)).fulfillments[0].status).toBe('cancelled');
  });

  it('answers 404 for an order or a fulfillment Shopify does not have', async () => {
    const order = await platformFailure(adapter.cancelOrder(shop, '123', 'customer', 'k'));
    expect(classify(order, 'internal')).toMatchObject({ kind: 'permanent', status: 404 });
    const fulfillment = await platformFailure(adapter.cancelFulfillment(shop, '123', 'k'));
    expect(classify(fulfillment, 'internal')).toMatchObject({ kind: 'permanent', status: 404 });
  });
});

describe('Platform adapters after the order: answers the simulator does not give', () => {
  let server: Server;
  let respond: (method: string, path: string, body: string) => { status: number; body: unknown };
  const calls: Array<{ method: string; path: string; body: string }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      req.on('end', () => {
        calls.push({ method: req.method ?? '', path: req.url ?? '', body });
        const answer = respond(req.method ?? '', req.url ?? '', body);
        res.writeHead(answer.status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  beforeEach(() => {
    calls.length = 0;
    process.env.PLATFORM_API_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/{shopDomain}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('custom: reads line ids from a create answer and a lookup that show the order’s lines', async () => {
    const adapter = adapterFor('custom');
    respond = (method) =>
      method === 'POST'
        ? { status: 201, body: { id: 'ord_1', order: { line_items: [{ id: 11 }, { id: '12' }] } } }
        : { status: 200, body: { orders: [{ id: 'ord_1', line_items: [{ id: 11 }, { id: 12 }] }] } };
    const created = await adapter.createOrder(shopOn('custom'), supplierOrder('sj_1'), 'sj_1');
    expect(created).toEqual({ orderId: 'ord_1', status: 201, lineItemIds: ['11', '12'] });
    expect(await adapter.findOrder(shopOn('custom'), 'x')).toEqual({ orderId: 'ord_1', lineItemIds: ['11', '12'] });
    respond = () => ({ status: 201, body: { id: 'ord_2', line_items: [{ id: 21 }, { sku: 'no id' }] } });
    expect(await adapter.createOrder(shopOn('custom'), supplierOrder('sj_2'), 'sj_2')).toEqual({
      orderId: 'ord_2',
      status: 201,
    });
  });

  it('storeplatform_a: writes a line id of any length as the JSON number it is', async () => {
    respond = () => ({ status: 201, body: { fulfillment: { id: 1 } } });
    await adapterFor('storeplatform_a').createFulfillment(shopOn('storeplatform_a'), '7', tracking('T1'), 'k', {
      lineItems: [{ id: '90071992547409931', quantity: 2 }],
    });
    expect(calls[0].body).toContain('"line_items":[{"id":90071992547409931,"quantity":2}]');
  });

  it('storeplatform_b: an already cancelled order or fulfillment is success without a mutation', async () => {
    const adapter = adapterFor('storeplatform_b');
    respond = (_method, _path, body) => {
      const query = JSON.parse(body).query as string;
      if (query.startsWith('query orderCancelled')) {
        return { status: 200, body: { data: { order: { id: 'gid://shopify/Order/7', cancelledAt: '2026-01-01' } } } };
      }
      return {
        status: 200,
        body: { data: { fulfillment: { id: 'gid://shopify/Fulfillment/9', status: 'CANCELLED' } } },
      };
    };
    await adapter.cancelOrder(shopOn('storeplatform_b'), '7', 'customer', 'k');
    await adapter.cancelFulfillment(shopOn('storeplatform_b'), '9', 'k');
    expect(calls.map((call) => JSON.parse(call.body).query.split('(')[0])).toEqual([
      'query orderCancelled',
      'query fulfillmentStatus',
    ]);
  });

  it('storeplatform_b: a cancellation job done without cancelling the order is a refusal', async () => {
    respond = (_method, _path, body) => {
      const query = JSON.parse(body).query as string;
      if (query.startsWith('query orderCancelled')) {
        return { status: 200, body: { data: { order: { id: 'gid://shopify/Order/7', cancelledAt: null } } } };
      }
      if (query.startsWith('query jobDone')) return { status: 200, body: { data: { job: { id: 'j', done: true } } } };
      return {
        status: 200,
        body: { data: { orderCancel: { job: { id: 'j', done: false }, orderCancelUserErrors: [] } } },
      };
    };
    const error = await platformFailure(
      adapterFor('storeplatform_b').cancelOrder(shopOn('storeplatform_b'), '7', 'x', 'k'),
    );
    expect(error).toMatchObject({ status: 422, retryable: false });
    const mutation = calls.find((call) => call.body.includes('mutation orderCancel'));
    expect(JSON.parse(mutation?.body ?? '{}').variables).toEqual({ orderId: 'gid://shopify/Order/7', reason: 'OTHER' });
  });
});
