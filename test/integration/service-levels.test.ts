import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dueAtOf, HOUR_BUCKETS, localDateOf, type ServiceLevel, scanDueAtOf } from '../../shared/domain/shipping.js';
import { lateSweepKey } from '../../shared/dynamo/keys.js';
import { progressUpdate } from '../../shared/order-flow/order-entries.js';
import { createResellerStore, createSourceStore, pollStores, serviceForSuite, storePair, unique } from './support.js';
import { eventually, fulfillmentPayload, jobReaches, orderPayload, sendOrder, sendWebhook } from './webhooks.js';

/**
 * Supplier service levels (CONTRACT.md §16) end to end through the local runtime: a source store's
 * promise, each job's due time when its supplier order is placed, and the late sweep run on a clock
 * the test sets (the scheduled event's `time`, as EventBridge sends it): a job shipped on time, one
 * late, one cancelled by the reseller (never late); `sync_job.late` once, across a restart of the sweep.
 */

jest.setTimeout(120_000);

describe('supplier service levels', () => {
  const { service, api, sim } = serviceForSuite();

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
      const receipt = await sendOrder(service.runtime.apiUrl, reseller.shopDomain, resellerSecret, payload);
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
    const { resellerSecret, reseller, vendorTag, source } = await storePair(api(), {
      platform: 'storeplatform_b',
      serviceLevel: { shipWithinBusinessDays: 2, cutoffTime: '12:00' },
    });
    // The simulator's Shopify shops keep their books in Chicago (lib/local/simulator-shopify.ts).
    expect(source.serviceLevel).toMatchObject({ timeZone: 'America/Chicago', cutoffTime: '12:00' });
    const payload = orderPayload([{ vendor: vendorTag, price: '10.00', quantity: 1 }]);
    const receipt = await sendOrder(service.runtime.apiUrl, reseller.shopDomain, resellerSecret, payload);
    const job = await jobReaches(api(), receipt.body.syncJobIds[0], 'completed');
    const promise: ServiceLevel = { ...source.serviceLevel };
    expect(job.serviceLevel.dueAt).toBe(dueAtOf(promise, new Date(job.completedAt)).toISOString());
    const supplierOrder = await eventually(async () =>
      (await sim().orders(source.shopDomain)).find(
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
    // Five at a time: a loaded machine answers ten at once past the authorizer's 5 s.
    for (let batch = 0; batch < 10; batch++) placed.push(...(await Promise.all(Array.from({ length: 5 }, order))));
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
    // Each parcel as its platform tells it, with its own creation time.
    const parcels = shipped.map(({ job }) => ({
      ...fulfillmentPayload(job.sourceOrderId),
      created_at: new Date().toISOString(),
    }));
    await Promise.all(
      parcels.map((parcel) =>
        hook('/v1/fulfillments/webhook', source.shopDomain, sourceSecret, parcel, 'fulfillments/create'),
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
    // Carriers: 20 parcels scanned (a fulfillment event), 10 only confirmed (a status-only update), 10 never said.
    await Promise.all(
      parcels.slice(0, 20).map((parcel, i) =>
        hook(
          '/v1/fulfillments/webhook',
          source.shopDomain,
          sourceSecret,
          {
            id: 9_000_000 + i,
            fulfillment_id: parcel.id,
            order_id: parcel.order_id,
            status: 'in_transit',
            happened_at: new Date(Date.now() + i * 3_600_000).toISOString(),
          },
          'fulfillment_events/create',
        ),
      ),
    );
    await Promise.all(
      parcels
        .slice(20, 30)
        .map((parcel) =>
          hook(
            '/v1/fulfillments/webhook',
            source.shopDomain,
            sourceSecret,
            { ...parcel, shipment_status: 'confirmed', updated_at: new Date().toISOString() },
            'fulfillments/update',
          ),
        ),
    );

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
    // Then after the last parcel's scan window (it may close after the due time): the scans decided.
    const calendar = { timeZone: zone, workingDays: source.serviceLevel.workingDays, daysOff: [] };
    const scanDue = (parcel: { created_at: string }) => scanDueAtOf(calendar, new Date(parcel.created_at)).getTime();
    const lastScanDue = Math.max(...parcels.map(scanDue));
    if (lastScanDue > lastDue)
      await service.runtime.invoke('LateSweep', { time: new Date(lastScanDue + 3_600_000).toISOString() });
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
    const rate = (n: number, of = counted.length) => Math.round((n / of) * 10_000) / 10_000;
    // The scan figures from the jobs' parcels: a scan within 2 working days of the parcel's creation.
    const createdOf = new Map(parcels.map((parcel) => [String(parcel.id), parcel]));
    const shippedParcels = onTime.flatMap((job) =>
      job.fulfillments.map((entry: any) => ({ job, entry, parcel: createdOf.get(entry.sourceFulfillmentId)! })),
    );
    const inTime = ({ entry, parcel }: (typeof shippedParcels)[number]) =>
      entry.firstScanAt !== null && Date.parse(entry.firstScanAt) <= scanDue(parcel);
    const reported = shippedParcels.filter(({ entry }) => entry.shipmentStatus !== null);
    const verified = onTime.filter((job) => shippedParcels.filter((p) => p.job === job).every(inTime));
    const scanHours = shippedParcels
      .filter(({ entry }) => entry.firstScanAt !== null)
      .map(({ job, entry }) => (Date.parse(entry.firstScanAt) - Date.parse(job.completedAt)) / 3_600_000)
      .sort((a, b) => a - b);
    const scanBound = (p: number) => {
      const h = scanHours[Math.max(1, Math.ceil(p * scanHours.length)) - 1] as number;
      return HOUR_BUCKETS.find((b) => h <= b) ?? HOUR_BUCKETS.at(-1);
    };
    expect([reported.length, shippedParcels.filter(inTime).length, verified.length]).toEqual([30, 20, 20]);
    expect([counted.length, onTime.length, bySource.length]).toEqual([46, 40, 3]);
    // Late now: the 3 of the 4 left that their supplier did not cancel, as the jobs themselves say.
    const lateNow = jobs.filter((job) => job.serviceLevel?.late === true).length;
    expect(lateNow).toBe(3);
    expect((await scorecard()).lateNow).toBe(lateNow);
    expect(await scorecard()).toMatchObject({
      jobsDue: counted.length,
      shippedOnTime: onTime.length,
      onTimeRate: rate(onTime.length),
      lateShipmentRate: rate(counted.length - onTime.length - bySource.length),
      sourceCancellationRate: rate(bySource.length),
      hoursToTracking: { p50: bound(0.5), p90: bound(0.9) },
      scanVerifiedOnTimeRate: rate(verified.length),
      validTrackingRate: rate(shippedParcels.filter(inTime).length, reported.length),
      untrackedParcels: shippedParcels.length - reported.length,
      hoursToFirstScan: { p50: scanBound(0.5), p90: scanBound(0.9) },
      sufficient: true,
    });
    // A bad window is a 400 naming its param, and changes nothing.
    const bad = await api().get(`${base}?from=2026-02-30`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'validation_failed', param: 'from' });
    const wide = await api().get(`${base}?from=2025-01-01&to=2026-06-01`);
    expect(wide.body.error).toMatchObject({ code: 'validation_failed', param: 'to' });
  });

  /** The simulator's own API on `shopDomain`'s behalf: the answer's body. */
  const onShop = (shopDomain: string) => async (method: string, path: string, body: object) =>
    (await sim().control(method, path, { shopDomain, ...body })).body;

  /** A reseller and a supplier promising to ship within one business day, Monday to Friday in New York. */
  const promisingSupplier = async () => {
    const calendar = { timeZone: 'America/New_York', workingDays: ['mon', 'tue', 'wed', 'thu', 'fri'], daysOff: [] };
    const serviceLevel = { shipWithinBusinessDays: 1, timeZone: calendar.timeZone };
    return { ...(await storePair(api(), { serviceLevel })), calendar };
  };

  it("records parcels' carrier progress; one shipped before due, never scanned: on time, unscanned", async () => {
    const { resellerSecret, reseller, sourceSecret, vendorTag, calendar, source } = await promisingSupplier();
    const control = onShop(source.shopDomain);
    const toSource = async (topic: string, body: unknown) => {
      const res = await sendWebhook(service.runtime.apiUrl, '/v1/fulfillments/webhook', {
        shopDomain: source.shopDomain,
        secret: sourceSecret,
        body,
        topic,
      });
      expect(res.status).toBe(200);
    };
    const order = async () => {
      const payload = orderPayload([{ vendor: vendorTag, price: '10.00', quantity: 1 }]);
      const receipt = await sendOrder(service.runtime.apiUrl, reseller.shopDomain, resellerSecret, payload);
      return jobReaches(api(), receipt.body.syncJobIds[0], 'completed');
    };
    const jobs = { scanned: await order(), unscanned: await order(), untracked: await order() };
    const dueAt = Date.parse(jobs.scanned.serviceLevel.dueAt);
    // Each ships on the supplier's shop an hour before its due time, as the platform tells it.
    const createdAt = new Date(dueAt - 3_600_000).toISOString();
    const parcels: Record<string, any> = {};
    for (const [name, job] of Object.entries(jobs)) {
      const { fulfillment } = await control('POST', `/_sim/orders/${job.sourceOrderId}/fulfillments`, {
        fulfillment: { tracking_company: 'UPS', tracking_numbers: [`1Z${name}`] },
      });
      parcels[name] = { ...fulfillment, created_at: createdAt };
      await toSource('fulfillments/create', parcels[name]);
    }
    const entryOf = async (name: keyof typeof jobs) =>
      (await api().get(`/v1/sync_jobs/${jobs[name].id}`)).body.fulfillments[0];
    for (const name of Object.keys(jobs) as Array<keyof typeof jobs>)
      await eventually(async () => (await entryOf(name))?.status === 'delivered');

    // A status-only update is applied (no tracking sent again); an event moves it on, never back.
    const transitAt = new Date(dueAt - 1_800_000).toISOString();
    const moved = await control('PATCH', `/_sim/fulfillments/${parcels.scanned.id}`, {
      shipment_status: 'in_transit',
      happened_at: transitAt,
    });
    await toSource('fulfillment_events/create', moved.webhook);
    const delivered = await control('PATCH', `/_sim/fulfillments/${parcels.scanned.id}`, {
      shipment_status: 'delivered',
    });
    await toSource('fulfillments/update', { ...delivered.fulfillment, created_at: createdAt });
    await toSource('fulfillment_events/create', { ...moved.webhook, id: moved.webhook.id + 1000 });
    expect(await entryOf('scanned')).toMatchObject({
      status: 'delivered',
      shipmentStatus: 'delivered',
      firstScanAt: transitAt,
      attempts: 1,
    });
    // A status's own write, as the service makes it, measured: at most 2 write units (no index key moves).
    const plain = await entryOf('unscanned');
    const measured = await service.doc.send(
      new UpdateCommand({
        TableName: service.tableName,
        ...progressUpdate(plain.sourceFulfillmentId, plain, { shipmentStatus: 'label_printed' }).of(jobs.unscanned.id),
        ReturnConsumedCapacity: 'INDEXES',
      }),
    );
    expect(measured.ConsumedCapacity?.CapacityUnits).toBeLessThanOrEqual(2);
    expect(measured.ConsumedCapacity?.GlobalSecondaryIndexes ?? {}).toEqual({});
    const confirmed = await control('PATCH', `/_sim/fulfillments/${parcels.unscanned.id}`, {
      shipment_status: 'confirmed',
    });
    await toSource('fulfillments/update', { ...confirmed.fulfillment, created_at: createdAt });
    expect(await entryOf('unscanned')).toMatchObject({ shipmentStatus: 'confirmed', firstScanAt: null, attempts: 1 });
    expect(await entryOf('untracked')).toMatchObject({ shipmentStatus: null, firstScanAt: null });
    const trackingUpdates = (await sim().calls()).filter(
      (call) => call.shopDomain === reseller.shopDomain && /update_tracking/.test(call.path),
    );
    expect(trackingUpdates).toEqual([]);
    for (const job of Object.values(jobs)) {
      expect((await api().get(`/v1/sync_jobs/${job.id}`)).body.serviceLevel).toMatchObject({
        shippedAt: createdAt,
        onTime: true,
        late: false,
      });
    }

    // The sweep at the due time (from no mark); then after the parcels' scan windows close, twice,
    // and again from no mark (a restart that lost it): one `fulfillment.unscanned`, the confirmed one's.
    const scanDueAt = scanDueAtOf(calendar as any, new Date(createdAt)).getTime();
    expect(scanDueAt).toBeGreaterThan(dueAt);
    await service.doc.send(new DeleteCommand({ TableName: service.tableName, Key: lateSweepKey() }));
    await service.runtime.invoke('LateSweep', { time: new Date(dueAt + 2 * 3_600_000).toISOString() });
    const unscannedEvents = async () =>
      ((await api().get('/v1/events?type=fulfillment.unscanned&limit=100')).body.data as any[]).filter((event) =>
        Object.values(jobs).some((job) => job.id === event.data.object.id),
      );
    expect(await unscannedEvents()).toEqual([]);
    const late = new Date(scanDueAt + 2 * 3_600_000).toISOString();
    await service.runtime.invoke('LateSweep', { time: late });
    const events = await eventually(async () => {
      const found = await unscannedEvents();
      return found.length > 0 && found;
    }, 30_000);
    expect(events.map((event) => event.data.object.id)).toEqual([jobs.unscanned.id]);
    await service.runtime.invoke('LateSweep', { time: late });
    await service.doc.send(new DeleteCommand({ TableName: service.tableName, Key: lateSweepKey() }));
    await service.runtime.invoke('LateSweep', { time: late });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await unscannedEvents()).map((event) => event.data.object.id)).toEqual([jobs.unscanned.id]);
    expect((await api().get(`/v1/sync_jobs/${jobs.unscanned.id}`)).body.serviceLevel).toMatchObject({ onTime: true });

    // Its scorecard: 3 on time, 1 scan-verified; 1 valid parcel of 2 reported; 1 untracked.
    const day = localDateOf(new Date(dueAt), calendar.timeZone);
    const card = (
      await api().get(`/v1/reseller_stores/${reseller.id}/source_stores/${source.id}/scorecard?from=${day}&to=${day}`)
    ).body;
    expect(card).toMatchObject({
      jobsDue: 3,
      shippedOnTime: 3,
      scanVerifiedOnTimeRate: 0.3333,
      validTrackingRate: 0.5,
      untrackedParcels: 1,
    });
    const hours = (Date.parse(transitAt) - Date.parse(jobs.scanned.completedAt)) / 3_600_000;
    const bound = HOUR_BUCKETS.find((b) => hours <= b) ?? HOUR_BUCKETS.at(-1);
    expect(card.hoursToFirstScan).toEqual({ p50: bound, p90: bound });
  });

  it('counts jobs late now; one shipped after its due time leaves the count and gets its scan check', async () => {
    const { resellerSecret, reseller, sourceSecret, vendorTag, calendar, source } = await promisingSupplier();
    type Path = '/v1/orders/webhook' | '/v1/fulfillments/webhook';
    const hook = async (path: Path, shopDomain: string, secret: string, body: unknown, topic: string) => {
      const res = await sendWebhook(service.runtime.apiUrl, path, { shopDomain, secret, body, topic });
      expect(res.status).toBe(200);
      return res;
    };
    const order = async () => {
      const payload = orderPayload([{ vendor: vendorTag, price: '10.00', quantity: 1 }]);
      const receipt = await hook('/v1/orders/webhook', reseller.shopDomain, resellerSecret, payload, 'orders/create');
      return { payload, job: await jobReaches(api(), receipt.body.syncJobIds[0], 'completed') };
    };
    const [shipsLate, staysLate] = [await order(), await order()];
    const dues = [shipsLate, staysLate].map(({ job }) => Date.parse(job.serviceLevel.dueAt));
    const days = dues.map((due) => localDateOf(new Date(due), calendar.timeZone)).sort();
    const card = async () =>
      (
        await api().get(
          `/v1/reseller_stores/${reseller.id}/source_stores/${source.id}/scorecard?from=${days[0]}&to=${days[1]}`,
        )
      ).body;
    const jobNow = async (job: any) => (await api().get(`/v1/sync_jobs/${job.id}`)).body;
    const lateJobs = async () =>
      (await Promise.all([shipsLate, staysLate].map(({ job }) => jobNow(job)))).filter(
        (job) => job.serviceLevel?.late === true,
      ).length;

    // Both late at the sweep after their due time: late now, as the jobs say.
    const lastDue = Math.max(...dues);
    await service.doc.send(new DeleteCommand({ TableName: service.tableName, Key: lateSweepKey() }));
    await service.runtime.invoke('LateSweep', { time: new Date(lastDue + 2 * 3_600_000).toISOString() });
    expect(await lateJobs()).toBe(2);
    expect(await card()).toMatchObject({ jobsDue: 2, lateShipmentRate: 1, lateNow: 2 });

    // One ships three hours after its due time; its carrier's event comes before its parcel's webhook
    // (kept, then applied to the parcel's entry): the carrier confirmed it, never scanned it.
    const parcel = {
      ...fulfillmentPayload(shipsLate.job.sourceOrderId),
      created_at: new Date(lastDue + 3 * 3_600_000),
    };
    const event = {
      id: 8_000_000 + parcel.id,
      fulfillment_id: parcel.id,
      order_id: parcel.order_id,
      status: 'confirmed',
      happened_at: new Date(lastDue + 4 * 3_600_000).toISOString(),
    };
    await hook('/v1/fulfillments/webhook', source.shopDomain, sourceSecret, event, 'fulfillment_events/create');
    await hook('/v1/fulfillments/webhook', source.shopDomain, sourceSecret, parcel, 'fulfillments/create');
    const shipped = await eventually(async () => {
      const job = await jobNow(shipsLate.job);
      return job.fulfillments[0]?.status === 'delivered' && job;
    });
    expect(shipped.fulfillments[0]).toMatchObject({ shipmentStatus: 'confirmed', firstScanAt: null });
    expect(shipped.serviceLevel).toEqual({
      dueAt: shipsLate.job.serviceLevel.dueAt,
      shippedAt: parcel.created_at.toISOString(),
      onTime: false,
      late: false,
    });
    const lateList = (await api().get(`/v1/sync_jobs?late=true&reseller_store_id=${reseller.id}`)).body.data;
    expect(lateList.map((job: any) => job.id)).toEqual([staysLate.job.id]);
    expect(await lateJobs()).toBe(1);
    expect((await card()).lateNow).toBe(1);

    // Its parcel's scan check still runs: once its window closes, `fulfillment.unscanned` once, even
    // when the sweep runs again or starts over without its mark.
    const unscannedEvents = async () =>
      ((await api().get('/v1/events?type=fulfillment.unscanned&limit=100')).body.data as any[]).filter(
        (found) => found.data.object.id === shipsLate.job.id,
      );
    const closed = new Date(scanDueAtOf(calendar as any, parcel.created_at).getTime() + 2 * 3_600_000).toISOString();
    await service.runtime.invoke('LateSweep', { time: closed });
    const events = await eventually(async () => {
      const found = await unscannedEvents();
      return found.length > 0 && found;
    }, 30_000);
    expect(events).toHaveLength(1);
    await service.runtime.invoke('LateSweep', { time: closed });
    await service.doc.send(new DeleteCommand({ TableName: service.tableName, Key: lateSweepKey() }));
    await service.runtime.invoke('LateSweep', { time: closed });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(await unscannedEvents()).toHaveLength(1);
    expect(await card()).toMatchObject({ jobsDue: 2, validTrackingRate: 0, untrackedParcels: 0, lateNow: 1 });

    // The other is cancelled by the reseller: cancelled jobs are never late, and leave the count.
    await hook(
      '/v1/orders/webhook',
      reseller.shopDomain,
      resellerSecret,
      { id: staysLate.payload.id, cancel_reason: 'customer', cancelled_at: new Date().toISOString() },
      'orders/cancelled',
    );
    await jobReaches(api(), staysLate.job.id, 'cancelled');
    expect(await lateJobs()).toBe(0);
    expect((await card()).lateNow).toBe(0);
  });

  it("takes a Shopify supplier's carrier progress from the poll (displayStatus, inTransitAt)", async () => {
    const { resellerSecret, reseller, vendorTag, source } = await storePair(api(), {
      platform: 'storeplatform_b',
      serviceLevel: { shipWithinBusinessDays: 2 },
    });
    const receipt = await sendOrder(
      service.runtime.apiUrl,
      reseller.shopDomain,
      resellerSecret,
      orderPayload([{ vendor: vendorTag, price: '10.00', quantity: 1 }]),
    );
    const job = await jobReaches(api(), receipt.body.syncJobIds[0], 'completed');
    const control = onShop(source.shopDomain);
    // The supplier ships and the carrier scans it, with no webhook: only the poll can tell.
    const { fulfillment } = await control('POST', `/_sim/orders/${job.sourceOrderId}/fulfillments`, {
      fulfillment: { tracking_company: 'UPS', tracking_numbers: ['1ZPOLLED'] },
    });
    const scannedAt = new Date(Date.now() + 3_600_000).toISOString();
    await control('PATCH', `/_sim/fulfillments/${fulfillment.id}`, {
      shipment_status: 'in_transit',
      happened_at: scannedAt,
    });
    await pollStores(service.runtime, { kind: 'source', id: source.id });
    const polled = await eventually(async () => {
      const body = (await api().get(`/v1/sync_jobs/${job.id}`)).body;
      return body.fulfillments[0]?.shipmentStatus && body;
    });
    expect(polled.fulfillments[0]).toMatchObject({ shipmentStatus: 'in_transit', firstScanAt: scannedAt });
    expect(polled.serviceLevel.shippedAt).toBe(new Date(fulfillment.created_at).toISOString());
  });
});
