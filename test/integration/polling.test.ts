import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SdkCall } from '../../lib/local/protocol.js';
import {
  createResellerStore,
  createSourceStore,
  pollStores,
  serviceForSuite,
  storePair,
  type TestService,
  unique,
} from './support.js';
import { eventually, jobReaches, orderPayload, sendWebhook } from './webhooks.js';

/**
 * Polling behind the webhooks (CONTRACT.md §10.7), through the local runtime against the simulator:
 * orders and shipments no webhook told of are found by a poll and take their webhook's path, once,
 * whichever of a webhook and a poll comes first. Polls are triggered by invoking the poller with its
 * queue's message, as the scheduler's would be, rather than waiting for the timer.
 */

jest.setTimeout(120_000);

/** A shop's Retry-After in the throttling test: no poll comes that late, however loaded the machine. */
const RETRY_AFTER_SECONDS = 600;

describe('polling through the local runtime', () => {
  const sdkCalls: SdkCall[] = [];

  const { service, sim } = serviceForSuite({ onSdkCall: (call) => sdkCalls.push(call) });

  /** Polls these stores now: one invocation of the poller with their messages, as SQS would deliver them. */
  const poll = (...stores: { kind: 'reseller' | 'source'; id: string }[]) => pollStores(service.runtime, ...stores);

  const outage = (shopDomain: string, status: number | null, retryAfter?: number) =>
    fetch(`${service.runtime.simulator!.url}/_sim/outages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ shopDomain, status, retryAfter }),
    });

  /** A reseller store with one supplier; its orders' lines name `vendorTag`. */
  const stores = async () => {
    const api = service.api('owner_a');
    const { resellerSecret, reseller, sourceSecret, vendorTag, source } = await storePair(api);
    return {
      api,
      reseller: { ...reseller, kind: 'reseller' as const, secret: resellerSecret },
      source: { ...source, kind: 'source' as const, secret: sourceSecret },
      vendorTag,
    };
  };

  const jobsOf = async (api: ReturnType<TestService['api']>, resellerStoreId: string) =>
    (await api.get(`/v1/sync_jobs?reseller_store_id=${resellerStoreId}`)).body.data as any[];
  const storeItem = async (kind: 'reseller' | 'source', id: string) => {
    const prefix = kind === 'reseller' ? 'RST' : 'SST';
    const out = await service.doc.send(
      new GetCommand({
        TableName: service.tableName,
        Key: { PK: `${prefix}#${id}`, SK: prefix },
        ConsistentRead: true,
      }),
    );
    return out.Item as Record<string, any>;
  };
  const callsTo = async (shopDomain: string) => (await sim().calls()).filter((c) => c.shopDomain === shopDomain);
  const webhook = (shopDomain: string, secret: string, body: unknown) =>
    sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', { shopDomain, secret, body });

  it('routes an order no webhook told of, once; its webhook arriving late doubles nothing', async () => {
    const { api, reseller, source, vendorTag } = await stores();
    const order = orderPayload([{ vendor: vendorTag, price: '13.00', quantity: 2 }]);
    await sim().placeOrder(reseller.shopDomain, order);

    expect((await poll(reseller)).batchItemFailures).toEqual([]);
    const [job] = await jobsOf(api, reseller.id);
    expect(job).toMatchObject({ externalOrderId: String(order.id) });
    await jobReaches(api, job.id, 'completed');
    const attempts = (await api.get(`/v1/sync_jobs/${job.id}/attempts`)).body.data;
    expect(attempts.map((a: any) => a.trigger)).toEqual(['poll']);
    const orderPath = `/v1/reseller_stores/${reseller.id}/orders/${order.id}`;
    expect((await api.get(orderPath)).body).toMatchObject({ receivedVia: 'poll', syncJobIds: [job.id] });

    const late = await webhook(reseller.shopDomain, reseller.secret, order);
    expect(late.status).toBe(200);
    expect(late.body.syncJobIds).toEqual([job.id]);
    await poll(reseller);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await jobsOf(api, reseller.id)).toHaveLength(1);
    expect(await sim().orders(source.shopDomain)).toHaveLength(1);
    // The first arrival is the order's: the late webhook changed nothing.
    expect((await api.get(orderPath)).body.receivedVia).toBe('poll');
  });

  it('places an order once when its webhook and a poll race', async () => {
    const { api, reseller, source, vendorTag } = await stores();
    const order = orderPayload([{ vendor: vendorTag, price: '9.00' }]);
    await sim().placeOrder(reseller.shopDomain, order);
    const [receipt] = await Promise.all([webhook(reseller.shopDomain, reseller.secret, order), poll(reseller)]);
    expect(receipt.status).toBe(200);
    const jobs = await jobsOf(api, reseller.id);
    expect(jobs.map((j) => j.id)).toEqual(receipt.body.syncJobIds);
    await jobReaches(api, jobs[0].id, 'completed');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await sim().orders(source.shopDomain)).toHaveLength(1);
  });

  it('carries a shipment and a supplier’s cancellation that no webhook told of', async () => {
    const { api, reseller, source, vendorTag } = await stores();
    const shipped = orderPayload([{ vendor: vendorTag, price: '13.00', quantity: 2 }]);
    const cancelled = orderPayload([{ vendor: vendorTag, price: '7.00' }]);
    for (const order of [shipped, cancelled]) await sim().placeOrder(reseller.shopDomain, order);
    await poll(reseller);
    const jobs = await jobsOf(api, reseller.id);
    const jobOf = (order: { id: number }) => jobs.find((j) => j.externalOrderId === String(order.id)).id as string;
    const [shippedJob, cancelledJob] = await Promise.all([
      jobReaches(api, jobOf(shipped), 'completed'),
      jobReaches(api, jobOf(cancelled), 'completed'),
    ]);

    await fetch(`${service.runtime.simulator!.url}/_sim/orders/${shippedJob.sourceOrderId}/fulfillments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        shopDomain: source.shopDomain,
        fulfillment: { tracking_company: 'UPS', tracking_number: '1Z999', tracking_url: 'https://ups.example/1Z999' },
      }),
    });
    await fetch(`${service.runtime.simulator!.url}/_sim/orders/${cancelledJob.sourceOrderId}/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ shopDomain: source.shopDomain, reason: 'inventory' }),
    });
    expect((await poll(source)).batchItemFailures).toEqual([]);

    const resellerOrder = await eventually(async () => {
      const found = (await sim().orders(reseller.shopDomain)).find((o) => o.id === shipped.id);
      return found?.fulfillments?.length && found;
    });
    expect(resellerOrder.fulfillments).toHaveLength(1);
    expect(resellerOrder.fulfillments[0]).toMatchObject({ tracking_number: '1Z999' });
    const gone = await jobReaches(api, cancelledJob.id, 'cancelled');
    expect(gone.cancellation).toMatchObject({ requestedBy: 'source', reason: 'inventory' });

    // Seen again (a later poll, and the webhooks arriving after all): still one parcel.
    await poll(source);
    await new Promise((r) => setTimeout(r, 1500));
    const again = (await sim().orders(reseller.shopDomain)).find((o) => o.id === shipped.id);
    expect(again.fulfillments).toHaveLength(1);
  });

  it('carries the reseller’s cancellations no webhook told of: before its order was routed, and after', async () => {
    const { api, reseller, source, vendorTag } = await stores();
    const simCancel = (id: number) =>
      fetch(`${service.runtime.simulator!.url}/_sim/orders/${id}/cancel`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ shopDomain: reseller.shopDomain, reason: 'customer' }),
      });
    // Placed and cancelled on the reseller's shop before any poll: its jobs are cancelled from the start.
    const early = orderPayload([{ vendor: vendorTag, price: '8.00' }]);
    await sim().placeOrder(reseller.shopDomain, early);
    expect((await simCancel(early.id)).status).toBeLessThan(300);
    // Routed by its webhook and placed, then cancelled on the shop with no webhook.
    const late = orderPayload([{ vendor: vendorTag, price: '6.00' }]);
    await sim().placeOrder(reseller.shopDomain, late);
    const [lateJob] = (await webhook(reseller.shopDomain, reseller.secret, late)).body.syncJobIds;
    await jobReaches(api, lateJob, 'completed');
    expect((await simCancel(late.id)).status).toBeLessThan(300);

    expect((await poll(reseller)).batchItemFailures).toEqual([]);
    const jobs = await jobsOf(api, reseller.id);
    const earlyJob = jobs.find((j) => j.externalOrderId === String(early.id));
    expect(earlyJob).toMatchObject({ status: 'cancelled', cancellation: { requestedBy: 'reseller' } });
    const cancelled = await jobReaches(api, lateJob, 'cancelled');
    expect(cancelled.cancellation).toMatchObject({ requestedBy: 'reseller', status: 'done' });
    // The supplier had only the late order, and it is cancelled once; the early one was never placed.
    const supplierOrders = await sim().orders(source.shopDomain);
    expect(supplierOrders).toHaveLength(1);
    expect(supplierOrders[0].cancelled_at).toEqual(expect.any(String));
    await poll(reseller);
    await new Promise((r) => setTimeout(r, 1000));
    const cancels = (await callsTo(source.shopDomain)).filter((c) => c.path.endsWith('/cancel.json'));
    expect(cancels).toHaveLength(1);
  });

  it('polls Shopify shops (storeplatform_b) as their webhooks would: once, shipped, never a false edit', async () => {
    const api = service.api('owner_a');
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api, { platform: 'storeplatform_b', webhookSecret: resellerSecret });
    const vendorTag = unique('Vendor');
    const source = await createSourceStore(api, reseller.id, { platform: 'storeplatform_b', vendorTag });
    const resellerRef = { kind: 'reseller' as const, id: reseller.id };
    const sourceRef = { kind: 'source' as const, id: source.id };
    const told = orderPayload([
      { vendor: vendorTag, price: '13.00', quantity: 2 },
      { vendor: vendorTag, price: '4.00' },
    ]);
    const untold = orderPayload([{ vendor: vendorTag, price: '9.00' }]);
    for (const order of [told, untold]) await sim().placeOrder(reseller.shopDomain, order);
    expect((await webhook(reseller.shopDomain, resellerSecret, told)).status).toBe(200);
    expect((await poll(resellerRef)).batchItemFailures).toEqual([]);
    const jobs = await jobsOf(api, reseller.id);
    expect(jobs.map((j) => j.externalOrderId).sort()).toEqual([String(told.id), String(untold.id)].sort());
    const placed = await Promise.all(jobs.map((j) => jobReaches(api, j.id, 'completed')));
    expect(await sim().orders(source.shopDomain)).toHaveLength(2);

    // The supplier ships the polled order, with no webhook; a poll of its shop carries the tracking.
    const shipped = placed.find((j) => j.externalOrderId === String(untold.id));
    await fetch(`${service.runtime.simulator!.url}/_sim/orders/${shipped.sourceOrderId}/fulfillments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ shopDomain: source.shopDomain, fulfillment: { tracking_number: 'SHOPIFY-1' } }),
    });
    expect((await poll(sourceRef)).batchItemFailures).toEqual([]);
    const resellerOrder = await eventually(async () => {
      const found = (await sim().orders(reseller.shopDomain)).find((o) => o.id === untold.id);
      return found?.fulfillments?.length && found;
    });
    expect(resellerOrder.fulfillments[0]).toMatchObject({ tracking_number: 'SHOPIFY-1' });

    // The reseller's orders changed (the service's own fulfillment): polled again, they are no edit.
    await poll(resellerRef);
    await poll(resellerRef);
    for (const job of await jobsOf(api, reseller.id))
      expect(job).toMatchObject({ attention: null, status: 'completed' });
    expect(await sim().orders(source.shopDomain)).toHaveLength(2);
  });

  it('routes no order older than its store: history is not polled', async () => {
    const { api, reseller, source, vendorTag } = await stores();
    const old = new Date(Date.parse(reseller.createdAt) - 60_000).toISOString();
    await sim().placeOrder(
      reseller.shopDomain,
      orderPayload([{ vendor: vendorTag, price: '5.00' }], { created_at: old, updated_at: new Date().toISOString() }),
    );
    await poll(reseller);
    expect(await jobsOf(api, reseller.id)).toEqual([]);
    expect(await sim().orders(source.shopDomain)).toEqual([]);
    // Passed for good: the watermark moved past it.
    expect((await storeItem('reseller', reseller.id)).pollWatermark).toEqual(expect.any(String));
  });

  it('polls the other stores when shops answer 429 and 500, and obeys Retry-After', async () => {
    const healthy = await stores();
    const throttled = await stores();
    const broken = await stores();
    for (const s of [healthy, throttled, broken])
      await sim().placeOrder(s.reseller.shopDomain, orderPayload([{ vendor: s.vendorTag, price: '4.00' }]));
    // Retry-After far longer than any machine takes between two polls: the test moves the clock itself (below).
    await outage(throttled.reseller.shopDomain, 429, RETRY_AFTER_SECONDS);
    await outage(broken.reseller.shopDomain, 500);

    const throttledAt = Date.now();
    const result = await poll(throttled.reseller, broken.reseller, healthy.reseller);
    expect(result.batchItemFailures).toEqual([]);
    expect(await jobsOf(healthy.api, healthy.reseller.id)).toHaveLength(1);
    for (const s of [throttled, broken]) {
      expect(await jobsOf(s.api, s.reseller.id)).toEqual([]);
      const item = await storeItem('reseller', s.reseller.id);
      expect(item.pollWatermark).toBeUndefined();
      expect(item.pollFailures).toBe(1);
    }
    // Not before Retry-After from the 429 (which came during the poll), with at most a quarter more
    // and a second of jitter (`deferralSeconds`, shared/platforms/port.ts).
    const notBefore = Date.parse((await storeItem('reseller', throttled.reseller.id)).pollNotBefore);
    expect(notBefore).toBeGreaterThanOrEqual(throttledAt + RETRY_AFTER_SECONDS * 1000 - 1000);
    expect(notBefore).toBeLessThanOrEqual(Date.now() + (RETRY_AFTER_SECONDS * 1.25 + 2) * 1000);

    // Within Retry-After the throttled shop is not called at all; the broken one is asked again.
    const before = (await callsTo(throttled.reseller.shopDomain)).length;
    const brokenBefore = (await callsTo(broken.reseller.shopDomain)).length;
    await poll(throttled.reseller, broken.reseller);
    expect(await callsTo(throttled.reseller.shopDomain)).toHaveLength(before);
    expect(await callsTo(broken.reseller.shopDomain)).toHaveLength(brokenBefore + 1);

    // Healed, and past Retry-After: both orders are found, and the failures are forgotten.
    await outage(throttled.reseller.shopDomain, null);
    await outage(broken.reseller.shopDomain, null);
    // Retry-After has passed: the store's time moved back, as a clock would move forward.
    await service.doc.send(
      new UpdateCommand({
        TableName: service.tableName,
        Key: { PK: `RST#${throttled.reseller.id}`, SK: 'RST' },
        UpdateExpression: 'SET pollNotBefore = :past',
        ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() },
      }),
    );
    await poll(throttled.reseller, broken.reseller);
    for (const s of [throttled, broken]) {
      expect(await jobsOf(s.api, s.reseller.id)).toHaveLength(1);
      const item = await storeItem('reseller', s.reseller.id);
      expect(item.pollFailures).toBeUndefined();
      expect(item.pollWatermark).toEqual(expect.any(String));
    }
  });

  it('reads, never writes, the create of an order it sees again because it changed', async () => {
    const { api, reseller, vendorTag } = await stores();
    const order = orderPayload([{ vendor: vendorTag, price: '4.00' }]);
    await sim().placeOrder(reseller.shopDomain, order);
    const [jobId] = (await webhook(reseller.shopDomain, reseller.secret, order)).body.syncJobIds;
    await jobReaches(api, jobId, 'completed');
    // The reseller's shop ships it itself: the order changed, and the poll sees it.
    await fetch(`${service.runtime.simulator!.url}/_sim/orders/${order.id}/fulfillments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ shopDomain: reseller.shopDomain, fulfillment: { tracking_number: 'OWN-1' } }),
    });
    sdkCalls.length = 0;
    expect((await poll(reseller)).batchItemFailures).toEqual([]);
    const writes = sdkCalls
      .filter((c) => c.functionName === 'StorePoller' && c.service.toLowerCase().includes('dynamo'))
      .map((c) => c.command)
      .filter((command) => !/^(Get|BatchGet|Query)/.test(command));
    // The subscription check's record (CONTRACT.md §12.1: its checkedAt), then its watermark: no create
    // sent again (a failed conditional write is billed), no edit.
    expect(writes).toEqual(['UpdateItem', 'UpdateItem']);
    expect(await jobsOf(api, reseller.id)).toHaveLength(1);
  });

  it('costs one platform call, one read and only the subscription check’s write when nothing changed', async () => {
    const { api, reseller, vendorTag } = await stores();
    await sim().placeOrder(reseller.shopDomain, orderPayload([{ vendor: vendorTag, price: '4.00' }]));
    await poll(reseller);
    // Its job places the supplier order and tags the reseller's (a change of the order: its updated_at
    // moves), then completes; one poll takes that change, so the one measured has nothing new, however
    // late the job ran (under load it could tag the order while the measured poll read it).
    const [job] = await jobsOf(api, reseller.id);
    await jobReaches(api, job.id, 'completed');
    await poll(reseller);
    const watermark = (await storeItem('reseller', reseller.id)).pollWatermark;
    expect(watermark).toEqual(expect.any(String));

    // The same order again in the 5-minute overlap, and nothing new: it is known, nothing is written.
    const platformBefore = (await callsTo(reseller.shopDomain)).length;
    sdkCalls.length = 0;
    await poll(reseller);
    const dynamo = sdkCalls.filter(
      (c) => c.functionName === 'StorePoller' && c.service.toLowerCase().includes('dynamo'),
    );
    // The store, then what its subscription check found (CONTRACT.md §12.1 shows `checkedAt`: a write a
    // poll); the check's own platform call is left out of callsTo, as every subscription call is.
    expect(dynamo.map((c) => c.command)).toEqual(['GetItem', 'UpdateItem']);
    expect(await callsTo(reseller.shopDomain)).toHaveLength(platformBefore + 1);
    expect((await storeItem('reseller', reseller.id)).pollWatermark).toBe(watermark);
  });
});
