import type { SdkCall } from '../../lib/local/protocol.js';
import { type ApiClient, jobStatusWrite, replaceAccessToken, serviceForSuite, storePair } from './support.js';
import { eventually, jobReaches, orderPayload, sendOrder, sendWebhook } from './webhooks.js';

/**
 * Cancellations, both ways (CONTRACT.md §10.4–10.5), through the local runtime: a cancelled order is
 * never shipped by a supplier the service placed it on, and a supplier's own cancellation shows on
 * its job. What the supplier holds is read on the simulator: its orders and their `cancelled_at`.
 */

jest.setTimeout(90_000);

describe('cancellations through the local runtime', () => {
  const sdkCalls: SdkCall[] = [];
  const { service, sim } = serviceForSuite({ onSdkCall: (call) => sdkCalls.push(call) });
  afterEach(() => service.runtime.faults.clear());

  /** A reseller store with one supplier, and an order of it routed there. */
  const placeOrder = async (source: Record<string, unknown> = {}) => {
    const api = service.api('owner_a');
    const { resellerSecret, reseller, sourceSecret, vendorTag, source: store } = await storePair(api, source);
    const payload = orderPayload([{ vendor: vendorTag, price: '13.00', quantity: 2 }]);
    const receipt = await sendOrder(service.runtime.apiUrl, reseller.shopDomain, resellerSecret, payload);
    expect(receipt.status).toBe(200);
    return { api, reseller, resellerSecret, store, sourceSecret, payload, jobId: receipt.body.syncJobIds[0] as string };
  };

  const cancel = (shopDomain: string, secret: string, id: string | number, reason = 'customer') =>
    sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain,
      secret,
      body: { id, cancel_reason: reason, cancelled_at: new Date().toISOString() },
      topic: 'orders/cancelled',
    });

  const job = async (api: ApiClient, id: string) => (await api.get(`/v1/sync_jobs/${id}`)).body;
  const supplierOrders = (shopDomain: string) => sim().orders(shopDomain);
  const cancelCalls = async (shopDomain: string) =>
    (await sim().calls()).filter((c) => c.shopDomain === shopDomain && c.path.endsWith('/cancel.json')).length;

  it('cancels a completed job’s supplier order, once, however often and however fast it is asked', async () => {
    const { api, reseller, resellerSecret, store, payload, jobId } = await placeOrder();
    const completed = await jobReaches(api, jobId, 'completed');

    const receipts = await Promise.all([
      cancel(reseller.shopDomain, resellerSecret, payload.id),
      cancel(reseller.shopDomain, resellerSecret, payload.id),
    ]);
    expect(receipts.map((r) => r.status)).toEqual([200, 200]);
    expect(receipts[0].body).toEqual({
      object: 'webhook_receipt',
      request_id: expect.any(String),
      syncJobIds: [jobId],
    });
    const cancelled = await jobReaches(api, jobId, 'cancelled');
    expect(cancelled).toMatchObject({
      cancelledAt: expect.any(String),
      cancellation: { requestedBy: 'reseller', status: 'done', reason: 'customer', endedAt: expect.any(String) },
    });
    const [order] = await supplierOrders(store.shopDomain);
    expect(String(order.id)).toBe(completed.sourceOrderId);
    expect(order.cancelled_at).toEqual(expect.any(String));
    // Once more, later: nothing changes.
    expect((await cancel(reseller.shopDomain, resellerSecret, payload.id)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await cancelCalls(store.shopDomain)).toBe(1);
    const audit = (await api.get(`/v1/audit_log?resource_id=${jobId}`)).body.data;
    expect(audit.map((e: any) => e.action)).toEqual(['sync_job.cancelled']);
    expect(audit[0].metadata).toMatchObject({ previousStatus: 'completed', requestedBy: 'reseller' });
    // Cancelled is final: a retry is refused, and the list filters by it.
    const retry = await api.post(`/v1/sync_jobs/${jobId}/retry`, {});
    expect(retry.status).toBe(400);
    expect(retry.body.error.code).toBe('sync_job_not_retryable');
    const listed = (await api.get(`/v1/sync_jobs?status=cancelled&reseller_store_id=${reseller.id}`)).body.data;
    expect(listed.map((j: any) => j.id)).toEqual([jobId]);
  });

  it('calls the supplier once when a second cancellation’s message meets the first one’s call in flight', async () => {
    const { api, reseller, resellerSecret, store, payload, jobId } = await placeOrder();
    await jobReaches(api, jobId, 'completed');
    // The first message's worker has called the supplier and is caught before it records the end.
    const gate = service.runtime.faults.inject({ ...jobStatusWrite('cancelled', jobId), action: 'hold' });
    expect((await cancel(reseller.shopDomain, resellerSecret, payload.id)).status).toBe(200);
    await gate.reached;
    expect(await cancelCalls(store.shopDomain)).toBe(1);
    // The webhook again (a redelivery, the shop's retry): the cancellation is still `requested`, so its
    // message goes out again, in case the first one's send failed. Its worker finds the call claimed.
    expect((await cancel(reseller.shopDomain, resellerSecret, payload.id)).status).toBe(200);
    const claimOf = (call: SdkCall) =>
      call.functionName === 'SyncWorker' &&
      call.command === 'UpdateItem' &&
      call.input.Key?.PK === `SJ#${jobId}` &&
      String(call.input.ConditionExpression).includes('attribute_not_exists(#cc)');
    await eventually(async () => sdkCalls.some((call) => claimOf(call) && call.error));
    expect(await cancelCalls(store.shopDomain)).toBe(1);

    gate.release();
    expect(await jobReaches(api, jobId, 'cancelled')).toMatchObject({ cancellation: { status: 'done' } });
    expect(await cancelCalls(store.shopDomain)).toBe(1);
    expect(sdkCalls.filter((call) => claimOf(call) && !call.error)).toHaveLength(1);
  });

  it('cancels the supplier order once when the worker dies between its cancel call and its record', async () => {
    const { api, reseller, resellerSecret, store, payload, jobId } = await placeOrder();
    await jobReaches(api, jobId, 'completed');
    // The worker audits the cancellation, then dies on the update that records it.
    const crash = service.runtime.faults.inject({ ...jobStatusWrite('cancelled'), action: 'crash' });
    await cancel(reseller.shopDomain, resellerSecret, payload.id);
    await jobReaches(api, jobId, 'cancelled', 30_000);
    expect(crash.hits).toHaveLength(1);
    const calls = (await sim().calls()).filter(
      (c) => c.shopDomain === store.shopDomain && c.path.endsWith('/cancel.json'),
    );
    // Called again after the crash, under the same key: the supplier cancelled its order once.
    expect(calls.map((c) => c.idempotencyKey)).toEqual([`cancel:${jobId}`, `cancel:${jobId}`]);
    const [order] = await supplierOrders(store.shopDomain);
    expect(order.cancelled_at).toEqual(expect.any(String));
    // The entry written before the crash is the only one: the retry found it and wrote none.
    const audit = (await api.get(`/v1/audit_log?resource_id=${jobId}`)).body.data;
    expect(audit.map((e: any) => e.action)).toEqual(['sync_job.cancelled']);
  });

  it('never places a pending job held behind a throttling supplier, nor a dead one', async () => {
    const throttled = await placeOrder({ accessToken: 'tok_fail429' });
    await eventually(async () => (await job(throttled.api, throttled.jobId)).attempts >= 1);
    const dead = await placeOrder({ accessToken: 'tok_fail401' });
    await jobReaches(dead.api, dead.jobId, 'dead');

    await cancel(throttled.reseller.shopDomain, throttled.resellerSecret, throttled.payload.id);
    await cancel(dead.reseller.shopDomain, dead.resellerSecret, dead.payload.id);
    for (const { api, jobId } of [throttled, dead]) {
      expect(await jobReaches(api, jobId, 'cancelled')).toMatchObject({ cancellation: { status: 'done' } });
    }
    // The supplier recovers: still nothing is placed for the cancelled job.
    await replaceAccessToken(service, { kind: 'source', id: throttled.store.id }, 'tok_recovered');
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(await supplierOrders(throttled.store.shopDomain)).toEqual([]);
    expect((await job(throttled.api, throttled.jobId)).status).toBe('cancelled');
  });

  it('ends a job whose attempt is under way cancelled, and cancels the order that attempt placed', async () => {
    // Hold the completion: the supplier has the order, the job is still `processing`.
    const gate = service.runtime.faults.inject({ ...jobStatusWrite('completed'), action: 'hold' });
    const { api, reseller, resellerSecret, store, payload, jobId } = await placeOrder();
    await eventually(async () => gate.hits.some((input: any) => input.Key.PK === `SJ#${jobId}`));
    expect((await cancel(reseller.shopDomain, resellerSecret, payload.id)).status).toBe(200);
    expect(await job(api, jobId)).toMatchObject({ status: 'processing', cancellation: { status: 'requested' } });

    gate.release();
    const cancelled = await jobReaches(api, jobId, 'cancelled');
    expect(cancelled.cancellation).toMatchObject({ requestedBy: 'reseller', status: 'done' });
    const orders = await supplierOrders(store.shopDomain);
    expect(orders).toHaveLength(1);
    expect(orders[0].cancelled_at).toEqual(expect.any(String));
  });

  it('leaves a shipped order completed, its cancellation declined with the supplier’s reason', async () => {
    const { api, reseller, resellerSecret, store, payload, jobId } = await placeOrder();
    const completed = await jobReaches(api, jobId, 'completed');
    const shipped = await fetch(
      `${service.runtime.simulator!.url}/_sim/orders/${completed.sourceOrderId}/fulfillments`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ shopDomain: store.shopDomain, fulfillment: { tracking_number: '1ZSHIPPED' } }),
      },
    );
    expect(shipped.status).toBeLessThan(300);

    await cancel(reseller.shopDomain, resellerSecret, payload.id);
    const declined = await eventually(async () => {
      const current = await job(api, jobId);
      return current.cancellation?.status === 'declined' && current;
    });
    expect(declined.status).toBe('completed');
    expect(declined.cancellation.reason).toMatch(/422/);
    expect((await supplierOrders(store.shopDomain))[0].cancelled_at).toBeNull();
    const audit = (await api.get(`/v1/audit_log?resource_id=${jobId}`)).body.data;
    expect(audit.map((e: any) => e.action)).toEqual(['sync_job.cancellation_declined']);
  });

  it('flags a job for a person when its supplier order cannot be cancelled, never silently', async () => {
    const { api, reseller, resellerSecret, store, payload, jobId } = await placeOrder();
    await jobReaches(api, jobId, 'completed');
    // The supplier goes down after the order was placed: every cancel call answers 500.
    await replaceAccessToken(service, { kind: 'source', id: store.id }, 'tok_fail500');
    await cancel(reseller.shopDomain, resellerSecret, payload.id);
    const flagged = await eventually(async () => {
      const current = await job(api, jobId);
      return current.attention && current;
    }, 60_000);
    expect(flagged).toMatchObject({
      status: 'completed',
      cancellation: { status: 'requested' },
      attention: { reason: expect.stringContaining('could not be cancelled'), since: expect.any(String) },
    });
    const audit = (await api.get(`/v1/audit_log?resource_id=${jobId}`)).body.data;
    expect(audit.map((e: any) => e.action)).toEqual(['sync_job.attention_required']);
  });

  it('shows a supplier’s own cancellation on its job, and leaves the reseller’s order alone', async () => {
    const { api, store, sourceSecret, jobId } = await placeOrder();
    const completed = await jobReaches(api, jobId, 'completed');
    const receipt = await cancel(store.shopDomain, sourceSecret, completed.sourceOrderId, 'inventory');
    expect(receipt.status).toBe(200);
    expect(receipt.body.syncJobIds).toEqual([jobId]);
    const cancelled = await jobReaches(api, jobId, 'cancelled');
    expect(cancelled.cancellation).toMatchObject({ requestedBy: 'source', status: 'done', reason: 'inventory' });
    // The supplier's order was cancelled by the supplier: the service called nothing.
    expect(await cancelCalls(store.shopDomain)).toBe(0);
  });

  it('takes the supplier’s echo of the reseller’s cancellation as the reseller’s, not a supplier’s own', async () => {
    const { api, reseller, resellerSecret, store, sourceSecret, payload, jobId } = await placeOrder();
    const completed = await jobReaches(api, jobId, 'completed');
    // The worker cancels the supplier order, then is held on the update that records it.
    const hold = service.runtime.faults.inject({ ...jobStatusWrite('cancelled'), action: 'hold' });
    await cancel(reseller.shopDomain, resellerSecret, payload.id, 'customer');
    await hold.reached;
    // Meanwhile the supplier tells of its cancelled order, as it does of any (its webhook, or a poll).
    const echo = await cancel(store.shopDomain, sourceSecret, completed.sourceOrderId, 'other');
    expect(echo.status).toBe(200);
    hold.release();
    const cancelled = await jobReaches(api, jobId, 'cancelled');
    expect(cancelled.cancellation).toMatchObject({ requestedBy: 'reseller', status: 'done', reason: 'customer' });
    const audit = (await api.get(`/v1/audit_log?resource_id=${jobId}`)).body.data;
    expect(audit.map((e: any) => [e.action, e.metadata.requestedBy])).toEqual([['sync_job.cancelled', 'reseller']]);
  });

  it('writes an order cancelled before it arrived cancelled from the start, and places nothing', async () => {
    const api = service.api('owner_a');
    const { resellerSecret, reseller, vendorTag, source: store } = await storePair(api);
    const payload = orderPayload([{ vendor: vendorTag, price: '13.00' }]);

    const early = await cancel(reseller.shopDomain, resellerSecret, payload.id, 'fraud');
    expect(early.status).toBe(200);
    expect(early.body.syncJobIds).toEqual([]);
    const receipt = await sendOrder(service.runtime.apiUrl, reseller.shopDomain, resellerSecret, payload);
    expect(receipt.status).toBe(200);
    const [jobId] = receipt.body.syncJobIds;
    expect(await job(api, jobId)).toMatchObject({
      status: 'cancelled',
      attempts: 0,
      cancellation: { requestedBy: 'reseller', status: 'done', reason: 'fraud' },
    });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await supplierOrders(store.shopDomain)).toEqual([]);
    // The same order again (a redelivery): the same job, still cancelled.
    const again = await sendOrder(service.runtime.apiUrl, reseller.shopDomain, resellerSecret, payload);
    expect(again.body.syncJobIds).toEqual([jobId]);
    expect((await job(api, jobId)).status).toBe('cancelled');
    expect((await cancel(reseller.shopDomain, 'whsec_wrong', payload.id)).status).toBe(401);
  });

  describe('edits by the reseller (orders/updated)', () => {
    const update = (shopDomain: string, secret: string, order: unknown) =>
      sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
        shopDomain,
        secret,
        body: order,
        topic: 'orders/updated',
      });
    const at = (minute: number) => `2026-11-25T12:${String(minute).padStart(2, '0')}:00Z`;
    const moved = { name: 'A B', address1: '9 New Road', city: 'Y', zip: '2', country_code: 'US' };

    it('places the latest address on a supplier that had not placed the order yet', async () => {
      const { api, reseller, resellerSecret, store, payload, jobId } = await placeOrder({ accessToken: 'tok_fail429' });
      await eventually(async () => (await job(api, jobId)).attempts >= 1);
      const receipt = await update(reseller.shopDomain, resellerSecret, {
        ...payload,
        shipping_address: moved,
        updated_at: at(1),
      });
      expect(receipt.status).toBe(200);
      expect(receipt.body.syncJobIds).toEqual([jobId]);
      await replaceAccessToken(service, { kind: 'source', id: store.id }, 'tok_recovered');
      await jobReaches(api, jobId, 'completed', 30_000);
      const [order] = await supplierOrders(store.shopDomain);
      expect(order.shipping_address).toMatchObject({ address1: '9 New Road', city: 'Y' });
    });

    it('updates a placed, unshipped supplier order once per version, and ignores an older one', async () => {
      const { api, reseller, resellerSecret, store, payload, jobId } = await placeOrder();
      await jobReaches(api, jobId, 'completed');
      await update(reseller.shopDomain, resellerSecret, { ...payload, email: 'new@example.com', updated_at: at(5) });
      await eventually(async () => (await supplierOrders(store.shopDomain))[0].email === 'new@example.com');
      // An older version arrives late: nothing changes.
      await update(reseller.shopDomain, resellerSecret, { ...payload, email: 'old@example.com', updated_at: at(2) });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect((await supplierOrders(store.shopDomain))[0].email).toBe('new@example.com');
      const puts = (await sim().calls()).filter((c) => c.shopDomain === store.shopDomain && c.method === 'PUT');
      expect(puts).toHaveLength(1);
      expect((await job(api, jobId)).attention).toBeNull();
    });

    it('never applies changed line items on its own: the job needs a person, audited', async () => {
      const { api, reseller, resellerSecret, store, payload, jobId } = await placeOrder();
      await jobReaches(api, jobId, 'completed');
      const fewer = { ...payload, line_items: [{ ...payload.line_items[0], quantity: 1 }], updated_at: at(7) };
      await update(reseller.shopDomain, resellerSecret, fewer);
      const flagged = await eventually(async () => {
        const current = await job(api, jobId);
        return current.attention && current;
      });
      expect(flagged.attention.reason).toMatch(/line items changed/);
      expect((await supplierOrders(store.shopDomain))[0].line_items[0].quantity).toBe(2);
      const audit = (await api.get(`/v1/audit_log?resource_id=${jobId}`)).body.data;
      expect(audit.map((e: any) => e.action)).toEqual(['sync_job.attention_required']);
    });
  });
});
