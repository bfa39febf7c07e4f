/**
 * The three platform adapters after the sale (CONTRACT §15, PLATFORM-API.md "Refunds and returns"), each call
 * against the real platform simulator over HTTP: edits to absolute quantities (convergent, what shipped stays),
 * returns on the supplier's fulfillments (refused for units not shipped, a lost answer never making two),
 * finding and cancelling them, and the order read after the sale and polled with its refunds and returns.
 */
import { adapterFor } from '../../shared/platforms/adapters.js';
import { classify, type Platform, type ReturnRequest, type Tracking } from '../../shared/platforms/port.js';
import { adaptersAgainstSimulator, orderToPlace, platformFailure, simOrderOn, simShop } from './adapter-simulator.js';

const SHOP = 'supplier.example.com';
const PLATFORMS = ['storeplatform_a', 'storeplatform_b', 'custom'] as const;

const shopOn = (platform: Platform, accessToken = 'shpat_sale_ok') =>
  simShop(platform, SHOP, { accessToken, webhookSecret: 'whsec_sale_secret' });
const supplierOrder = (job: string) => orderToPlace(job);

const tracking = (number: string): Tracking => ({ company: 'UPS', number, numbers: [number], url: null, urls: [] });

interface SimLine {
  id: number;
  quantity: number;
  current_quantity: number;
  fulfilled_quantity: number;
}
interface SimOrder {
  id: number;
  updated_at: string;
  line_items: SimLine[];
  returns: Array<{ id: number; status: string; return_line_items: Array<Record<string, unknown>> }>;
  refunds: Array<Record<string, unknown>>;
}

const simulator = adaptersAgainstSimulator();

