import { writesAll } from '../../lib/local/faults.js';
import type { SdkCall } from '../../lib/local/protocol.js';
import {
  createResellerStore,
  createSourceStore,
  loggedServiceForSuite,
  pollStores,
  replaceAccessToken,
  storePair,
  unique,
} from './support.js';
import { eventually, fulfillmentPayload, jobReaches, orderPayload, sendWebhook } from './webhooks.js';

/**
 * Refunds and returns (CONTRACT.md §15) end to end through the local runtime: the reseller's refund
 * takes units off the supplier's order before it ships, a return reaches the supplier who shipped,
 * and what the supplier refunds shows as the job's credit. What the suppliers hold is read on the
 * simulator; the reseller's webhooks are built from the simulator's answers, as `orders/create` is.
 */

jest.setTimeout(120_000);

describe('refunds and returns through the local runtime', () => {
  const sdkCalls: SdkCall[] = [];
  const { service, log, sim } = loggedServiceForSuite({ onSdkCall: (call) => sdkCalls.push(call) });
  afterEach(() => service.runtime.faults.clear());

  const post = (path: string, body: unknown) => sim().control('POST', path, body);

  const webhook = (shopDomain: string, secret: string, topic: string, body: unknown) =>
    sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', { shopDomain, secret, body, topic });

  /** A reseller store with `vendors.length` suppliers, and a completed order of one line per supplier. */
  const placeOrder = async (lines: { quantity: number; price?: string }[], source: Record<string, unknown> = {}) => {
    const api = service.api('owner_a');
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api, { webhookSecret: resellerSecret });
    const suppliers: Array<{ store: any; sourceSecret: string; vendorTag: string }> = [];
    for (const _ of lines) {
      const sourceSecret = unique('whsec_s');
      const vendorTag = unique('Vendor');
      const store = await createSourceStore(api, reseller.id, { vendorTag, webhookSecret: sourceSecret, ...source });
      suppliers.push({ store, sourceSecret, vendorTag });
    }
    const payload = orderPayload(
      lines.map((line, i) => ({
        vendor: suppliers[i].vendorTag,
        price: line.price ?? '13.00',
        quantity: line.quantity,
      })),
    );
    const receipt = await webhook(reseller.shopDomain, resellerSecret, 'orders/create', payload);
    expect(receipt.status).toBe(200);
    const jobIds = receipt.body.syncJobIds as string[];
    const jobs = [];
    for (const id of jobIds) jobs.push(await jobReaches(api, id, 'completed'));
    // Each job's supplier, by the line it carries.
    const byLine = jobs.map((job) => ({ job, supplier: suppliers.find((s) => s.store.id === job.sourceStoreId)! }));
    return { api, reseller, resellerSecret, payload, byLine };
  };

  const refundPayload = (id: number, orderId: number, lines: Array<[number, number, string]>) => ({
    id,
    order_id: orderId,
    created_at: new Date().toISOString(),
    note: 'customer changed their mind',
    refund_line_items: lines.map(([lineItemId, quantity, restockType], i) => ({
      id: id * 10 + i,
      line_item_id: lineItemId,
      quantity,
      restock_type: restockType,
      subtotal_set: { shop_money: { amount: (13 * quantity).toFixed(2), currency_code: 'USD' } },
    })),
    refund_shipping_lines: [],
    order_adjustments: [],
    transactions: [{ id: id * 7, amount: '13.00', kind: 'refund' }],
  });

  const editCalls = async (shopDomain: string) =>
    (await sim().calls()).filter((c) => c.shopDomain === shopDomain && /edits(\.json)?$/.test(c.path));
  const job = async (api: any, id: string) => (await api.get(`/v1/sync_jobs/${id}`)).body;
  let refundSequence = 7_700_000;

  it('keeps a refund that came before its order, once, and places the smaller quantity on arrival', async () => {
    const api = service.api('owner_a');
    const { resellerSecret, reseller, vendorTag, source: supplier } = await storePair(api);
    const payload = orderPayload([{ vendor: vendorTag, price: '13.00', quantity: 3 }]);
    const refund = refundPayload(++refundSequence, payload.id, [[1, 1, 'cancel']]);
    // Early, and delivered twice: kept once.
    for (const _ of [1, 2]) {
      const early = await webhook(reseller.shopDomain, resellerSecret, 'refunds/create', refund);
      expect(early.status).toBe(200);
    }
    const receipt = await webhook(reseller.shopDomain, resellerSecret, 'orders/create', payload);
    expect(receipt.status).toBe(200);
    const [jobId] = receipt.body.syncJobIds as string[];
    expect(receipt.body.syncJobIds).toHaveLength(1);
    const placed = await jobReaches(api, jobId, 'completed', 60_000);
    expect(placed.lineItems[0]).toMatchObject({ quantity: 3, refundedQuantity: 1, removedQuantity: 1 });
    const [supplierOrder] = await sim().orders(supplier.shopDomain);
    expect(supplierOrder.line_items[0].quantity).toBe(2);
    expect(await editCalls(supplier.shopDomain)).toHaveLength(0);
    // The order's view shows the refund; a redelivery of it now changes nothing.
    const order = (await api.get(`/v1/reseller_stores/${reseller.id}/orders/${payload.id}`)).body;
    expect(order.refunds).toEqual([expect.objectContaining({ id: String(refund.id) })]);
    expect((await webhook(reseller.shopDomain, resellerSecret, 'refunds/create', refund)).status).toBe(200);
    expect((await job(api, jobId)).lineItems[0]).toMatchObject({ refundedQuantity: 1, removedQuantity: 1 });
    // The refund's `orders/updated` (its line's current_quantity lowered, its quantity never) is no
    // edit of the lines: §10.6's attention does not fire (CONTRACT.md §15). A later note still is one.
    const lowered = {
      ...payload,
      line_items: payload.line_items.map((line: any) => ({ ...line, current_quantity: line.quantity - 1 })),
      note: 'refunded one',
      updated_at: '2030-01-01T00:00:00Z',
    };
    const updated = await webhook(reseller.shopDomain, resellerSecret, 'orders/updated', lowered);
    expect(updated.status).toBe(200);
    expect(updated.body.syncJobIds).toEqual([jobId]); // taken (written before the answer)
    expect((await job(api, jobId)).attention).toBeNull();
  });

  it('takes a line refunded before shipping off its supplier’s order alone, once however often told', async () => {
    const { api, reseller, resellerSecret, payload, byLine } = await placeOrder([{ quantity: 2 }, { quantity: 1 }]);
    const [first, second] = byLine.sort((a, b) =>
      a.job.lineItems[0].resellerLineItemId.localeCompare(b.job.lineItems[0].resellerLineItemId),
    );
    const refund = refundPayload(++refundSequence, payload.id, [[1, 1, 'cancel']]);
    const receipts = await Promise.all([
      webhook(reseller.shopDomain, resellerSecret, 'refunds/create', refund),
      webhook(reseller.shopDomain, resellerSecret, 'refunds/create', refund),
    ]);
    expect(receipts.map((r) => r.status)).toEqual([200, 200]);
    const edited = await eventually(async () => {
      const now = await job(api, first.job.id);
      return now.lineItems[0].removedQuantity === 1 && now;
    });
    expect(edited.lineItems[0]).toMatchObject({
      quantity: 2,
      refundedQuantity: 1,
      removedQuantity: 1,
      returnedQuantity: 0,
    });
    expect(edited.status).toBe('completed');
    const [supplierOrder] = await sim().orders(first.supplier.store.shopDomain);
    expect(supplierOrder.line_items[0]).toMatchObject({ quantity: 2, current_quantity: 1 });
    // The other supplier's order is untouched, and its job shows nothing refunded.
    expect(await editCalls(second.supplier.store.shopDomain)).toHaveLength(0);
    const other = await job(api, second.job.id);
    expect(other.lineItems[0]).toMatchObject({ refundedQuantity: 0, removedQuantity: 0 });
    // Later, again: still one edit.
    expect((await webhook(reseller.shopDomain, resellerSecret, 'refunds/create', refund)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await editCalls(first.supplier.store.shopDomain)).toHaveLength(1);
    const audit = (await api.get(`/v1/audit_log?resource_id=${first.job.id}`)).body.data;
    expect(audit.map((e: any) => e.action)).toEqual(['sync_job.units_removed']);
    // Kept in three lists, not five (docs/performance.md), it is read by every filter it matches.
    const entryId = audit[0].id;
    for (const filter of [
      '',
      '?action=sync_job.units_removed',
      `?reseller_store_id=${reseller.id}`,
      `?reseller_store_id=${reseller.id}&action=sync_job.units_removed`,
    ]) {
      const read = (await api.get(`/v1/audit_log${filter}${filter ? '&' : '?'}limit=100`)).body.data;
      expect(read.map((e: any) => e.id)).toContain(entryId);
    }
    const others = (await api.get(`/v1/audit_log?reseller_store_id=${reseller.id}&action=sync_job.retried`)).body;
    expect(others.data).toEqual([]);
    const events = await eventually(async () => {
      const listed = (await api.get('/v1/events?type=sync_job.units_removed&limit=100')).body.data;
      const mine = listed.filter((e: any) => e.data.object.id === first.job.id);
      return mine.length > 0 && mine;
    });
    expect(events).toHaveLength(1);
    expect(events[0].data.object.lineItems[0]).toMatchObject({ removedQuantity: 1 });
    // The order shows the refund.
    const order = (await api.get(`/v1/reseller_stores/${reseller.id}/orders/${payload.id}`)).body;
    expect(order.refunds).toEqual([
      expect.objectContaining({
        id: String(refund.id),
        lines: [{ resellerLineItemId: '1', quantity: 1, restockType: 'cancel' }],
      }),
    ]);
  });

  it('records a money-only refund on the order and sends nothing', async () => {
    const { api, reseller, resellerSecret, payload, byLine } = await placeOrder([{ quantity: 1 }]);
    const refund = { ...refundPayload(++refundSequence, payload.id, []), refund_line_items: [] };
    expect((await webhook(reseller.shopDomain, resellerSecret, 'refunds/create', refund)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await editCalls(byLine[0].supplier.store.shopDomain)).toHaveLength(0);
    const now = await job(api, byLine[0].job.id);
    expect(now.lineItems[0]).toMatchObject({ refundedQuantity: 0, removedQuantity: 0 });
    const order = (await api.get(`/v1/reseller_stores/${reseller.id}/orders/${payload.id}`)).body;
    expect(order.refunds).toEqual([expect.objectContaining({ id: String(refund.id), lines: [] })]);
  });

  /** The supplier ships the job's line (on the simulator) and tells the service (its fulfillments/create). */
  const ship = async (line: { job: any; supplier: any }, quantity: number) => {
    const [order] = await sim().orders(line.supplier.store.shopDomain);
    const lineItems = [{ id: order.line_items[0].id, quantity }];
    const made = await post(`/_sim/orders/${order.id}/fulfillments`, {
      shopDomain: line.supplier.store.shopDomain,
      fulfillment: { line_items: lineItems },
    });
    expect(made.status).toBe(201);
    const body = fulfillmentPayload(order.id, { id: made.body.fulfillment.id, line_items: lineItems });
    const sent = await sendWebhook(service.runtime.apiUrl, '/v1/fulfillments/webhook', {
      shopDomain: line.supplier.store.shopDomain,
      secret: line.supplier.sourceSecret,
      body,
      topic: 'fulfillments/create',
    });
    expect(sent.status).toBe(200);
    return order;
  };

  it('opens a return on the supplier who shipped, sees it closed and refunded: the credit is settled', async () => {
    const { api, reseller, resellerSecret, payload, byLine } = await placeOrder([{ quantity: 2 }]);
    const [line] = byLine;
    const supplierOrder = await ship(line, 2);
    await eventually(async () => (await job(api, line.job.id)).lineItems[0].fulfilledQuantity === 2);
    const approved = {
      id: 555_000 + refundSequence++,
      status: 'open',
      order: { id: payload.id },
      customer: { id: 42, email: 'shopper@example.com', first_name: 'Ada', last_name: 'Lovelace' },
      return_line_items: [
        { id: 1, fulfillment_line_item: { id: 99, line_item: { id: 1 } }, quantity: 1, return_reason: 'UNWANTED' },
      ],
    };
    expect((await webhook(reseller.shopDomain, resellerSecret, 'returns/approve', approved)).status).toBe(200);
    expect((await webhook(reseller.shopDomain, resellerSecret, 'returns/approve', approved)).status).toBe(200);
    const opened = await eventually(async () => {
      const now = await job(api, line.job.id);
      return now.returns?.[0]?.status === 'open' && now;
    });
    expect(opened.returns).toEqual([
      expect.objectContaining({
        resellerReturnId: String(approved.id),
        sourceReturnId: expect.any(String),
        lines: [expect.objectContaining({ resellerLineItemId: '1', quantity: 1, reason: 'unwanted' })],
      }),
    ]);
    expect(opened.lineItems[0]).toMatchObject({ returnedQuantity: 1 });
    expect(opened.credit).toEqual({ currency: 'USD', expected: opened.lineItems[0].sourcePrice, refunded: '0.00' });
    const [onSupplier] = await sim().orders(line.supplier.store.shopDomain);
    expect(onSupplier.returns).toHaveLength(1);
    expect(onSupplier.returns[0].return_line_items).toEqual([
      expect.objectContaining({ line_item_id: supplierOrder.line_items[0].id, quantity: 1 }),
    ]);
    // The supplier closes it, then refunds it: the job is owed credit until the refund.
    const closed = await post(`/_sim/returns/${onSupplier.returns[0].id}/close`, {
      shopDomain: line.supplier.store.shopDomain,
    });
    const source = line.supplier;
    expect(
      (await webhook(source.store.shopDomain, source.sourceSecret, 'returns/close', closed.body.webhook)).status,
    ).toBe(200);
    await eventually(async () => (await job(api, line.job.id)).returns[0].status === 'closed');
    const due = (await api.get(`/v1/sync_jobs?credit_due=true&reseller_store_id=${reseller.id}`)).body.data;
    expect(due.map((j: any) => j.id)).toEqual([line.job.id]);
    const refunded = await post(`/_sim/orders/${supplierOrder.id}/refunds`, {
      shopDomain: source.store.shopDomain,
      refund: {
        refund_line_items: [{ line_item_id: supplierOrder.line_items[0].id, quantity: 1, restock_type: 'return' }],
      },
    });
    expect(refunded.status).toBe(201);
    const told = await webhook(source.store.shopDomain, source.sourceSecret, 'refunds/create', refunded.body.webhook);
    expect(told.status).toBe(200);
    const settled = await eventually(async () => {
      const now = await job(api, line.job.id);
      return now.sourceRefunds.length === 1 && now;
    });
    expect(settled.credit.refunded).toBe(settled.credit.expected);
    expect(settled.sourceRefunds[0]).toMatchObject({ returnId: settled.returns[0].id, currency: 'USD' });
    const after = (await api.get(`/v1/sync_jobs?credit_due=true&reseller_store_id=${reseller.id}`)).body.data;
    expect(after).toEqual([]);
    // No personal data of the return payload anywhere in the job.
    expect(JSON.stringify(settled)).not.toMatch(/Lovelace|shopper@example/);
    const audit = (await api.get(`/v1/audit_log?resource_id=${line.job.id}`)).body.data;
    expect(audit.map((e: any) => e.action)).toContain('sync_job.return_opened');
  });

  /** A return of the job's first line, approved by the reseller: its payload, with a customer never kept. */
  const approvedReturn = (orderId: number, quantity = 1) => ({
    id: 555_000 + refundSequence++,
    status: 'open',
    order: { id: orderId },
    customer: { id: 42, email: 'returner@example.com', first_name: 'Grace', last_name: 'Hopper' },
    return_line_items: [
      { id: 1, fulfillment_line_item: { id: 99, line_item: { id: 1 } }, quantity, return_reason: 'DEFECTIVE' },
    ],
  });

  it('keeps what shipped while a refund raced the shipment, and says so', async () => {
    const { api, reseller, resellerSecret, payload, byLine } = await placeOrder([{ quantity: 2 }]);
    const [line] = byLine;
    // The supplier ships both units; its webhook has not reached the service yet.
    const [order] = await sim().orders(line.supplier.store.shopDomain);
    const shipped = await post(`/_sim/orders/${order.id}/fulfillments`, {
      shopDomain: line.supplier.store.shopDomain,
      fulfillment: { line_items: [{ id: order.line_items[0].id, quantity: 2 }] },
    });
    expect(shipped.status).toBe(201);
    const refund = refundPayload(++refundSequence, payload.id, [[1, 1, 'cancel']]);
    expect((await webhook(reseller.shopDomain, resellerSecret, 'refunds/create', refund)).status).toBe(200);
    const flagged = await eventually(async () => {
      const now = await job(api, line.job.id);
      return now.attention?.reason === 'refunded_units_shipped' && now;
    });
    expect(flagged.lineItems[0]).toMatchObject({ refundedQuantity: 1, removedQuantity: 0 });
    const [after] = await sim().orders(line.supplier.store.shopDomain);
    expect(after.line_items[0]).toMatchObject({ quantity: 2, current_quantity: 2 });
  });

  it('sends nothing for a refund of an unrouted or gift-card line', async () => {
    const api = service.api('owner_a');
    const { resellerSecret, reseller, vendorTag, source: store } = await storePair(api);
    const payload = orderPayload([
      { vendor: vendorTag, price: '13.00' },
      { vendor: 'Nobody', price: '5.00' },
      { vendor: vendorTag, price: '25.00' },
    ]);
    (payload.line_items[2] as Record<string, unknown>).gift_card = true;
    const receipt = await webhook(reseller.shopDomain, resellerSecret, 'orders/create', payload);
    const jobId = receipt.body.syncJobIds[0];
    await jobReaches(api, jobId, 'completed');
    const refund = refundPayload(++refundSequence, payload.id, [
      [2, 1, 'cancel'],
      [3, 1, 'cancel'],
    ]);
    expect((await webhook(reseller.shopDomain, resellerSecret, 'refunds/create', refund)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await editCalls(store.shopDomain)).toHaveLength(0);
    const now = await job(api, jobId);
    expect(now.lineItems.map((l: any) => l.refundedQuantity)).toEqual([0]);
    expect(now.status).toBe('completed');
    const order = (await api.get(`/v1/reseller_stores/${reseller.id}/orders/${payload.id}`)).body;
    expect(order.refunds).toHaveLength(1);
  });

  it('finds a refund by the poll once its webhook is lost, and edits once when both come', async () => {
    const { api, reseller, resellerSecret, payload, byLine } = await placeOrder([{ quantity: 3 }]);
    const [line] = byLine;
    // The reseller's shop holds the order and refunds a unit of it; no webhook is sent.
    await sim().placeOrder(reseller.shopDomain, { ...payload, created_at: new Date().toISOString() });
    const made = await post(`/_sim/orders/${payload.id}/refunds`, {
      shopDomain: reseller.shopDomain,
      refund: { refund_line_items: [{ line_item_id: 1, quantity: 1, restock_type: 'cancel' }] },
    });
    expect(made.status).toBe(201);
    await pollStores(service.runtime, { kind: 'reseller', id: reseller.id });
    const edited = await eventually(async () => {
      const now = await job(api, line.job.id);
      return now.lineItems[0].removedQuantity === 1 && now;
    });
    expect(edited.lineItems[0]).toMatchObject({ refundedQuantity: 1, removedQuantity: 1 });
    // The webhook comes after all, and the poll runs again: nothing more.
    expect((await webhook(reseller.shopDomain, resellerSecret, 'refunds/create', made.body.webhook)).status).toBe(200);
    await pollStores(service.runtime, { kind: 'reseller', id: reseller.id });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await editCalls(line.supplier.store.shopDomain)).toHaveLength(1);
    expect((await job(api, line.job.id)).lineItems[0]).toMatchObject({ refundedQuantity: 1, removedQuantity: 1 });
  });

  it('cancels the supplier’s return when the reseller cancels it, and flags one the supplier cancels', async () => {
    const { api, reseller, resellerSecret, payload, byLine } = await placeOrder([{ quantity: 2 }]);
    const [line] = byLine;
    await ship(line, 2);
    await eventually(async () => (await job(api, line.job.id)).lineItems[0].fulfilledQuantity === 2);
    const first = approvedReturn(payload.id);
    expect((await webhook(reseller.shopDomain, resellerSecret, 'returns/approve', first)).status).toBe(200);
    await eventually(async () => (await job(api, line.job.id)).returns?.[0]?.status === 'open');
    const cancel = { id: first.id, order_id: payload.id, status: 'canceled' };
    expect((await webhook(reseller.shopDomain, resellerSecret, 'returns/cancel', cancel)).status).toBe(200);
    const cancelled = await eventually(async () => {
      const now = await job(api, line.job.id);
      return now.returns[0].status === 'cancelled' && now;
    });
    expect(cancelled.lineItems[0].returnedQuantity).toBe(0);
    const [onSupplier] = await sim().orders(line.supplier.store.shopDomain);
    expect(onSupplier.returns[0].status).toBe('canceled');
    // A second return, which the supplier cancels itself.
    const second = approvedReturn(payload.id);
    expect((await webhook(reseller.shopDomain, resellerSecret, 'returns/approve', second)).status).toBe(200);
    const opened = await eventually(async () => {
      const now = await job(api, line.job.id);
      return now.returns[1]?.status === 'open' && now;
    });
    const theirs = await post(`/_sim/returns/${opened.returns[1].sourceReturnId.replace(/\D/g, '')}/cancel`, {
      shopDomain: line.supplier.store.shopDomain,
    });
    const source = line.supplier;
    const told = await webhook(source.store.shopDomain, source.sourceSecret, 'returns/cancel', theirs.body.webhook);
    expect(told.status).toBe(200);
    const flagged = await eventually(async () => {
      const now = await job(api, line.job.id);
      return now.returns[1].status === 'cancelled' && now.attention?.reason === 'return_cancelled_by_source' && now;
    });
    expect(flagged.returns.map((r: any) => r.status)).toEqual(['cancelled', 'cancelled']);
  });

  it('opens one return on the supplier when the answer to its create is lost', async () => {
    const { api, reseller, resellerSecret, payload, byLine } = await placeOrder([{ quantity: 1 }]);
    const [line] = byLine;
    await ship(line, 1);
    await eventually(async () => (await job(api, line.job.id)).lineItems[0].fulfilledQuantity === 1);
    await replaceAccessToken(service, { kind: 'source', id: line.supplier.store.id }, 'tok_lost');
    expect(
      (await webhook(reseller.shopDomain, resellerSecret, 'returns/approve', approvedReturn(payload.id))).status,
    ).toBe(200);
    await eventually(async () => {
      const [order] = await sim().orders(line.supplier.store.shopDomain);
      return order.returns?.length === 1;
    });
    await replaceAccessToken(service, { kind: 'source', id: line.supplier.store.id }, 'tok_healthy');
    const opened = await eventually(async () => {
      const now = await job(api, line.job.id);
      return now.returns?.[0]?.status === 'open' && now;
    }, 90_000);
    const [order] = await sim().orders(line.supplier.store.shopDomain);
    expect(order.returns).toHaveLength(1);
    expect(opened.returns[0].sourceReturnId).toBe(String(order.returns[0].id));
    // No personal data of the return payloads anywhere in the log.
    expect(JSON.stringify(log.lines())).not.toMatch(/Hopper|returner@example|Lovelace|shopper@example/);
  });

  it('opens one return on a Shopify supplier when a second message of it meets the first one’s create', async () => {
    // Shopify takes no idempotency key: a return's create is claimed by one message (its sentAt, sentBy).
    const { api, reseller, resellerSecret, payload, byLine } = await placeOrder([{ quantity: 1 }], {
      platform: 'storeplatform_b',
    });
    const [line] = byLine;
    await ship(line, 1);
    await eventually(async () => (await job(api, line.job.id)).lineItems[0].fulfilledQuantity === 1);
    // The first message's claim is caught on its way to the table.
    const claim = { afterSale: { rt: { 0: { st: 'pending', sb: /./ } } } };
    const isClaim = (call: SdkCall) =>
      call.functionName === 'SyncWorker' &&
      call.command === 'UpdateItem' &&
      call.input.Key?.PK === `SJ#${line.job.id}` &&
      writesAll(claim, call.input);
    const gate = service.runtime.faults.inject({
      function: 'SyncWorker',
      service: 'DynamoDB',
      command: 'UpdateItem',
      match: { Key: { PK: `SJ#${line.job.id}` } },
      writes: claim,
      action: 'hold',
      times: 1,
    });
    const approved = approvedReturn(payload.id);
    expect((await webhook(reseller.shopDomain, resellerSecret, 'returns/approve', approved)).status).toBe(200);
    await gate.reached;
    // The webhook again (a redelivery; a poll does the same): its message claims the return and opens it.
    expect((await webhook(reseller.shopDomain, resellerSecret, 'returns/approve', approved)).status).toBe(200);
    await eventually(async () => (await job(api, line.job.id)).returns?.[0]?.status === 'open');
    // The first claim goes on: it meets the return claimed and opened, and leaves it.
    gate.release();
    await eventually(async () => sdkCalls.some((call) => isClaim(call) && call.error));
    await new Promise((settle) => setTimeout(settle, 2_000));
    expect(sdkCalls.filter((call) => isClaim(call) && !call.error)).toHaveLength(1);
    const [order] = await sim().orders(line.supplier.store.shopDomain);
    expect(order.returns).toHaveLength(1);
    expect((await job(api, line.job.id)).returns).toEqual([
      expect.objectContaining({ status: 'open', sourceReturnId: `gid://shopify/Return/${order.returns[0].id}` }),
    ]);
  });
});
