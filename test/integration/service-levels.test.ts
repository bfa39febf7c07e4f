import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { dueAtOf, localDateOf, type ServiceLevel } from '../../shared/domain/business-days.js';
import { HOUR_BUCKETS } from '../../shared/domain/scorecard.js';
import { lateSweepKey } from '../../shared/dynamo/keys.js';
import { createResellerStore, createSourceStore, serviceForSuite, unique } from './support.js';
import { eventually, fulfillmentPayload, jobReaches, orderPayload, sendWebhook, simulator } from './webhooks.js';

/**
 * Supplier service levels (CONTRACT.md §16) end to end through the local runtime: a source store's
 * promise, each job's due time when its supplier order is placed, and the late sweep run on a clock
 * the test sets (the scheduled event's `time`, as EventBridge sends it): a job shipped on time, one
 * late, one cancelled by the reseller (never late); `sync_job.late` once, across a restart of the sweep.
 */

jest.setTimeout(120_000);

describe('supplier service levels', () => {
  const { service, api } = serviceForSuite();

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
  it("keeps a supplier's scorecard equal to the rates computed from its 50 jobs", async () => {
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api(), { webhookSecret: resellerSecret });
    const sourceSecret = unique('whsec_s');
    const vendorTag = unique('Vendor');
    const zone = 'America/New_York';
    const source = await createSourceStore(api(), reseller.id, {
      vendorTag,
      webhookSecret: sourceSecret,
      serviceLevel: { shipWithinBusinessDays: 1, timeZone: zone },
    });
    const hook = (
      path: '/v1/orders/webhook' | '/v1/fulfillments/webhook',
      shopDomain: string,
      secret: string,
      body: unknown,
      topic?: string,
    ) => sendWebhook(service.runtime.apiUrl, path, { shopDomain, secret, body, ...(topic ? { topic } : {}) });
    const order = async () => {
      const payload = orderPayload([{ vendor: vendorTag, price: '10.00', quantity: 1 }]);
      const receipt = await hook('/v1/orders/webhook', reseller.shopDomain, resellerSecret, payload);
      expect(receipt.status).toBe(200);
      return { payload, job: await jobReaches(api(), receipt.body.syncJobIds[0], 'completed') };
    };
    const placed: Array<Awaited<ReturnType<typeof order>>> = [];
    for (let batch = 0; batch < 5; batch++) placed.push(...(await Promise.all(Array.from({ length: 10 }, order))));
    const cancelSupplier = (job: any) =>
      hook(
        '/v1/orders/webhook',
        source.shopDomain,
        sourceSecret,
        { id: job.sourceOrderId, cancel_reason: 'inventory', cancelled_at: new Date().toISOString() },
        'orders/cancelled',
      );

    // 40 ship before their due time, 4 are cancelled by the reseller, 2 by the supplier, 4 are left.
    const [shipped, byReseller, bySupplier, left] = [
      placed.slice(0, 40),
      placed.slice(40, 44),
      placed.slice(44, 46),
      placed.slice(46),
    ];
    await Promise.all(
      shipped.map(({ job }) =>
        hook(
          '/v1/fulfillments/webhook',
          source.shopDomain,
          sourceSecret,
          fulfillmentPayload(job.sourceOrderId),
          'fulfillments/create',
        ),
      ),
    );
    for (const { payload, job } of byReseller) {
      await hook(
        '/v1/orders/webhook',
        reseller.shopDomain,
        resellerSecret,
        { id: payload.id, cancel_reason: 'customer', cancelled_at: new Date().toISOString() },
        'orders/cancelled',
      );
      await jobReaches(api(), job.id, 'cancelled');
    }
    for (const { job } of bySupplier) {
      await cancelSupplier(job);
      await jobReaches(api(), job.id, 'cancelled');
    }
    for (const { job } of shipped)
      await eventually(async () => (await api().get(`/v1/sync_jobs/${job.id}`)).body.serviceLevel.shippedAt);

    const base = `/v1/reseller_stores/${reseller.id}/source_stores/${source.id}/scorecard`;
    const dueDays = placed.map(({ job }) => localDateOf(new Date(job.serviceLevel.dueAt), zone)).sort();
    const scorecard = async () => (await api().get(`${base}?from=${dueDays[0]}&to=${dueDays.at(-1)}`)).body;
    // Counted at their due time, by the sweep: nothing yet.
    expect(await scorecard()).toMatchObject({
      object: 'scorecard',
      sourceStoreId: source.id,
      jobsDue: 2,
      onTimeRate: 0,
    });

    // The sweep, an hour after the last due time (from no mark: it looks 48 hours back).
    const lastDue = Math.max(...placed.map(({ job }) => Date.parse(job.serviceLevel.dueAt)));
    await service.doc.send(new DeleteCommand({ TableName: service.tableName, Key: lateSweepKey() }));
    await service.runtime.invoke('LateSweep', { time: new Date(lastDue + 3_600_000).toISOString() });
    // One late job is then cancelled by its supplier: no longer late, cancelled by the supplier.
    await cancelSupplier(left[0].job);
    await jobReaches(api(), left[0].job.id, 'cancelled');

    // The same figures from the jobs themselves.
    const jobs = await Promise.all(placed.map(async ({ job }) => (await api().get(`/v1/sync_jobs/${job.id}`)).body));
    const counted = jobs.filter((job) => job.cancellation?.requestedBy !== 'reseller');
    const bySource = counted.filter((job) => job.cancellation?.requestedBy === 'source');
    const onTime = counted.filter((job) => job.status !== 'cancelled' && job.serviceLevel.onTime === true);
    const hours = onTime
      .map((job) => (Date.parse(job.serviceLevel.shippedAt) - Date.parse(job.completedAt)) / 3_600_000)
      .sort((a, b) => a - b);
    const bound = (p: number) => {
      const h = hours[Math.max(1, Math.ceil(p * hours.length)) - 1] as number;
      return HOUR_BUCKETS.find((b) => h <= b) ?? HOUR_BUCKETS.at(-1);
    };
    const rate = (n: number) => Math.round((n / counted.length) * 10_000) / 10_000;
    expect([counted.length, onTime.length, bySource.length]).toEqual([46, 40, 3]);
    expect(await scorecard()).toMatchObject({
      jobsDue: counted.length,
      shippedOnTime: onTime.length,
      onTimeRate: rate(onTime.length),
      lateShipmentRate: rate(counted.length - onTime.length - bySource.length),
      sourceCancellationRate: rate(bySource.length),
      hoursToTracking: { p50: bound(0.5), p90: bound(0.9) },
      sufficient: true,
    });
    // A bad window is a 400 naming its param, and changes nothing.
    const bad = await api().get(`${base}?from=2026-02-30`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'validation_failed', param: 'from' });
    const wide = await api().get(`${base}?from=2025-01-01&to=2026-06-01`);
    expect(wide.body.error).toMatchObject({ code: 'validation_failed', param: 'to' });
  });
});
