/**
 * The platform simulator after the order (PLATFORM-API.md, "After the order", "Orders changed since"
 * and "The simulator"): line ids and fulfilled quantities, fulfillments of the lines named,
 * cancellations, updates, tracking changes, cancelled fulfillments and polling, on all three
 * platforms and through the test controls, over real HTTP against a started simulator.
 */
import { SHOPIFY_DOCUMENTS } from '../../shared/platforms/storeplatform-b-documents';
import { type CallOptions, SHOP, SHOPIFY_API, shopifyOrderInput, simulatorClient } from './simulator-client.js';

const SIGNED = { 'X-Platform-Hmac-SHA256': 'c2lnbmF0dXJl' };

/** A supplier order as the service places it: two lines, tagged as the service tags its orders. */
const orderBody = (externalId = '1001', tags = 'reseller-order') => ({
  order: {
    source_identifier: `reseller.example.com:${externalId}:job_${externalId}`,
    currency: 'EUR',
    email: 'buyer@example.com',
    note: 'leave at the door',
    note_attributes: [{ name: 'gift', value: 'yes' }],
    line_items: [
      { title: 'Mug', sku: 'MUG-1', quantity: 3, price: '9.50', vendor: 'Acme' },
      { title: 'Cap', sku: 'CAP-1', quantity: 1, price: '5.00', vendor: 'Acme' },
    ],
    shipping_lines: [{ title: 'Standard', price: '4.90' }],
    shipping_address: { city: 'Berlin', zip: '10115', country_code: 'DE' },
    tags,
  },
});

const tracking = (number: string) => ({
  tracking_company: 'DHL',
  tracking_number: number,
  tracking_numbers: [number],
  tracking_url: `https://track.example/${number}`,
  tracking_urls: [`https://track.example/${number}`],
  notify_customer: true,
});

