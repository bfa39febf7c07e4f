/**
 * The platform simulator after the sale (CONTRACT §15; PLATFORM-API.md "Refunds and returns" and "The
 * simulator"): a shop's refunds, returns, closes and cancels through the test controls (with the webhook
 * payloads they stand for), `current_quantity`, edits and returns on storeplatform_a, custom and Shopify's
 * GraphQL, and what each platform refuses, over real HTTP against a started simulator.
 */
import { SHOPIFY_DOCUMENTS } from '../../shared/platforms/storeplatform-b-documents.js';
import { SHOP, simulatorClient } from './simulator-client.js';

const SIGNED = { 'X-Platform-Hmac-SHA256': 'c2lnbmF0dXJl' };

const orderBody = () => ({
  order: {
    source_identifier: 'reseller.example.com:1001:sj_1',
    currency: 'EUR',
    tags: 'reseller-order',
    line_items: [
      { title: 'Mug', sku: 'MUG-1', quantity: 3, price: '9.50', vendor: 'Acme' },
      { title: 'Cap', sku: 'CAP-1', quantity: 1, price: '5.00', vendor: 'Acme' },
    ],
  },
});

describe('platform simulator, after the sale', () => {
  const { sim, call, rest, graphql: graphqlAnswer, graphqlData: graphql, reseller, simOrders } = simulatorClient();
  const control = (path: string, body: Record<string, unknown>) =>
    call(`/_sim${path}`, { token: null, body: { shopDomain: SHOP, ...body } });

  /** An order placed on the shop (REST), with `shipped` mugs shipped one parcel each. */
  const placed = async (shipped = 0) => {
    const order = (await rest('/orders.json', { body: orderBody(), key: 'sj_1' })).json.order;
    for (let n = 0; n < shipped; n++) {
      const fulfillment = { line_items: [{ id: order.line_items[0].id, quantity: 1 }], tracking_number: `T${n}` };
      expect(
        (await rest(`/orders/${order.id}/fulfillments.json`, { body: { fulfillment }, key: `f${n}` })).status,
      ).toBe(201);
    }
    return { id: order.id as number, mug: order.line_items[0].id as number, cap: order.line_items[1].id as number };
  };
  const shown = async (id: number) => (await simOrders()).find((order: { id: number }) => order.id === id);

  describe('test controls: the shop refunds, opens, closes and cancels, without a webhook', () => {
    it('refunds: current_quantity drops for cancel only; answers the refunds/create payload', async () => {
      const { id, mug, cap } = await placed(1);
      const before = (await shown(id)).updated_at;
      const refund = {
        refund_line_items: [
          { line_item_id: mug, quantity: 1, restock_type: 'return' },
          { line_item_id: cap, quantity: 1, restock_type: 'cancel' },
        ],
        shipping: { amount: '4.90' },
      };
      const answer = await control(`/orders/${id}/refunds`, { refund });
      expect(answer.status).toBe(201);
      expect(answer.json.webhook).toEqual(answer.json.refund);
      expect(answer.json.refund).toMatchObject({
        id: expect.any(Number),
        order_id: id,
        return: null,
        refund_line_items: [
          { line_item_id: mug, quantity: 1, restock_type: 'return', subtotal_set: { shop_money: { amount: '9.50' } } },
          { line_item_id: cap, quantity: 1, restock_type: 'cancel', subtotal_set: { shop_money: { amount: '5.00' } } },
        ],
        refund_shipping_lines: [{ subtotal_amount_set: { shop_money: { amount: '4.90', currency_code: 'EUR' } } }],
        transactions: [],
      });
      const order = await shown(id);
      expect(order.line_items.map((l: Record<string, number>) => [l.quantity, l.current_quantity])).toEqual([
        [3, 3],
        [1, 0],
      ]);
      expect(order.refunds).toHaveLength(1);
      expect(order.updated_at > before).toBe(true);
      // A money-only refund has no lines.
      expect((await control(`/orders/${id}/refunds`, { refund: { refund_line_items: [] } })).status).toBe(201);
    });

    it('refuses a cancel refund of units shipped, and more than a line holds (422)', async () => {
      const { id, mug } = await placed(2);
      const cancel = (quantity: number) => ({
        refund: { refund_line_items: [{ line_item_id: mug, quantity, restock_type: 'cancel' }] },
      });
      expect((await control(`/orders/${id}/refunds`, cancel(2))).status).toBe(422);
      expect((await control(`/orders/${id}/refunds`, cancel(1))).status).toBe(201);
      expect((await shown(id)).line_items[0].current_quantity).toBe(2);
      // What is no longer held cannot ship: the order has nothing left to fulfil.
      const ship = await rest(`/orders/${id}/fulfillments.json`, { body: { fulfillment: {} }, key: 'fx' });
      expect(ship.status).toBe(201);
      expect(ship.json.fulfillment.line_items).toEqual([{ id: expect.any(Number), quantity: 1 }]);
    });

    it('opens a return on shipped units (split over fulfillments), closes or cancels it; 422 otherwise', async () => {
      const { id, mug, cap } = await placed(2);
      const lines = (line: number, quantity: number) => ({
        return: { return_line_items: [{ line_item_id: line, quantity, return_reason: 'UNWANTED' }] },
      });
      expect((await control(`/orders/${id}/returns`, lines(cap, 1))).status).toBe(422);
      expect((await control(`/orders/${id}/returns`, lines(mug, 3))).status).toBe(422);
      const opened = await control(`/orders/${id}/returns`, lines(mug, 2));
      expect(opened.status).toBe(201);
      const made = opened.json.return;
      expect(made).toMatchObject({ order_id: id, status: 'open', closed_at: null });
      expect(made.return_line_items).toHaveLength(2);
      expect(made.return_line_items[0]).toMatchObject({ line_item_id: mug, quantity: 1, return_reason: 'unwanted' });
      // The returns/approve payload: the line through its fulfillment line item.
      expect(opened.json.webhook).toMatchObject({
        id: made.id,
        status: 'open',
        order: { id },
        return_line_items: [
          { fulfillment_line_item: { id: made.return_line_items[0].fulfillment_line_item_id, line_item: { id: mug } } },
          { quantity: 1 },
        ],
      });
      // Nothing left to return: both shipped mugs are in it.
      expect((await control(`/orders/${id}/returns`, lines(mug, 1))).status).toBe(422);

      const closed = await control(`/returns/${made.id}/close`, {});
      expect(closed.json).toMatchObject({ return: { status: 'closed' }, webhook: { id: made.id, order_id: id } });
      expect(closed.json.return.closed_at).toEqual(expect.any(String));
      expect((await control(`/returns/${made.id}/cancel`, {})).status).toBe(422);
      expect((await control('/returns/999999/close', {})).status).toBe(404);
    });

    it('cancels an open return (canceled), its units returnable again; refused once refunded through it', async () => {
      const { id, mug } = await placed(1);
      const ret = (
        await control(`/orders/${id}/returns`, {
          return: { return_line_items: [{ line_item_id: mug, quantity: 1 }] },
        })
      ).json.return;
      const cancelled = await control(`/returns/${ret.id}/cancel`, {});
      expect(cancelled.json).toMatchObject({ return: { status: 'canceled' }, webhook: { status: 'canceled' } });
      expect((await control(`/returns/${ret.id}/cancel`, {})).status).toBe(200);
      const again = (
        await control(`/orders/${id}/returns`, {
          return: { return_line_items: [{ line_item_id: mug, quantity: 1 }] },
        })
      ).json.return;
      expect(again.id).toBeGreaterThan(ret.id);
      const refund = {
        refund_line_items: [{ line_item_id: mug, quantity: 1, restock_type: 'return' }],
        return: { id: again.id },
      };
      expect((await control(`/orders/${id}/refunds`, { refund })).json.refund.return).toMatchObject({ id: again.id });
      expect((await control(`/returns/${again.id}/cancel`, {})).status).toBe(422);
    });
  });

  describe('storeplatform_a REST and custom: edits and returns', () => {
    it('edits to absolute quantities, keyed; 422 below what shipped, for a cancelled order; 404 unknown', async () => {
      const { id, mug, cap } = await placed(1);
      const edit = (line_items: unknown[], key: string) =>
        rest(`/orders/${id}/edits.json`, { body: { line_items }, key });
      const done = await edit([{ id: cap, quantity: 0 }], 'e1');
      expect(done.status).toBe(200);
      expect(done.json.order.line_items[1]).toMatchObject({ quantity: 1, current_quantity: 0 });
      expect((await edit([{ id: mug, quantity: 0 }], 'e2')).status).toBe(422);
      expect((await edit([{ id: mug, quantity: 4 }], 'e3')).status).toBe(422);
      expect((await shown(id)).line_items[0].current_quantity).toBe(3);
      // The same key answers the first answer again, without editing again.
      expect((await edit([{ id: cap, quantity: 0 }], 'e1')).json).toEqual(done.json);
      expect((await rest('/orders/999999/edits.json', { body: { line_items: [] }, key: 'e4' })).status).toBe(404);
      await control(`/orders/${id}/cancel`, {});
      expect((await edit([{ id: mug, quantity: 2 }], 'e5')).status).toBe(422);
    });

    it('opens a return keyed (201, the same key 201 again, one return), lists and cancels it', async () => {
      const { id, mug } = await placed(1);
      const body = { return: { line_items: [{ line_item_id: mug, quantity: 1, reason: 'defective', note: 'm1' }] } };
      const first = await rest(`/orders/${id}/returns.json`, { body, key: 'r1' });
      expect(first.status).toBe(201);
      expect(first.json.return).toMatchObject({
        status: 'open',
        line_items: [{ line_item_id: mug, reason: 'defective', note: 'm1' }],
      });
      expect((await rest(`/orders/${id}/returns.json`, { body, key: 'r1' })).json).toEqual(first.json);
      const listed = await rest(`/orders/${id}/returns.json`);
      expect(listed.json.returns).toEqual([first.json.return]);
      expect(
        (await rest(`/returns/${first.json.return.id}/cancel.json`, { body: {}, key: 'c1' })).json.return.status,
      ).toBe('canceled');
      const notShipped = { return: { line_items: [{ line_item_id: mug, quantity: 2 }] } };
      expect((await rest(`/orders/${id}/returns.json`, { body: notShipped, key: 'r2' })).status).toBe(422);
    });

    it('custom: edits and returns signed (401 unsigned), as storeplatform_a', async () => {
      const created = await reseller('/orders', { body: orderBody(), key: 'sj_c', headers: SIGNED });
      const id = Number(created.json.id);
      const mug = (await shown(id)).line_items[0].id;
      const unsigned = await reseller(`/orders/${id}/edits`, {
        body: { line_items: [{ id: mug, quantity: 1 }] },
        key: 'e',
      });
      expect(unsigned.status).toBe(401);
      const edited = await reseller(`/orders/${id}/edits`, {
        body: { line_items: [{ id: mug, quantity: 1 }] },
        key: 'e',
        headers: SIGNED,
      });
      expect(edited.json.order.line_items[0].current_quantity).toBe(1);
      const ret = await reseller(`/orders/${id}/returns`, {
        body: { return: { line_items: [{ line_item_id: mug, quantity: 1 }] } },
        key: 'r',
        headers: SIGNED,
      });
      expect(ret.status).toBe(422); // nothing shipped
    });
  });

  describe('storeplatform_b: through Shopify’s schema', () => {
    const gid = (type: string, id: number) => `gid://shopify/${type}/${id}`;

    it('shows currentQuantity below quantity after a cancel refund (quantity never goes down)', async () => {
      const { id, cap } = await placed();
      await control(`/orders/${id}/refunds`, {
        refund: { refund_line_items: [{ line_item_id: cap, quantity: 1, restock_type: 'cancel' }] },
      });
      const data = await graphql(SHOPIFY_DOCUMENTS.supplierOrderLines, { id: gid('Order', id), first: 10 });
      expect(data.order.lineItems.nodes.map((l: Record<string, number>) => [l.quantity, l.currentQuantity])).toEqual([
        [3, 3],
        [1, 0],
      ]);
      const refunds = await graphql(SHOPIFY_DOCUMENTS.orderRefunds, { id: gid('Order', id), refunds: 5, lines: 5 });
      expect(refunds.order.refunds[0].refundLineItems.nodes).toEqual([
        expect.objectContaining({ quantity: 1, restockType: 'CANCEL', lineItem: { id: gid('LineItem', cap) } }),
      ]);
    });

    it('edits through a session: committed all at once; refused below what shipped (userErrors)', async () => {
      const { id, mug, cap } = await placed(1);
      const begun = (await graphql(SHOPIFY_DOCUMENTS.orderEditBegin, { id: gid('Order', id), lines: 10 }))
        .orderEditBegin;
      expect(begun.calculatedOrder.lineItems.nodes[0]).toMatchObject({
        id: gid('CalculatedLineItem', mug),
        quantity: 3,
        editableQuantity: 2,
      });
      const set = (lineItemId: number, quantity: number) =>
        graphql(SHOPIFY_DOCUMENTS.orderEditSetQuantity, {
          id: begun.calculatedOrder.id,
          lineItemId: gid('CalculatedLineItem', lineItemId),
          quantity,
          restock: false,
        });
      expect((await set(mug, 0)).orderEditSetQuantity.userErrors).toEqual([
        expect.objectContaining({ field: ['quantity'] }),
      ]);
      expect((await set(cap, 0)).orderEditSetQuantity.userErrors).toEqual([]);
      expect((await shown(id)).line_items[1].current_quantity).toBe(1); // staged, not applied
      const committed = await graphql(SHOPIFY_DOCUMENTS.orderEditCommit, { id: begun.calculatedOrder.id, lines: 10 });
      expect(committed.orderEditCommit.order.lineItems.nodes[1]).toMatchObject({ quantity: 1, currentQuantity: 0 });
      expect((await shown(id)).line_items[1].current_quantity).toBe(0);
      // The session is spent.
      const again = await graphql(SHOPIFY_DOCUMENTS.orderEditCommit, { id: begun.calculatedOrder.id, lines: 10 });
      expect(again.orderEditCommit.userErrors).toHaveLength(1);
    });

    it('returns on fulfillment line items: returnable ones listed, more refused, found by orderReturns', async () => {
      const { id, mug } = await placed(2);
      const listed = await graphql(SHOPIFY_DOCUMENTS.returnableFulfillments, {
        orderId: gid('Order', id),
        first: 5,
        lines: 5,
      });
      const items = listed.returnableFulfillments.nodes.flatMap(
        (node: { returnableFulfillmentLineItems: { nodes: unknown[] } }) => node.returnableFulfillmentLineItems.nodes,
      );
      expect(items).toHaveLength(2);
      const fli = items[0].fulfillmentLineItem.id;
      const create = (quantity: number) =>
        graphql(SHOPIFY_DOCUMENTS.returnCreate, {
          returnInput: {
            orderId: gid('Order', id),
            returnLineItems: [
              { fulfillmentLineItemId: fli, quantity, returnReason: 'DEFECTIVE', returnReasonNote: 'marker' },
            ],
          },
          lines: 5,
        });
      expect((await create(2)).returnCreate).toMatchObject({ return: null, userErrors: [{ code: 'INVALID' }] });
      const made = (await create(1)).returnCreate.return;
      expect(made).toMatchObject({
        status: 'OPEN',
        returnLineItems: { nodes: [{ quantity: 1, returnReason: 'DEFECTIVE' }] },
      });
      expect(made.returnLineItems.nodes[0].fulfillmentLineItem).toMatchObject({
        id: fli,
        lineItem: { id: gid('LineItem', mug) },
      });
      const found = await graphql(SHOPIFY_DOCUMENTS.orderReturns, { id: gid('Order', id), first: 5, lines: 5 });
      expect(found.order.returns.nodes.map((r: { id: string }) => r.id)).toEqual([made.id]);
      const cancelled = await graphql(SHOPIFY_DOCUMENTS.returnCancel, { id: made.id });
      expect(cancelled.returnCancel).toMatchObject({ return: { status: 'CANCELED' }, userErrors: [] });
    });

    it('a `lost` token loses returnCreate’s answer after making the return; calls name their operation', async () => {
      const { id } = await placed(1);
      const flis = await graphql(SHOPIFY_DOCUMENTS.returnableFulfillments, {
        orderId: gid('Order', id),
        first: 5,
        lines: 5,
      });
      const fli = flis.returnableFulfillments.nodes[0].returnableFulfillmentLineItems.nodes[0].fulfillmentLineItem.id;
      const variables = {
        returnInput: { orderId: gid('Order', id), returnLineItems: [{ fulfillmentLineItemId: fli, quantity: 1 }] },
        lines: 5,
      };
      await expect(
        graphqlAnswer(SHOPIFY_DOCUMENTS.returnCreate, variables, { token: 'shpat_tok_lost' }),
      ).rejects.toThrow();
      expect((await shown(id)).returns).toHaveLength(1);
      const calls = sim().calls();
      expect(calls.at(-1)).toMatchObject({ operation: 'returnCreate', lost: true });
      // The REST calls placing and shipping the order name none.
      expect(calls.map((c) => c.operation)).toEqual([undefined, undefined, 'returnableFulfillments', 'returnCreate']);
    });
  });
});