const control = async (path: string, body: unknown) => {
  const res = await fetch(`${simulator().url}/_sim${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ shopDomain: SHOP, ...(body as object) }),
  });
  return { status: res.status, json: JSON.parse(await res.text()) };
};
const simOrder = (orderId: string) => simOrderOn<SimOrder>(simulator(), SHOP, orderId);
/** The platform calls of one kind the simulator received (REST path, or GraphQL root field). */
const callsTo = (what: RegExp) =>
  simulator()
    .calls()
    .filter((call) => what.test(call.operation ?? call.path));

describe.each(PLATFORMS)('Platform adapter after the sale: %s, against the simulator', (platform) => {
  const adapter = adapterFor(platform);
  const shop = shopOn(platform);
  const keyed = platform !== 'storeplatform_b';

  /** A supplier order placed by the adapter, with `shipped` mugs shipped one parcel each. */
  const placed = async (shipped = 0) => {
    const { orderId } = await adapter.createOrder(shop, supplierOrder('sj_1'), 'sj_1');
    const lineIds = (await simOrder(orderId)).line_items.map((line) => String(line.id));
    for (let n = 0; n < shipped; n++) {
      await adapter.createFulfillment(shop, orderId, tracking(`T${n}`), `ful_${n}`, {
        lineItems: [{ id: lineIds[0], quantity: 1 }],
      });
    }
    return { orderId, mug: lineIds[0], cap: lineIds[1] };
  };
  const returnOf = (mug: string, quantity: number, marker = 'reseller return 555 (reseller.example.com #1001) sj_1') =>
    ({ marker, lines: [{ lineItemId: mug, quantity, reason: 'unwanted' }] }) satisfies ReturnRequest;

  it('edits lines to absolute quantities; the same edit again removes nothing twice', async () => {
    const { orderId, mug, cap } = await placed();
    const targets = [
      { id: mug, quantity: 1 },
      { id: cap, quantity: 0 },
    ];
    const first = await adapter.editOrderQuantities(shop, orderId, targets, 'sj_1:edit:r1');
    expect(first.edited).toBe(true);
    expect(first.lines).toEqual([
      { id: mug, quantity: 3, currentQuantity: 1, fulfilledQuantity: 0 },
      { id: cap, quantity: 1, currentQuantity: 0, fulfilledQuantity: 0 },
    ]);
    expect((await simOrder(orderId)).line_items.map((l) => [l.quantity, l.current_quantity])).toEqual([
      [3, 1],
      [1, 0],
    ]);
    // Sent again (a lost answer, a redelivered refund): the lines are already there.
    const again = await adapter.editOrderQuantities(shop, orderId, targets, 'sj_1:edit:r1');
    expect(again.lines.map((line) => line.currentQuantity)).toEqual([1, 0]);
    expect((await simOrder(orderId)).line_items.map((l) => l.current_quantity)).toEqual([1, 0]);
    // Where the adapter reads first, nothing is sent the second time.
    if (platform !== 'custom') expect(again.edited).toBe(false);
    const edits = callsTo(platform === 'storeplatform_b' ? /^orderEditCommit$/ : /\/edits(\.json)?$/);
    expect(edits).toHaveLength(platform === 'custom' ? 2 : 1);
  });

  it('keeps what shipped: removes what can be, the rest shown (custom: the endpoint’s 422)', async () => {
    const { orderId, mug } = await placed(2);
    const edit = adapter.editOrderQuantities(shop, orderId, [{ id: mug, quantity: 0 }], 'sj_1:edit:r2');
    if (platform === 'custom') {
      // No read on custom: its endpoint refuses units it has shipped, permanently.
      const error = await platformFailure(edit);
      expect(error).toMatchObject({ platform, status: 422, retryable: false });
      expect(classify(error, 'internal').kind).toBe('permanent');
      expect((await simOrder(orderId)).line_items[0].current_quantity).toBe(3);
      return;
    }
    const result = await edit;
    expect(result.lines[0]).toEqual({ id: mug, quantity: 3, currentQuantity: 2, fulfilledQuantity: 2 });
    expect((await simOrder(orderId)).line_items[0]).toMatchObject({ current_quantity: 2, fulfilled_quantity: 2 });
    // Nothing more can go: the next try sends nothing.
    expect((await adapter.editOrderQuantities(shop, orderId, [{ id: mug, quantity: 0 }], 'k')).edited).toBe(false);
  });

  it('an edit whose answer was lost converges: sent again, it finds the lines done', async () => {
    const { orderId, mug } = await placed();
    const lost = await platformFailure(
      adapter.editOrderQuantities(shopOn(platform, 'shpat_lost'), orderId, [{ id: mug, quantity: 2 }], 'sj_1:e'),
    );
    expect(lost).toMatchObject({ retryable: true, outcomeUnknown: true });
    // REST and custom lose the edit's answer after applying it; Shopify loses orderEditBegin's: nothing committed.
    expect((await simOrder(orderId)).line_items[0].current_quantity).toBe(keyed ? 2 : 3);
    const retry = await adapter.editOrderQuantities(shop, orderId, [{ id: mug, quantity: 2 }], 'sj_1:e');
    expect(retry.lines[0].currentQuantity).toBe(2);
    expect((await simOrder(orderId)).line_items[0].current_quantity).toBe(2);
  });

  it('waits out a 429 as the other calls do (Shopify: THROTTLED as a 429)', async () => {
    const { orderId, mug } = await placed();
    const error = await platformFailure(
      adapter.editOrderQuantities(shopOn(platform, 'shpat_fail429'), orderId, [{ id: mug, quantity: 2 }], 'k'),
    );
    expect(error).toMatchObject({ status: 429, retryable: true, retryAfterSeconds: 1 });
    expect(classify(error, 'internal')).toMatchObject({ kind: 'throttled', delaySeconds: expect.any(Number) });
  });

  it('opens a return on the shipped units, split over the fulfillments, with the reason and the marker', async () => {
    const { orderId, mug } = await placed(2);
    const made = await adapter.createReturn(shop, orderId, returnOf(mug, 2), 'sj_1:ret:555');
    expect(made.status).toBe('open');
    expect(made.lines.map((line) => [line.lineItemId, line.quantity, line.reason])).toEqual([
      [mug, 1, 'unwanted'],
      [mug, 1, 'unwanted'],
    ]);
    if (platform === 'storeplatform_b') expect(made.id).toMatch(/^gid:\/\/shopify\/Return\/\d+$/);
    else expect(made.id).toMatch(/^\d+$/);
    const [stored] = (await simOrder(orderId)).returns;
    expect(stored.status).toBe('open');
    expect(new Set(stored.return_line_items.map((line) => line.fulfillment_line_item_id)).size).toBe(2);
    expect(stored.return_line_items.map((line) => line.return_reason_note)).toEqual([
      returnOf(mug, 2).marker,
      returnOf(mug, 2).marker,
    ]);
  });

  it('refuses a return of units not shipped (422, permanent) and opens none', async () => {
    const { orderId, mug, cap } = await placed(1);
    for (const request of [returnOf(mug, 2), returnOf(cap, 1)]) {
      const error = await platformFailure(
        adapter.createReturn(shop, orderId, request, `sj_1:ret:${request.lines[0].quantity}`),
      );
      expect(error).toMatchObject({ status: 422, retryable: false });
    }
    expect((await simOrder(orderId)).returns).toEqual([]);
  });

  it('a return whose answer was lost is one return: replayed by its key, or found by its marker', async () => {
    const { orderId, mug } = await placed(1);
    const lost = await platformFailure(
      adapter.createReturn(shopOn(platform, 'shpat_lost'), orderId, returnOf(mug, 1), 'r1'),
    );
    expect(lost).toMatchObject({ retryable: true, outcomeUnknown: true });
    expect((await simOrder(orderId)).returns).toHaveLength(1);
    const again = await adapter.createReturn(shop, orderId, returnOf(mug, 1), 'r1', { resend: true });
    expect(String((await simOrder(orderId)).returns[0].id)).toBe(again.id.replace(/^gid:\/\/shopify\/Return\//, ''));
    expect((await simOrder(orderId)).returns).toHaveLength(1);
    if (!keyed) expect(callsTo(/^orderReturns$/).length).toBeGreaterThan(0);
  });

  it('finds a return by its marker, not a cancelled one (custom: unsupported)', async () => {
    const { orderId, mug } = await placed(2);
    const made = await adapter.createReturn(shop, orderId, returnOf(mug, 1, 'marker A'), 'rA');
    if (platform === 'custom') {
      expect(await adapter.findReturn(shop, orderId, 'marker A')).toBe('unsupported');
      expect(await adapter.cancelReturn(shop, orderId, made.id, 'rA:cancel')).toBe('unsupported');
      return;
    }
    expect(await adapter.findReturn(shop, orderId, 'marker A')).toMatchObject({ id: made.id, status: 'open' });
    expect(await adapter.findReturn(shop, orderId, 'marker B')).toBeNull();
    await adapter.cancelReturn(shop, orderId, made.id, 'rA:cancel');
    expect(await adapter.findReturn(shop, orderId, 'marker A')).toBeNull();
  });

  it('cancels an open return (again: success), refuses once the supplier refunded through it', async () => {
    if (platform === 'custom') return; // no cancel on custom (the test above)
    const { orderId, mug } = await placed(2);
    const first = await adapter.createReturn(shop, orderId, returnOf(mug, 1, 'm1'), 'r1');
    expect(await adapter.cancelReturn(shop, orderId, first.id, 'r1:cancel')).toMatchObject({ status: 'canceled' });
    expect(await adapter.cancelReturn(shop, orderId, first.id, 'r1:cancel-2')).toMatchObject({ status: 'canceled' });
    const second = await adapter.createReturn(shop, orderId, returnOf(mug, 1, 'm2'), 'r2');
    const returnId = Number(second.id.replace(/^gid:\/\/shopify\/Return\//, ''));
    const refund = { refund_line_items: [{ line_item_id: Number(mug), quantity: 1, restock_type: 'return' }] };
    expect(
      (await control(`/orders/${orderId}/refunds`, { refund: { ...refund, return: { id: returnId } } })).status,
    ).toBe(201);
    const error = await platformFailure(adapter.cancelReturn(shop, orderId, second.id, 'r2:cancel'));
    expect(error).toMatchObject({ status: 422, retryable: false });
    expect((await simOrder(orderId)).returns.map((r) => r.status)).toEqual(['canceled', 'open']);
  });

  it('reads the order after the sale and polls it: current quantities, refunds, returns', async () => {
    const { orderId, mug, cap } = await placed(1);
    const before = (await simOrder(orderId)).updated_at;
    const opened = await control(`/orders/${orderId}/returns`, {
      return: { return_line_items: [{ line_item_id: Number(mug), quantity: 1, return_reason: 'defective' }] },
    });
    expect(opened.status).toBe(201);
    const refund = {
      refund_line_items: [
        { line_item_id: Number(mug), quantity: 1, restock_type: 'return' },
        { line_item_id: Number(cap), quantity: 1, restock_type: 'cancel' },
      ],
      shipping: { amount: '4.90' },
      return: { id: opened.json.return.id },
    };
    expect((await control(`/orders/${orderId}/refunds`, { refund })).status).toBe(201);
    expect((await control(`/returns/${opened.json.return.id}/close`, {})).json.return.status).toBe('closed');

    const polled = (await adapter.ordersChangedSince(shop, before, { tag: 'reseller-order' })).orders;
    const read = await adapter.readOrderAfterSale(shop, orderId);
    const changes = platform === 'custom' ? [polled[0]] : [polled[0], read];
    if (platform === 'custom') expect(read).toBe('unsupported');
    for (const changed of changes) {
      if (!changed || changed === 'unsupported') throw new Error('no order read');
      const lines = changed.payload.line_items as Array<Record<string, unknown>>;
      expect(lines.map((line) => [line.id, line.quantity, line.current_quantity])).toEqual([
        [mug, 3, 3],
        [cap, 1, 0],
      ]);
      expect(changed.returns).toEqual([
        expect.objectContaining({
          id: String(opened.json.return.id),
          order_id: orderId,
          status: 'closed',
          return_line_items: [expect.objectContaining({ line_item_id: mug, quantity: 1, return_reason: 'defective' })],
        }),
      ]);
      expect(changed.refunds).toEqual([
        expect.objectContaining({
          order_id: orderId,
          return: expect.objectContaining({ id: String(opened.json.return.id) }),
          refund_line_items: [
            expect.objectContaining({ line_item_id: mug, quantity: 1, restock_type: 'return' }),
            expect.objectContaining({ line_item_id: cap, quantity: 1, restock_type: 'cancel' }),
          ],
        }),
      ]);
      const [refunded] = changed.refunds as Array<{ refund_line_items: Array<{ subtotal_set: unknown }> }>;
      expect(refunded.refund_line_items[0].subtotal_set).toMatchObject({
        shop_money: { amount: '9.50', currency_code: 'EUR' },
      });
    }
  });

  it('answers null for an order the shop does not have, and an order without refunds carries none', async () => {
    const { orderId } = await placed();
    if (platform === 'custom') return;
    expect(await adapter.readOrderAfterSale(shop, '999999')).toBeNull();
    expect(await adapter.readOrderAfterSale(shop, orderId)).toMatchObject({ refunds: [], returns: [] });
  });
});
