import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { dueAtOf, type ServiceLevel } from '../../shared/domain/business-days.js';
import { lateSweepKey } from '../../shared/dynamo/keys.js';
import { createResellerStore, createSourceStore, startService, type TestService, unique } from './support.js';
import { eventually, fulfillmentPayload, jobReaches, orderPayload, sendWebhook, simulator } from './webhooks.js';

/**
 * Supplier service levels (CONTRACT.md §16) end to end through the local runtime: a source store's
 * promise, each job's due time when its supplier order is placed, and the late sweep run on a clock
 * the test sets (the scheduled event's `time`, as EventBridge sends it): a job shipped on time, one
 * late, one cancelled by the reseller (never late); `sync_job.late` once, across a restart of the sweep.
 */

jest.setTimeout(120_000);

describe('supplier service levels', () => {
  let service: TestService;
  const api = () => service.api('owner_a');

  beforeAll(async () => {
    service = await startService();
  }, 90_000);
  afterAll(() => service?.stop());

  it('validates the promise: an unknown zone or a bad cut-off is a 400 naming its param', async () => {
    const reseller = await createResellerStore(api());
    const post = (serviceLevel: unknown) =>
      api().post(`/v1/reseller_stores/${reseller.id}/source_stores`, {
        name: 'Supplier',
        platform: 'storeplatform_a',
        shopDomain: `${unique('supplier')}.myshopify.com`,
        accessToken: 'shpat_x',
        webhookSecret: 'whsec_x',
        vendorTag: unique('Vendor'),
        pricingMode: 'percentage',
        pricingConfig: { type: 'percentage', value: 10 },
        serviceLevel,
      });
    for (const [level, param] of [
      [{ shipWithinBusinessDays: 2, timeZone: 'Mars/Olympus' }, 'serviceLevel.timeZone'],
      [{ shipWithinBusinessDays: 2, timeZone: 'UTC', cutoffTime: '25:00' }, 'serviceLevel.cutoffTime'],
      [{ shipWithinBusinessDays: 0, timeZone: 'UTC' }, 'serviceLevel.shipWithinBusinessDays'],
      [{ shipWithinBusinessDays: 2, timeZone: 'UTC', workingDays: [] }, 'serviceLevel.workingDays'],
      [{ shipWithinBusinessDays: 2, timeZone: 'UTC', daysOff: ['2026-02-30'] }, 'serviceLevel.daysOff.0'],
    ] as const) {
      const res = await post(level);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_failed', param });
    }
    const stores = (await api().get(`/v1/reseller_stores/${reseller.id}/source_stores`)).body.data;
    expect(stores).toEqual([]);

    // Defaults filled in; a PATCH replaces the whole promise; null removes it.
    const made = await post({ shipWithinBusinessDays: 3, timeZone: 'Asia/Kolkata' });
    expect(made.status).toBe(201);
    expect(made.body.serviceLevel).toEqual({
      shipWithinBusinessDays: 3,
      cutoffTime: '14:00',
      timeZone: 'Asia/Kolkata',
      workingDays: ['mon', 'tue', 'wed', 'thu', 'fri'],
      daysOff: [],
    });
    const path = `/v1/reseller_stores/${reseller.id}/source_stores/${made.body.id}`;
    const patched = await api().patch(path, {
      serviceLevel: { shipWithinBusinessDays: 1, timeZone: 'Europe/Kyiv', daysOff: ['2026-12-25'] },
    });
    expect(patched.body.serviceLevel).toMatchObject({ shipWithinBusinessDays: 1, timeZone: 'Europe/Kyiv' });
    expect((await api().patch(path, { serviceLevel: null })).body.serviceLevel).toBeNull();
    expect((await api().get(path)).body.serviceLevel).toBeNull();
  });

  it('gives each placed job its due time; the sweep finds the late one once: shipped, late, cancelled', async () => {
    const promise: ServiceLevel = {
      shipWithinBusinessDays: 1,
      cutoffTime: '14:00',
      timeZone: 'America/New_York',
      workingDays: ['mon', 'tue', 'wed', 'thu', 'fri'],
      daysOff: [],
    };
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api(), { webhookSecret: resellerSecret });
    const sourceSecret = unique('whsec_s');
    const vendorTag = unique('Vendor');
    const source = await createSourceStore(api(), reseller.id, {
      vendorTag,
      webhookSecret: sourceSecret,
      serviceLevel: { shipWithinBusinessDays: 1, timeZone: 'America/New_York' },
    });
    const order = async () => {
      const payload = orderPayload([{ vendor: vendorTag, price: '10.00', quantity: 1 }]);
      const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
        shopDomain: reseller.shopDomain,
        secret: resellerSecret,
        body: payload,
      });
      expect(receipt.status).toBe(200);
      const job = await jobReaches(api(), receipt.body.syncJobIds[0], 'completed');
      return { payload, job };
    };
    const [shipped, late, cancelled] = [await order(), await order(), await order()];
    for (const { job } of [shipped, late, cancelled]) {
      expect(job.serviceLevel).toEqual({
        dueAt: dueAtOf(promise, new Date(job.completedAt)).toISOString(),
        shippedAt: null,
        onTime: null,
        late: false,
      });
    }

    // One ships now, before its due time; one is cancelled by the reseller.
    const parcel = await sendWebhook(service.runtime.apiUrl, '/v1/fulfillments/webhook', {
      shopDomain: source.shopDomain,
      secret: sourceSecret,
      body: fulfillmentPayload(shipped.job.sourceOrderId),
      topic: 'fulfillments/create',
    });
    expect(parcel.status).toBe(200);
    await eventually(async () => (await api().get(`/v1/sync_jobs/${shipped.job.id}`)).body.serviceLevel.shippedAt);
    await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret: resellerSecret,
      body: { id: cancelled.payload.id, cancel_reason: 'customer', cancelled_at: new Date().toISOString() },
      topic: 'orders/cancelled',
    });
    await jobReaches(api(), cancelled.job.id, 'cancelled');

    // Nothing is late before the due time: a sweep now finds nothing.
    await service.runtime.invoke('LateSweep', { time: new Date().toISOString() });
    expect((await api().get('/v1/sync_jobs?late=true')).body.data).toEqual([]);

    // Two hours after the due time.
    const dueAt = Date.parse(late.job.serviceLevel.dueAt);
    const time = new Date(dueAt + 2 * 3_600_000).toISOString();
    await service.runtime.invoke('LateSweep', { time });
    const lateList = (await api().get('/v1/sync_jobs?late=true')).body.data;
    expect(lateList.map((job: any) => job.id)).toEqual([late.job.id]);
    const storeLate = (await api().get(`/v1/sync_jobs?late=true&reseller_store_id=${reseller.id}`)).body.data;
    expect(storeLate.map((job: any) => job.id)).toEqual([late.job.id]);
    expect(lateList[0].serviceLevel).toEqual({
      dueAt: late.job.serviceLevel.dueAt,
      shippedAt: null,
      onTime: false,
      late: true,
    });
    const shippedNow = (await api().get(`/v1/sync_jobs/${shipped.job.id}`)).body.serviceLevel;
    expect(shippedNow).toMatchObject({ onTime: true, late: false });
    expect(Date.parse(shippedNow.shippedAt)).toBeLessThanOrEqual(dueAt);
    const cancelledNow = (await api().get(`/v1/sync_jobs/${cancelled.job.id}`)).body.serviceLevel;
    expect(cancelledNow).toMatchObject({ shippedAt: null, onTime: null, late: false });

    // `sync_job.late` once: for the late job only, and not again after the sweep runs again, or
    // starts over without its mark (a restart that lost it).
    const lateEvents = async () =>
      ((await api().get('/v1/events?type=sync_job.late&limit=100')).body.data as any[]).filter((event) =>
        [shipped, late, cancelled].some(({ job }) => job.id === event.data.object.id),
      );
    const events = await eventually(async () => {
      const found = await lateEvents();
      return found.length > 0 && found;
    }, 30_000);
    expect(events.map((event) => event.data.object.id)).toEqual([late.job.id]);
    await service.runtime.invoke('LateSweep', { time });
    await service.doc.send(new DeleteCommand({ TableName: service.tableName, Key: lateSweepKey() }));
    await service.runtime.invoke('LateSweep', { time });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await lateEvents()).map((event) => event.data.object.id)).toEqual([late.job.id]);
  });

  it("takes a Shopify supplier's own zone, and sets its order's fulfillment deadline to its due time", async () => {
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api(), { webhookSecret: resellerSecret });
    const vendorTag = unique('Vendor');
    const source = await createSourceStore(api(), reseller.id, {
      platform: 'storeplatform_b',
      vendorTag,
      serviceLevel: { shipWithinBusinessDays: 2, cutoffTime: '12:00' },
    });
    // The simulator's Shopify shops keep their books in Chicago (lib/local/simulator-shopify.ts).
    expect(source.serviceLevel).toMatchObject({ timeZone: 'America/Chicago', cutoffTime: '12:00' });
    const payload = orderPayload([{ vendor: vendorTag, price: '10.00', quantity: 1 }]);
    const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret: resellerSecret,
      body: payload,
    });
    const job = await jobReaches(api(), receipt.body.syncJobIds[0], 'completed');
    const promise: ServiceLevel = { ...source.serviceLevel };
    expect(job.serviceLevel.dueAt).toBe(dueAtOf(promise, new Date(job.completedAt)).toISOString());
    const sim = simulator(service.runtime.simulator!.url);
    const supplierOrder = await eventually(async () =>
      (await sim.orders(source.shopDomain)).find(
        (order: any) => String(order.id) === job.sourceOrderId && typeof order.fulfill_by === 'string',
      ),
    );
    expect(Date.parse(supplierOrder.fulfill_by)).toBe(Date.parse(job.serviceLevel.dueAt));
  });
});