const ORDER_CANCEL = `mutation orderCancel($orderId: ID!, $reason: OrderCancelReason!) {
  orderCancel(orderId: $orderId, reason: $reason, refund: false, restock: true, notifyCustomer: false) {
    job { id done }
    orderCancelUserErrors { field message code }
  }
}`;
const ORDER_UPDATE = `mutation orderUpdate($input: OrderInput!) {
  orderUpdate(input: $input) {
    order { id email note customAttributes { key value } shippingAddress { city zip } updatedAt }
    userErrors { field message }
  }
}`;
const TRACKING_UPDATE = `mutation fulfillmentTrackingInfoUpdate($id: ID!, $tracking: FulfillmentTrackingInput!) {
  fulfillmentTrackingInfoUpdate(fulfillmentId: $id, trackingInfoInput: $tracking, notifyCustomer: true) {
    fulfillment { id status updatedAt trackingInfo(first: 10) { company number url } }
    userErrors { field message }
  }
}`;
const FULFILLMENT_CANCEL = `mutation fulfillmentCancel($id: ID!) {
  fulfillmentCancel(id: $id) { fulfillment { id status } userErrors { field message } }
}`;
/** The page sizes `orderFulfillmentOrders` is sent with. */
const FO_PAGE = { first: 5, lines: 50 };
const ORDERS_CHANGED = `query ordersChanged($first: Int!, $after: String, $query: String!) {
  orders(first: $first, after: $after, sortKey: UPDATED_AT, query: $query) {
    nodes {
      id sourceIdentifier createdAt updatedAt cancelledAt cancelReason tags
      lineItems(first: 10) { nodes { id quantity unfulfilledQuantity } }
      fulfillments(first: 5) {
        id status updatedAt trackingInfo(first: 10) { company number url }
        fulfillmentLineItems(first: 10) { nodes { quantity lineItem { id } } }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** An `OrderCreateOrderInput` with one line of `quantity`, as the storeplatform_b adapter sends it. */
const shopifyOrder = (externalId: string, quantity = 3) =>
  shopifyOrderInput(`reseller.example.com:${externalId}:job_${externalId}`, quantity);

const numberOf = (gid: string) => Number(gid.split('/').pop());

describe('platform simulator, after the order', () => {
  const { sim, call, rest, graphqlData: graphql, reseller, simOrders } = simulatorClient();
  const custom = (path: string, options: CallOptions = {}) =>
    reseller(path, { ...options, headers: { ...SIGNED, ...options.headers } });
  const control = (path: string, body: unknown) => call(`/_sim${path}`, { token: null, body });

  /** A REST order placed through the API, as the service places it. */
  const placed = async (externalId = '1001', tags?: string) =>
    (await rest('/orders.json', { body: orderBody(externalId, tags), key: `job-${externalId}` })).json.order;
  const ship = (orderId: number, fulfillment: Record<string, unknown>, key: string, token?: string) =>
    rest(`/orders/${orderId}/fulfillments.json`, { body: { fulfillment }, key, token });

  describe('storeplatform_a REST: lines and fulfillments', () => {
    it('gives every line an id and a fulfilled quantity of 0, in the order sent', async () => {
      const order = await placed();
      expect(order.line_items).toEqual([
        expect.objectContaining({ id: expect.any(Number), sku: 'MUG-1', quantity: 3, fulfilled_quantity: 0 }),
        expect.objectContaining({ id: expect.any(Number), sku: 'CAP-1', quantity: 1, fulfilled_quantity: 0 }),
      ]);
      expect(order.line_items[0].id).not.toBe(order.line_items[1].id);
      expect(order).toMatchObject({ cancelled_at: null, cancel_reason: null, updated_at: order.created_at });
    });

    it('fulfils exactly the lines named, then everything remaining when none is named', async () => {
      const order = await placed();
      const [mug, cap] = order.line_items;
      const first = await ship(order.id, { ...tracking('T1'), line_items: [{ id: mug.id, quantity: 2 }] }, 'f1');
      expect(first.status).toBe(201);
      expect(first.json.fulfillment).toMatchObject({
        order_id: order.id,
        status: 'success',
        tracking_company: 'DHL',
        tracking_numbers: ['T1'],
        tracking_urls: ['https://track.example/T1'],
        line_items: [{ id: mug.id, quantity: 2 }],
        updated_at: first.json.fulfillment.created_at,
      });
      let [stored] = await simOrders();
      expect(stored.line_items.map((l: { fulfilled_quantity: number }) => l.fulfilled_quantity)).toEqual([2, 0]);
      expect(stored.updated_at).toBe(first.json.fulfillment.updated_at);

      const rest = await ship(order.id, tracking('T2'), 'f2');
      expect(rest.status).toBe(201);
      expect(rest.json.fulfillment.line_items).toEqual([
        { id: mug.id, quantity: 1 },
        { id: cap.id, quantity: 1 },
      ]);
      [stored] = await simOrders();
      expect(stored.line_items.map((l: { fulfilled_quantity: number }) => l.fulfilled_quantity)).toEqual([3, 1]);

      const nothingLeft = await ship(order.id, tracking('T3'), 'f3');
      expect(nothingLeft).toEqual({ status: 422, json: { errors: { line_items: ['Nothing left to fulfill'] } } });
    });

    it('answers 422 for a quantity past what remains, a line not on the order, or a cancelled order', async () => {
      const order = await placed();
      const [mug] = order.line_items;
      await ship(order.id, { line_items: [{ id: mug.id, quantity: 2 }] }, 'f1');

      const tooMany = await ship(order.id, { line_items: [{ id: mug.id, quantity: 2 }] }, 'f2');
      expect(tooMany).toEqual({
        status: 422,
        json: { errors: { line_items: ['Quantity 2 is more than the 1 left to fulfill'] } },
      });
      const twice = await ship(order.id, { line_items: [mug, mug].map((l) => ({ id: l.id, quantity: 1 })) }, 'f3');
      expect(twice.status).toBe(422);
      const unknownLine = await ship(order.id, { line_items: [{ id: 1, quantity: 1 }] }, 'f4');
      expect(unknownLine.status).toBe(422);
      expect(unknownLine.json.errors.line_items).toEqual(['Line item 1 does not exist on this order']);
      const [stored] = await simOrders();
      expect(stored.fulfillments).toHaveLength(1);
      expect(stored.line_items[0].fulfilled_quantity).toBe(2);

      const other = await placed('1002');
      await rest(`/orders/${other.id}/cancel.json`, { body: { reason: 'customer' }, key: 'c1' });
      const onCancelled = await ship(other.id, tracking('T9'), 'f5');
      expect(onCancelled).toEqual({ status: 422, json: { errors: { base: ['The order is cancelled'] } } });
    });
  });

  describe('storeplatform_a REST: cancel an order', () => {
    it('answers 200 with cancelled_at and the reason, and 200 with the same order when already cancelled', async () => {
      const order = await placed();
      const cancelled = await rest(`/orders/${order.id}/cancel.json`, { body: { reason: 'customer' }, key: 'c1' });
      expect(cancelled.status).toBe(200);
      expect(cancelled.json.order).toMatchObject({ id: order.id, cancel_reason: 'customer' });
      expect(cancelled.json.order.cancelled_at).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
      expect(cancelled.json.order.updated_at).toBe(cancelled.json.order.cancelled_at);
      expect(cancelled.json.order.updated_at > order.updated_at).toBe(true);

      const again = await rest(`/orders/${order.id}/cancel.json`, { body: { reason: 'other' }, key: 'c2' });
      expect(again).toEqual({ status: 200, json: { order: cancelled.json.order } });
      expect((await rest(`/orders/${order.id}.json`)).json.order.cancelled_at).toBe(cancelled.json.order.cancelled_at);
    });

    it('answers 422 when anything of it has shipped, and cancels once that fulfillment is cancelled', async () => {
      const order = await placed();
      const shipped = await ship(order.id, { line_items: [{ id: order.line_items[1].id, quantity: 1 }] }, 'f1');
      const refused = await rest(`/orders/${order.id}/cancel.json`, { body: { reason: 'customer' }, key: 'c1' });
      expect(refused.status).toBe(422);
      expect(refused.json.errors.base).toEqual(['The order cannot be cancelled: some of it has shipped']);
      expect((await simOrders())[0].cancelled_at).toBeNull();

      await rest(`/fulfillments/${shipped.json.fulfillment.id}/cancel.json`, { body: {}, key: 'fc1' });
      // A refusal is not kept under its key: the same key again is decided anew.
      const now = await rest(`/orders/${order.id}/cancel.json`, { body: { reason: 'customer' }, key: 'c1' });
      expect(now.status).toBe(200);
    });

    it('answers 404 for an unknown order and applies test-mode tokens', async () => {
      expect((await rest('/orders/1/cancel.json', { body: {}, key: 'c1' })).status).toBe(404);
      const order = await placed();
      const path = `/orders/${order.id}/cancel.json`;
      expect((await rest(path, { body: {}, key: 'c1', token: 'fail422' })).status).toBe(422);
      expect((await rest(path, { body: {}, key: 'c1', token: null })).status).toBe(401);
      expect((await rest(path, { body: {}, key: 'c1', token: 'flaky' })).status).toBe(503);
      expect((await simOrders())[0].cancelled_at).toBeNull();
      expect((await rest(path, { body: {}, key: 'c1', token: 'flaky' })).status).toBe(200);
      expect((await simOrders())[0]).toMatchObject({ cancelled_at: expect.any(String), cancel_reason: 'other' });
    });
  });

  describe('storeplatform_a REST: update an order', () => {
    const changes = {
      shipping_address: { city: 'Hamburg', zip: '20095', country_code: 'DE' },
      email: 'new@example.com',
      note: 'ring twice',
      note_attributes: [{ name: 'gift', value: 'no' }],
    };

    it('changes the shipping address, email, note and note attributes present, and nothing else', async () => {
      const order = await placed();
      const updated = await rest(`/orders/${order.id}.json`, {
        method: 'PUT',
        body: { order: { ...changes, currency: 'USD', line_items: [] } },
        key: 'u1',
      });
      expect(updated.status).toBe(200);
      expect(updated.json.order).toMatchObject({ ...changes, currency: 'EUR', line_items: order.line_items });
      expect(updated.json.order.updated_at > order.updated_at).toBe(true);

      const noteOnly = await rest(`/orders/${order.id}.json`, {
        method: 'PUT',
        body: { order: { note: 'x' } },
        key: 'u2',
      });
      expect(noteOnly.json.order).toMatchObject({ ...changes, note: 'x' });
    });

    it('answers 422 once anything has shipped or the order is cancelled, and 404 for an unknown order', async () => {
      const shippedOrder = await placed('1001');
      await ship(shippedOrder.id, { line_items: [{ id: shippedOrder.line_items[0].id, quantity: 1 }] }, 'f1');
      const afterShipping = await rest(`/orders/${shippedOrder.id}.json`, {
        method: 'PUT',
        body: { order: changes },
        key: 'u1',
      });
      expect(afterShipping).toEqual({
        status: 422,
        json: { errors: { base: ['The order cannot be changed: some of it has shipped'] } },
      });

      const cancelledOrder = await placed('1002');
      await rest(`/orders/${cancelledOrder.id}/cancel.json`, { body: {}, key: 'c1' });
      const afterCancel = await rest(`/orders/${cancelledOrder.id}.json`, {
        method: 'PUT',
        body: { order: changes },
        key: 'u2',
      });
      expect(afterCancel).toEqual({ status: 422, json: { errors: { base: ['The order is cancelled'] } } });
      expect((await simOrders()).map((o: { email: string }) => o.email)).toEqual([
        'buyer@example.com',
        'buyer@example.com',
      ]);
      expect((await rest('/orders/1.json', { method: 'PUT', body: { order: changes }, key: 'u3' })).status).toBe(404);
    });

    it('answers the same key again with its first answer, even after the order has shipped', async () => {
      const order = await placed();
      const first = await rest(`/orders/${order.id}.json`, { method: 'PUT', body: { order: changes }, key: 'u1' });
      await ship(order.id, tracking('T1'), 'f1');
      const again = await rest(`/orders/${order.id}.json`, { method: 'PUT', body: { order: changes }, key: 'u1' });
      expect(again).toEqual(first);
      const otherKey = await rest(`/orders/${order.id}.json`, { method: 'PUT', body: { order: changes }, key: 'u2' });
      expect(otherKey.status).toBe(422);
    });
  });

  describe('storeplatform_a REST: tracking and cancelled fulfillments', () => {
    it('replaces a fulfillment’s tracking and moves its updated_at and its order’s', async () => {
      const order = await placed();
      const { fulfillment } = (await ship(order.id, tracking('T1'), 'f1')).json;
      const updated = await rest(`/fulfillments/${fulfillment.id}/update_tracking.json`, {
        body: {
          fulfillment: {
            tracking_company: 'UPS',
            tracking_numbers: ['1Z1', '1Z2'],
            tracking_urls: ['https://ups.example/1Z1', 'https://ups.example/1Z2'],
            notify_customer: true,
          },
        },
        key: 't1',
      });
      expect(updated.status).toBe(200);
      expect(updated.json.fulfillment).toMatchObject({
        id: fulfillment.id,
        status: 'success',
        tracking_company: 'UPS',
        tracking_number: '1Z1',
        tracking_numbers: ['1Z1', '1Z2'],
        tracking_url: 'https://ups.example/1Z1',
        tracking_urls: ['https://ups.example/1Z1', 'https://ups.example/1Z2'],
        line_items: fulfillment.line_items,
        created_at: fulfillment.created_at,
      });
      expect(updated.json.fulfillment.updated_at > fulfillment.updated_at).toBe(true);
      const [stored] = await simOrders();
      expect(stored.updated_at).toBe(updated.json.fulfillment.updated_at);
      expect(stored.fulfillments).toEqual([updated.json.fulfillment]);

      expect((await rest('/fulfillments/1/update_tracking.json', { body: {}, key: 't2' })).status).toBe(404);
    });

    it('cancels a fulfillment: its quantities unfulfilled again, its tracking no longer changing', async () => {
      const order = await placed();
      const [mug] = order.line_items;
      const { fulfillment } = (await ship(order.id, { line_items: [{ id: mug.id, quantity: 3 }] }, 'f1')).json;
      const cancelled = await rest(`/fulfillments/${fulfillment.id}/cancel.json`, { body: {}, key: 'fc1' });
      expect(cancelled.status).toBe(200);
      expect(cancelled.json.fulfillment).toMatchObject({ id: fulfillment.id, status: 'cancelled' });
      const [stored] = await simOrders();
      expect(stored.line_items[0].fulfilled_quantity).toBe(0);
      expect(stored.fulfillments[0].status).toBe('cancelled');

      const again = await rest(`/fulfillments/${fulfillment.id}/cancel.json`, { body: {}, key: 'fc2' });
      expect(again).toEqual(cancelled);
      expect((await simOrders())[0].line_items[0].fulfilled_quantity).toBe(0);
      const tracked = await rest(`/fulfillments/${fulfillment.id}/update_tracking.json`, {
        body: { fulfillment: { tracking_numbers: ['X'] } },
        key: 't1',
      });
      expect(tracked).toEqual({ status: 422, json: { errors: { base: ['The fulfillment is cancelled'] } } });
      expect((await ship(order.id, { line_items: [{ id: mug.id, quantity: 3 }] }, 'f2')).status).toBe(201);
      expect((await rest('/fulfillments/1/cancel.json', { body: {}, key: 'fc3' })).status).toBe(404);
    });
  });

  describe('storeplatform_a REST: orders changed since', () => {
    const changedSince = (query: string) => rest(`/orders.json?${query}`, { token: null });

    it('answers orders changed at or after updated_at_min, oldest change first, each whole', async () => {
      const a = await placed('1');
      const b = await placed('2');
      const c = await placed('3');
      const shipped = await ship(a.id, tracking('T1'), 'f1');
      const list = await changedSince(`updated_at_min=${encodeURIComponent(b.updated_at)}&limit=250`);
      expect(list.status).toBe(200);
      expect(list.json.next_page_info).toBeNull();
      expect(list.json.orders.map((o: { id: number }) => o.id)).toEqual([b.id, c.id, a.id]);
      const [, , changed] = list.json.orders;
      expect(changed).toMatchObject({
        ...orderBody('1').order,
        line_items: [
          expect.objectContaining({ id: a.line_items[0].id, fulfilled_quantity: 3 }),
          expect.objectContaining({ id: a.line_items[1].id, fulfilled_quantity: 1 }),
        ],
        updated_at: shipped.json.fulfillment.updated_at,
        cancelled_at: null,
        cancel_reason: null,
        fulfillments: [
          {
            ...tracking('T1'),
            id: shipped.json.fulfillment.id,
            order_id: a.id,
            status: 'success',
            line_items: [
              { id: a.line_items[0].id, quantity: 3 },
              { id: a.line_items[1].id, quantity: 1 },
            ],
            created_at: expect.any(String),
            updated_at: shipped.json.fulfillment.updated_at,
          },
        ],
      });
      const later = await changedSince(`updated_at_min=${encodeURIComponent(shipped.json.fulfillment.updated_at)}`);
      expect(later.json.orders.map((o: { id: number }) => o.id)).toEqual([a.id]);
    });

    it('pages by limit with next_page_info, which keeps the first page’s filters', async () => {
      const ids: number[] = [];
      for (const n of ['1', '2', '3', '4', '5']) ids.push((await placed(n, n === '3' ? 'manual' : undefined)).id);
      const seen: number[] = [];
      const pages: number[] = [];
      let query = `updated_at_min=2020-01-01T00:00:00Z&limit=2&tag=reseller-order`;
      for (;;) {
        const page = await changedSince(query);
        expect(page.status).toBe(200);
        pages.push(page.json.orders.length);
        seen.push(...page.json.orders.map((o: { id: number }) => o.id));
        if (page.json.next_page_info === null) break;
        query = `limit=2&page_info=${encodeURIComponent(page.json.next_page_info)}`;
      }
      expect(seen).toEqual([ids[0], ids[1], ids[3], ids[4]]);
      expect(pages).toEqual([2, 2]);
      expect((await changedSince('updated_at_min=2020-01-01T00:00:00Z&limit=251')).json.orders).toHaveLength(5);
    });

    it('takes a tag case aside, leaves out stubs, and answers 400 for a bad cursor, time or limit', async () => {
      await placed('1', 'Reseller-Order, vip');
      await placed('2', 'other');
      await ship(555, tracking('T1'), 'f1'); // a stub
      const tagged = await changedSince('updated_at_min=2020-01-01T00:00:00Z&tag=reseller-order');
      expect(tagged.json.orders.map((o: { tags: string }) => o.tags)).toEqual(['Reseller-Order, vip']);
      const all = await changedSince('updated_at_min=2020-01-01T00:00:00Z');
      expect(all.json.orders).toHaveLength(2);
      expect((await changedSince('page_info=nonsense')).status).toBe(400);
      expect((await changedSince('updated_at_min=yesterday')).status).toBe(400);
      expect((await changedSince('updated_at_min=2020-01-01T00:00:00Z&limit=0')).status).toBe(400);
    });
  });

  describe('storeplatform_b: after the order, through Shopify’s schema', () => {
    const create = async (externalId: string, quantity = 3) =>
      (await graphql(SHOPIFY_DOCUMENTS.orderCreate, shopifyOrder(externalId, quantity))).orderCreate.order;
    /** Ships `quantity` of the order's one line through its fulfillment order. */
    const shipOn = async (orderGid: string, quantity: number, number = 'T1') => {
      const { order } = await graphql(SHOPIFY_DOCUMENTS.orderFulfillmentOrders, { id: orderGid, ...FO_PAGE });
      const [fo] = order.fulfillmentOrders.nodes;
      const shipped = await graphql(SHOPIFY_DOCUMENTS.fulfillmentCreate, {
        fulfillment: {
          lineItemsByFulfillmentOrder: [
            { fulfillmentOrderId: fo.id, fulfillmentOrderLineItems: [{ id: fo.lineItems.nodes[0].id, quantity }] },
          ],
          trackingInfo: { company: 'UPS', numbers: [number], urls: [`https://ups.example/${number}`] },
          notifyCustomer: true,
        },
      });
      return shipped.fulfillmentCreate;
    };

    it('cancels with orderCancel (a job, the order’s cancelledAt set), also when already cancelled', async () => {
      const order = await create('1');
      const { orderCancel } = await graphql(ORDER_CANCEL, { orderId: order.id, reason: 'CUSTOMER' });
      expect(orderCancel).toEqual({
        job: { id: expect.stringMatching(/^gid:\/\/shopify\/Job\//), done: false },
        orderCancelUserErrors: [],
      });
      const [stored] = await simOrders();
      expect(stored).toMatchObject({ cancelled_at: expect.any(String), cancel_reason: 'customer' });
      const again = await graphql(ORDER_CANCEL, { orderId: order.id, reason: 'OTHER' });
      expect(again.orderCancel.orderCancelUserErrors).toEqual([]);
      expect((await simOrders())[0]).toMatchObject({ cancelled_at: stored.cancelled_at, cancel_reason: 'customer' });
    });

    it('refuses orderCancel once something shipped, and for an unknown order', async () => {
      const order = await create('1');
      await shipOn(order.id, 1);
      const { orderCancel } = await graphql(ORDER_CANCEL, { orderId: order.id, reason: 'CUSTOMER' });
      expect(orderCancel).toEqual({
        job: null,
        orderCancelUserErrors: [{ field: ['orderId'], message: expect.any(String), code: 'INVALID' }],
      });
      expect((await simOrders())[0].cancelled_at).toBeNull();
      const unknown = await graphql(ORDER_CANCEL, { orderId: 'gid://shopify/Order/1', reason: 'CUSTOMER' });
      expect(unknown.orderCancel.orderCancelUserErrors).toEqual([
        { field: ['orderId'], message: 'Order does not exist', code: 'NOT_FOUND' },
      ]);
      const refused = await graphql(ORDER_CANCEL, { orderId: order.id, reason: 'CUSTOMER' }, { token: 'fail422' });
      expect(refused.orderCancel.orderCancelUserErrors).toEqual([
        { field: ['base'], message: 'rejected by test token', code: 'INVALID' },
      ]);
    });

    it('fails a flaky shop’s first orderCancel of an order without cancelling it, then cancels', async () => {
      const order = await create('1');
      const send = () =>
        call(`/${SHOP}${SHOPIFY_API}/graphql.json`, {
          token: 'flaky',
          body: { query: ORDER_CANCEL, variables: { orderId: order.id, reason: 'CUSTOMER' } },
        });
      expect((await send()).status).toBe(503);
      expect((await simOrders())[0].cancelled_at).toBeNull();
      expect((await send()).json.data.orderCancel.orderCancelUserErrors).toEqual([]);
      expect((await simOrders())[0].cancelled_at).toEqual(expect.any(String));
    });

    it('updates with orderUpdate, kept in the REST shape, and refuses once shipped', async () => {
      const order = await create('1');
      const input = {
        id: order.id,
        email: 'new@example.com',
        note: 'ring twice',
        customAttributes: [{ key: 'gift', value: 'no' }],
        shippingAddress: { city: 'Hamburg', zip: '20095', countryCode: 'DE' },
      };
      const { orderUpdate } = await graphql(ORDER_UPDATE, { input });
      expect(orderUpdate).toEqual({
        order: {
          id: order.id,
          email: 'new@example.com',
          note: 'ring twice',
          customAttributes: [{ key: 'gift', value: 'no' }],
          shippingAddress: { city: 'Hamburg', zip: '20095' },
          updatedAt: expect.any(String),
        },
        userErrors: [],
      });
      expect((await simOrders())[0]).toMatchObject({
        email: 'new@example.com',
        note_attributes: [{ name: 'gift', value: 'no' }],
        shipping_address: { city: 'Hamburg', zip: '20095', country_code: 'DE' },
      });
      await shipOn(order.id, 1);
      const refused = await graphql(ORDER_UPDATE, { input: { id: order.id, note: 'too late' } });
      expect(refused.orderUpdate).toEqual({
        order: null,
        userErrors: [{ field: ['id'], message: 'The order cannot be changed: some of it has shipped' }],
      });
    });

    it('updates tracking and cancels a fulfillment, whose quantity remains again', async () => {
      const order = await create('1', 3);
      const { fulfillment } = await shipOn(order.id, 2);
      const { fulfillmentTrackingInfoUpdate } = await graphql(TRACKING_UPDATE, {
        id: fulfillment.id,
        tracking: { company: 'DHL', numbers: ['D1', 'D2'], urls: ['https://dhl.example/D1', 'https://dhl.example/D2'] },
      });
      expect(fulfillmentTrackingInfoUpdate).toEqual({
        fulfillment: {
          id: fulfillment.id,
          status: 'SUCCESS',
          updatedAt: expect.any(String),
          trackingInfo: [
            { company: 'DHL', number: 'D1', url: 'https://dhl.example/D1' },
            { company: 'DHL', number: 'D2', url: 'https://dhl.example/D2' },
          ],
        },
        userErrors: [],
      });
      const { fulfillmentCancel } = await graphql(FULFILLMENT_CANCEL, { id: fulfillment.id });
      expect(fulfillmentCancel).toEqual({ fulfillment: { id: fulfillment.id, status: 'CANCELLED' }, userErrors: [] });
      const { order: after } = await graphql(SHOPIFY_DOCUMENTS.orderFulfillmentOrders, { id: order.id, ...FO_PAGE });
      expect(after.fulfillmentOrders.nodes[0].lineItems.nodes[0].remainingQuantity).toBe(3);
      const [stored] = await simOrders();
      expect(stored.line_items[0].fulfilled_quantity).toBe(0);
      expect(stored.fulfillments[0]).toMatchObject({ status: 'cancelled', tracking_numbers: ['D1', 'D2'] });

      const unknown = await graphql(FULFILLMENT_CANCEL, { id: 'gid://shopify/Fulfillment/1' });
      expect(unknown.fulfillmentCancel.userErrors).toHaveLength(1);
    });

    it('shows line prices, properties and gift cards, the currency, and a fulfillment by its id', async () => {
      const order = await create('1', 3);
      const shipped = await shipOn(order.id, 1);
      const query = `query q($id: ID!, $f: ID!) {
        order(id: $id) {
          currencyCode
          lineItems(first: 5) {
            nodes {
              isGiftCard
              originalUnitPriceSet { shopMoney { amount currencyCode } }
              customAttributes { key value }
            }
          }
        }
        fulfillment(id: $f) { id status }
      }`;
      const data = await graphql(query, { id: order.id, f: shipped.fulfillment.id });
      expect(data.order).toEqual({
        currencyCode: 'EUR',
        lineItems: {
          nodes: [
            {
              isGiftCard: false,
              originalUnitPriceSet: { shopMoney: { amount: '9.50', currencyCode: 'EUR' } },
              customAttributes: [],
            },
          ],
        },
      });
      expect(data.fulfillment).toEqual({ id: shipped.fulfillment.id, status: 'SUCCESS' });
      expect((await graphql(query, { id: order.id, f: 'gid://shopify/Fulfillment/1' })).fulfillment).toBeNull();
    });

    it('answers orders changed since a time with a tag, sorted by UPDATED_AT, a page at a time', async () => {
      const a = await create('1', 3);
      const b = await create('2', 1);
      const untagged = shopifyOrder('3');
      untagged.order.tags = ['manual'];
      await graphql(SHOPIFY_DOCUMENTS.orderCreate, untagged);
      const c = await create('4', 1);
      const shipped = await shipOn(a.id, 2, 'Z1');
      await graphql(ORDER_CANCEL, { orderId: b.id, reason: 'CUSTOMER' });
      const [first] = await simOrders();

      const query = `updated_at:>='${first.created_at}' tag:'reseller-order'`;
      const page1 = (await graphql(ORDERS_CHANGED, { first: 2, query })).orders;
      expect(page1.nodes.map((o: { id: string }) => o.id)).toEqual([c.id, a.id]);
      expect(page1.pageInfo).toEqual({ hasNextPage: true, endCursor: expect.any(String) });
      const page2 = (await graphql(ORDERS_CHANGED, { first: 2, after: page1.pageInfo.endCursor, query })).orders;
      expect(page2.nodes.map((o: { id: string }) => o.id)).toEqual([b.id]);
      expect(page2.pageInfo.hasNextPage).toBe(false);

      const [, shippedOrder] = page1.nodes;
      expect(shippedOrder).toMatchObject({
        cancelledAt: null,
        tags: ['reseller-order'],
        lineItems: { nodes: [{ id: expect.any(String), quantity: 3, unfulfilledQuantity: 1 }] },
        fulfillments: [
          {
            id: shipped.fulfillment.id,
            status: 'SUCCESS',
            trackingInfo: [{ company: 'UPS', number: 'Z1', url: 'https://ups.example/Z1' }],
            fulfillmentLineItems: { nodes: [{ quantity: 2, lineItem: { id: shippedOrder.lineItems.nodes[0].id } }] },
          },
        ],
      });
      expect(shippedOrder.updatedAt).toBe(shippedOrder.fulfillments[0].updatedAt);
      expect(page2.nodes[0]).toMatchObject({ cancelledAt: expect.any(String), cancelReason: 'CUSTOMER' });
      expect(numberOf(page2.nodes[0].id)).toBe(numberOf(b.id));

      const later = (await graphql(ORDERS_CHANGED, { first: 5, query: `updated_at:>='${page2.nodes[0].updatedAt}'` }))
        .orders;
      expect(later.nodes.map((o: { id: string }) => o.id)).toEqual([b.id]);
    });
  });

  describe('custom: cancel, update and orders changed since, signed', () => {
    const placedByPush = async (externalId: string) => {
      const { json } = await custom('/orders', { body: orderBody(externalId), key: `job-${externalId}` });
      return Number(json.id);
    };

    it('cancels an order (200 also when already cancelled, 422 once shipped) and refuses unsigned calls', async () => {
      const id = await placedByPush('1');
      expect((await call(`/${SHOP}/reseller/orders/${id}/cancel`, { token: null, body: {} })).status).toBe(401);
      const cancelled = await custom(`/orders/${id}/cancel`, { body: { reason: 'customer' }, key: 'c1' });
      expect(cancelled.status).toBe(200);
      expect(cancelled.json.order).toMatchObject({ id, cancelled_at: expect.any(String), cancel_reason: 'customer' });
      expect((await custom(`/orders/${id}/cancel`, { body: {}, key: 'c2' })).status).toBe(200);

      const shippedId = await placedByPush('2');
      await control(`/orders/${shippedId}/fulfillments`, { shopDomain: SHOP, fulfillment: tracking('T1') });
      const refused = await custom(`/orders/${shippedId}/cancel`, { body: {}, key: 'c3' });
      expect(refused.status).toBe(422);
      expect(
        sim()
          .calls()
          .map((c) => [c.method, c.path, c.status]),
      ).toContainEqual(['POST', `/reseller/orders/${shippedId}/cancel`, 422]);
    });

    it('updates an order with PATCH (wrapped in "order" or bare), 422 once cancelled', async () => {
      const id = await placedByPush('1');
      const wrapped = await custom(`/orders/${id}`, { method: 'PATCH', body: { order: { note: 'a' } }, key: 'u1' });
      expect(wrapped.status).toBe(200);
      const bare = await custom(`/orders/${id}`, { method: 'PATCH', body: { email: 'b@example.com' }, key: 'u2' });
      expect(bare.json.order).toMatchObject({ note: 'a', email: 'b@example.com' });
      await custom(`/orders/${id}/cancel`, { body: {}, key: 'c1' });
      expect((await custom(`/orders/${id}`, { method: 'PATCH', body: { note: 'c' }, key: 'u3' })).status).toBe(422);
      expect((await call(`/${SHOP}/reseller/orders/${id}`, { method: 'PATCH', token: null, body: {} })).status).toBe(
        401,
      );
    });

    it('updates a fulfillment’s tracking and cancels it (the service’s own routes), signed, keyed', async () => {
      const id = await placedByPush('1');
      const shipped = await custom(`/orders/${id}/fulfillments`, { body: { fulfillment: tracking('T1') }, key: 'f1' });
      const fulfillmentId = shipped.json.id;
      const path = `/fulfillments/${fulfillmentId}`;
      const unsigned = await call(`/${SHOP}/reseller${path}/update_tracking`, { token: null, body: {} });
      expect(unsigned.status).toBe(401);

      const update = { fulfillment: { tracking_company: 'UPS', tracking_numbers: ['U1'], notify_customer: true } };
      const updated = await custom(`${path}/update_tracking`, { body: update, key: 't1' });
      expect(updated.status).toBe(200);
      expect(updated.json.fulfillment).toMatchObject({
        id: Number(fulfillmentId),
        tracking_company: 'UPS',
        tracking_numbers: ['U1'],
      });
      await custom(`${path}/update_tracking`, { body: { fulfillment: { tracking_numbers: ['U2'] } }, key: 't2' });
      // The same key again answers its first answer and changes nothing.
      expect(await custom(`${path}/update_tracking`, { body: update, key: 't1' })).toEqual(updated);
      expect((await simOrders())[0].fulfillments[0].tracking_numbers).toEqual(['U2']);

      const cancelled = await custom(`${path}/cancel`, { body: {}, key: 'fc1' });
      expect(cancelled.status).toBe(200);
      expect(cancelled.json.fulfillment).toMatchObject({ status: 'cancelled' });
      expect((await custom(`${path}/cancel`, { body: {}, key: 'fc2' })).status).toBe(200);
      const [stored] = await simOrders();
      expect(stored.line_items.map((l: { fulfilled_quantity: number }) => l.fulfilled_quantity)).toEqual([0, 0]);
      expect((await custom(`${path}/update_tracking`, { body: update, key: 't3' })).status).toBe(422);
      expect((await custom('/fulfillments/1/cancel', { body: {}, key: 'fc3' })).status).toBe(404);
      expect(
        (await custom(`${path}/cancel`, { body: {}, key: 'fc4', headers: { Authorization: 'Bearer fail500' } })).status,
      ).toBe(500);
      expect(
        sim()
          .calls()
          .filter((c) => c.path.startsWith('/reseller/fulfillments/'))
          .map((c) => c.status),
      ).toEqual([401, 200, 200, 200, 200, 200, 422, 404, 500]);
    });

    it('answers orders changed since, as storeplatform_a, a page at a time, and the lookup as before', async () => {
      const ids = [await placedByPush('1'), await placedByPush('2'), await placedByPush('3')];
      await custom(`/orders/${ids[0]}/cancel`, { body: {}, key: 'c1' });
      const first = await custom('/orders?updated_at_min=2020-01-01T00:00:00Z&limit=2');
      expect(first.status).toBe(200);
      expect(first.json.orders.map((o: { id: number }) => o.id)).toEqual([ids[1], ids[2]]);
      expect(first.json.orders[0].line_items[0]).toMatchObject({ id: expect.any(Number), fulfilled_quantity: 0 });
      const next = await custom(`/orders?page_info=${encodeURIComponent(first.json.next_page_info)}`);
      expect(next.json).toEqual({
        orders: [expect.objectContaining({ id: ids[0], cancelled_at: expect.any(String) })],
        next_page_info: null,
      });
      expect((await call(`/${SHOP}/reseller/orders?updated_at_min=2020-01-01T00:00:00Z`, { token: null })).status).toBe(
        401,
      );
      const lookup = await custom(
        `/orders?source_identifier=${encodeURIComponent(orderBody('2').order.source_identifier)}`,
      );
      expect(lookup.json).toEqual({ orders: [{ id: String(ids[1]) }] });
    });
  });

  describe('test controls', () => {
    it('places an order keeping the ids given, and shows it whole in storeplatform_a’s shape', async () => {
      const placedOrder = await control('/orders', {
        shopDomain: SHOP,
        order: {
          id: 450789469,
          currency: 'EUR',
          tags: 'reseller-order',
          created_at: '2020-01-01T00:00:00.000Z',
          line_items: [{ id: 466157049, quantity: 2, price: '1.00', vendor: 'Acme' }, { quantity: 1 }],
        },
      });
      expect(placedOrder.status).toBe(201);
      const [shown] = await simOrders();
      expect(shown).toEqual(placedOrder.json.order);
      expect(shown).toMatchObject({
        id: 450789469,
        created_at: '2020-01-01T00:00:00.000Z',
        cancelled_at: null,
        fulfillments: [],
        line_items: [
          { id: 466157049, quantity: 2, fulfilled_quantity: 0 },
          { id: expect.any(Number), quantity: 1, fulfilled_quantity: 0 },
        ],
      });
      expect(shown.updated_at > shown.created_at).toBe(true);
      expect(sim().calls()).toEqual([]); // controls are not calls
    });

    it('ships the lines named (422 past what remains), then cancels even a shipped order', async () => {
      await control('/orders', { shopDomain: SHOP, order: { id: 42, line_items: [{ id: 1, quantity: 2 }] } });
      const fulfillment = { ...tracking('T1'), line_items: [{ id: 1, quantity: 1 }] };
      const shipped = await control('/orders/42/fulfillments', { shopDomain: SHOP, fulfillment });
      expect(shipped.status).toBe(201);
      expect(shipped.json.fulfillment).toMatchObject({
        order_id: 42,
        status: 'success',
        line_items: [{ id: 1, quantity: 1 }],
      });
      const tooMany = await control('/orders/42/fulfillments', {
        shopDomain: SHOP,
        fulfillment: { line_items: [{ id: 1, quantity: 2 }] },
      });
      expect(tooMany.status).toBe(422);
      const cancelled = await control('/orders/42/cancel', { shopDomain: SHOP, reason: 'inventory' });
      expect(cancelled.status).toBe(200);
      const [shown] = await simOrders();
      expect(shown).toMatchObject({
        cancelled_at: expect.any(String),
        cancel_reason: 'inventory',
        line_items: [{ id: 1, quantity: 2, fulfilled_quantity: 1 }],
        fulfillments: [expect.objectContaining({ tracking_numbers: ['T1'], line_items: [{ id: 1, quantity: 1 }] })],
      });
      expect((await control('/orders/43/cancel', { shopDomain: SHOP })).status).toBe(404);
      expect((await control('/orders/42/cancel', {})).status).toBe(400);
      expect(sim().calls()).toEqual([]);
    });

    it('makes a stub of an order never seen, taking any lines, on every platform', async () => {
      const viaControl = await control('/orders/900/fulfillments', {
        shopDomain: SHOP,
        fulfillment: { line_items: [{ id: 77, quantity: 5 }] },
      });
      expect(viaControl.json.fulfillment.line_items).toEqual([{ id: 77, quantity: 5 }]);
      expect((await control('/orders/900/fulfillments', { shopDomain: SHOP, fulfillment: {} })).status).toBe(201);
      const viaRest = await ship(901, { line_items: [{ id: 78, quantity: 9 }] }, 'f1');
      expect(viaRest.json.fulfillment.line_items).toEqual([{ id: 78, quantity: 9 }]);
      const viaCustom = await custom('/orders/902/fulfillments', {
        body: { fulfillment: { line_items: [{ id: 79, quantity: 1 }] } },
        key: 'f2',
      });
      expect(viaCustom.status).toBe(201);
      const { order } = await graphql(SHOPIFY_DOCUMENTS.orderFulfillmentOrders, {
        id: 'gid://shopify/Order/903',
        ...FO_PAGE,
      });
      expect(order.fulfillmentOrders.nodes[0].status).toBe('OPEN');

      const stubs = await simOrders();
      expect(stubs.map((o: { id: number; stub: boolean }) => [o.id, o.stub])).toEqual([
        [900, true],
        [901, true],
        [902, true],
        [903, true],
      ]);
      expect(stubs[0].fulfillments.map((f: { line_items: unknown[] }) => f.line_items)).toEqual([
        [{ id: 77, quantity: 5 }],
        [],
      ]);
      const refused = await control('/orders/900/fulfillments', {
        shopDomain: SHOP,
        fulfillment: { line_items: [{ id: 77, quantity: 0 }] },
      });
      expect(refused.status).toBe(422);
    });
  });
});
