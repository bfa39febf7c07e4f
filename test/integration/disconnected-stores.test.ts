import { serviceForSuite, storePair, unique } from './support.js';
import { eventually, fulfillmentPayload, jobReaches, orderPayload, sendOrder, sendWebhook } from './webhooks.js';

jest.setTimeout(90_000);

/**
 * CONTRACT.md §12.2: a store the shop uninstalled is never called with its token again. Its work ends
 * `dead` with `store_disconnected`, without a call; new credentials reconnect it and `retry` completes
 * the work.
 */
describe('disconnected stores', () => {
  const { service, api, sim } = serviceForSuite();

  /** The shop's `app/uninstalled` webhook: the status it is answered. */
  const uninstall = async (shopDomain: string, secret: string) =>
    (
      await sendWebhook(service.runtime.apiUrl, '/v1/app/webhook', {
        shopDomain,
        secret,
        topic: 'app/uninstalled',
        body: { id: 1, myshopify_domain: shopDomain },
      })
    ).status;
  /** How many calls the shop has had so far. */
  const callsTo = async (shopDomain: string) =>
    (await sim().allCalls()).filter((c) => c.shopDomain === shopDomain).length;

  it('ends a job dead store_disconnected without a call; credentials and retry complete it', async () => {
    const { resellerSecret, reseller, sourceSecret, vendorTag, source } = await storePair(api());

    expect(await uninstall(source.shopDomain, sourceSecret)).toBe(200);
    const callsBefore = await callsTo(source.shopDomain);

    const order = orderPayload([{ vendor: vendorTag, price: '10.00' }]);
    const sent = await sendOrder(service.runtime.apiUrl, reseller.shopDomain, resellerSecret, order);
    expect(sent.status).toBe(200);
    const [jobId] = sent.body.syncJobIds;
    const dead = await jobReaches(api(), jobId, 'dead');
    expect(dead.errorMessage).toMatch(/^store_disconnected: source store sst_\w+ is uninstalled \(app\/uninstalled/);
    // No call reached the supplier's shop: not the create, not a lookup.
    expect((await sim().allCalls()).filter((c) => c.shopDomain === source.shopDomain)).toHaveLength(callsBefore);
    expect(await sim().orders(source.shopDomain)).toEqual([]);
    const attempts = (await api().get(`/v1/sync_jobs/${jobId}/attempts`)).body.data;
    expect(attempts.map((a: { outcome: string; platformStatus: unknown }) => [a.outcome, a.platformStatus])).toEqual([
      ['dead', null],
    ]);

    // A retry before new credentials ends the same way, still without a call.
    expect((await api().post(`/v1/sync_jobs/${jobId}/retry`)).status).toBe(200);
    await eventually(async () => {
      const job = (await api().get(`/v1/sync_jobs/${jobId}`)).body;
      return job.status === 'dead' && job.attempts === 2 && job;
    });
    expect((await sim().allCalls()).filter((c) => c.shopDomain === source.shopDomain)).toHaveLength(callsBefore);

    // New credentials reconnect the store; retry places the order, once.
    const rotated = await api().post(`/v1/reseller_stores/${reseller.id}/source_stores/${source.id}/credentials`, {
      accessToken: `shpat_${unique('new')}`,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.connection).toEqual({ state: 'connected', since: null, reason: null });
    expect((await api().post(`/v1/sync_jobs/${jobId}/retry`)).status).toBe(200);
    await jobReaches(api(), jobId, 'completed');
    expect(await sim().orders(source.shopDomain)).toHaveLength(1);
  });

  it('ends a fulfillment for an uninstalled reseller store dead store_disconnected, without a call', async () => {
    const { resellerSecret, reseller, sourceSecret, vendorTag, source } = await storePair(api());
    const sent = await sendOrder(
      service.runtime.apiUrl,
      reseller.shopDomain,
      resellerSecret,
      orderPayload([{ vendor: vendorTag, price: '10.00' }]),
    );
    const [jobId] = sent.body.syncJobIds;
    const placed = await jobReaches(api(), jobId, 'completed');
    // The reseller order's tag settled (its call, if any, made) before the store goes.
    await eventually(async () => (await api().get(`/v1/sync_jobs/${jobId}`)).body.tagged !== null);

    expect(await uninstall(reseller.shopDomain, resellerSecret)).toBe(200);
    const callsBefore = await callsTo(reseller.shopDomain);

    // The supplier ships: its tracking would go to the reseller's order, whose store is gone.
    const fulfillment = fulfillmentPayload(placed.sourceOrderId);
    const shipped = await sendWebhook(service.runtime.apiUrl, '/v1/fulfillments/webhook', {
      shopDomain: source.shopDomain,
      secret: sourceSecret,
      topic: 'fulfillments/create',
      body: fulfillment,
    });
    expect(shipped.status).toBe(200);
    const job = await eventually(async () => {
      const read = (await api().get(`/v1/sync_jobs/${jobId}`)).body;
      const entry = read.fulfillments.find((f: any) => f.sourceFulfillmentId === String(fulfillment.id));
      return entry?.status === 'dead' && read;
    });
    const entry = job.fulfillments.find((f: any) => f.sourceFulfillmentId === String(fulfillment.id));
    expect(entry.errorMessage).toMatch(/^store_disconnected: reseller store rst_\w+ is uninstalled \(app\/uninstalled/);
    expect(entry.resellerFulfillmentId).toBeNull();
    // No call reached the reseller's shop: not the fulfillment, nothing else.
    expect((await sim().allCalls()).filter((c) => c.shopDomain === reseller.shopDomain)).toHaveLength(callsBefore);
  });
});
