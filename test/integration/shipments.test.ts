import {
  type ApiClient,
  createResellerStore,
  createSourceStore,
  entryStatusWrite,
  serviceForSuite,
  unique,
} from './support.js';
import { eventually, fulfillmentPayload, jobReaches, orderPayload, sendOrder, sendWebhook } from './webhooks.js';

/**
 * Shipments as they really happen (CONTRACT.md §10.1–10.3), through the local runtime, DynamoDB
 * Local, the SQS emulator and the platform simulator: an order split over two suppliers, parcels
 * that name their lines, tracking that changes and parcels that are voided. The reseller's order
 * lives on the simulator, so what a customer would see is read there: which of its lines are
 * fulfilled, by which fulfillment, with which tracking.
 */

jest.setTimeout(90_000);

type Platform = 'storeplatform_a' | 'storeplatform_b' | 'custom';

describe('shipments in parts, from several suppliers, with tracking that changes', () => {
  const { service, sim } = serviceForSuite();

  /**
   * One reseller order of three lines over two suppliers: A carries line 1 (2 mugs) and line 2
   * (1 cup), B line 3 (3 plates). The order is on the reseller's shop too, as a platform keeps it.
   */
  const splitOrder = async (
    resellerPlatform: Platform = 'storeplatform_a',
    sourcePlatform: Platform = 'storeplatform_a',
  ) => {
    const api = service.api('owner_a');
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api, { platform: resellerPlatform, webhookSecret: resellerSecret });
    const secrets = { a: unique('whsec_a'), b: unique('whsec_b') };
    const tags = { a: unique('VendorA'), b: unique('VendorB') };
    const a = await createSourceStore(api, reseller.id, {
      platform: sourcePlatform,
      vendorTag: tags.a,
      webhookSecret: secrets.a,
    });
    const b = await createSourceStore(api, reseller.id, {
      platform: 'storeplatform_a',
      vendorTag: tags.b,
      webhookSecret: secrets.b,
    });
    const payload = orderPayload([
      { vendor: tags.a, price: '13.00', quantity: 2, sku: 'MUG-1' },
      { vendor: tags.a, price: '6.50', quantity: 1, sku: 'CUP-1' },
      { vendor: tags.b, price: '20.00', quantity: 3, sku: 'PLATE-1' },
    ]);
    await sim().placeOrder(reseller.shopDomain, payload);
    const receipt = await sendOrder(service.runtime.apiUrl, reseller.shopDomain, resellerSecret, payload);
    expect(receipt.status).toBe(200);
    const jobs = await Promise.all(
      (receipt.body.syncJobIds as string[]).map((id) => jobReaches(api, id, 'completed', 30_000)),
    );
    const jobOf = (store: { id: string }) => jobs.find((job) => job.sourceStoreId === store.id);
    const supplierOrder = async (store: { shopDomain: string }, job: any) =>
      (await sim().orders(store.shopDomain)).find((order) => String(order.id) === String(job.sourceOrderId));
    return {
      api,
      reseller,
      payload,
      stores: { a, b },
      secrets,
      jobs: { a: jobOf(a), b: jobOf(b) },
      supplierOrders: { a: await supplierOrder(a, jobOf(a)), b: await supplierOrder(b, jobOf(b)) },
    };
  };

  const send = (store: { shopDomain: string }, secret: string, body: unknown, topic = 'fulfillments/create') =>
    sendWebhook(service.runtime.apiUrl, '/v1/fulfillments/webhook', {
      shopDomain: store.shopDomain,
      secret,
      body,
      topic,
    });

  const jobNow = async (api: ApiClient, id: string) => (await api.get(`/v1/sync_jobs/${id}`)).body;

  const fulfillmentReaches = (api: ApiClient, jobId: string, sourceFulfillmentId: number, status: string) =>
    eventually(async () => {
      const job = await jobNow(api, jobId);
      const entry = (job.fulfillments as any[]).find((f) => f.sourceFulfillmentId === String(sourceFulfillmentId));
      return entry?.status === status && job;
    }, 30_000);

  /** The reseller's order on its shop: its lines' fulfilled quantities, by line id, and its fulfillments. */
  const resellerOrder = async (shopDomain: string, orderId: number) => {
    const order = (await sim().orders(shopDomain)).find((o) => String(o.id) === String(orderId));
    const fulfilled = Object.fromEntries(
      (order.line_items as any[]).map((line) => [String(line.id), line.fulfilled_quantity]),
    );
    return { order, fulfilled, fulfillments: (order.fulfillments ?? []) as any[] };
  };

  it('ships exactly the lines a supplier names, in two parcels, and never another supplier’s items', async () => {
    const { api, reseller, payload, stores, secrets, jobs, supplierOrders } = await splitOrder();
    // The job shows the lines it carries, with the supplier's ids and both prices.
    expect(jobs.a.lineItems).toEqual([
      expect.objectContaining({
        resellerLineItemId: '1',
        sku: 'MUG-1',
        quantity: 2,
        price: '13.00',
        fulfilledQuantity: 0,
      }),
      expect.objectContaining({
        resellerLineItemId: '2',
        sku: 'CUP-1',
        quantity: 1,
        price: '6.50',
        fulfilledQuantity: 0,
      }),
    ]);
    const [mug, cup] = supplierOrders.a.line_items as any[];
    expect(jobs.a.lineItems.map((l: any) => l.sourceLineItemId)).toEqual([String(mug.id), String(cup.id)]);
    expect(jobs.a.lineItems.map((l: any) => l.sourcePrice)).toEqual([mug.price, cup.price]);
    expect(jobs.a.fulfillmentStatus).toBe('unfulfilled');

    // Supplier A ships one mug, then the other: two parcels of line 1.
    const first = fulfillmentPayload(supplierOrders.a.id, { line_items: [{ id: mug.id, quantity: 1 }] });
    expect((await send(stores.a, secrets.a, first)).status).toBe(200);
    await fulfillmentReaches(api, jobs.a.id, first.id, 'delivered');
    const second = fulfillmentPayload(supplierOrders.a.id, { line_items: [{ id: mug.id, quantity: 1 }] });
    expect((await send(stores.a, secrets.a, second)).status).toBe(200);
    const job = await fulfillmentReaches(api, jobs.a.id, second.id, 'delivered');

    const shown = await resellerOrder(reseller.shopDomain, payload.id);
    expect(shown.fulfilled).toEqual({ '1': 2, '2': 0, '3': 0 });
    expect(shown.fulfillments.map((f) => f.line_items.map((l: any) => [String(l.id), l.quantity]))).toEqual([
      [['1', 1]],
      [['1', 1]],
    ]);
    expect(job.lineItems.map((l: any) => l.fulfilledQuantity)).toEqual([2, 0]);
    expect(job.fulfillmentStatus).toBe('partial');
    expect(job.fulfillments.map((f: any) => f.lineItems)).toEqual([
      [{ resellerLineItemId: '1', quantity: 1 }],
      [{ resellerLineItemId: '1', quantity: 1 }],
    ]);
    // Supplier B shipped nothing: its job and its line are untouched.
    expect((await jobNow(api, jobs.b.id)).fulfillmentStatus).toBe('unfulfilled');
  });

  it('covers the rest with a parcel naming no lines, cuts quantities, ignores what is not the job’s', async () => {
    const { api, reseller, payload, stores, secrets, jobs, supplierOrders } = await splitOrder();
    const [mug] = supplierOrders.a.line_items as any[];
    const [plate] = supplierOrders.b.line_items as any[];

    // Five mugs named where two were ordered: the parcel ships the two.
    const tooMany = fulfillmentPayload(supplierOrders.a.id, { line_items: [{ id: mug.id, quantity: 5 }] });
    await send(stores.a, secrets.a, tooMany);
    await fulfillmentReaches(api, jobs.a.id, tooMany.id, 'delivered');
    // A parcel of A naming only B's line: nothing of A's job, so nothing is sent.
    const foreign = fulfillmentPayload(supplierOrders.a.id, { line_items: [{ id: plate.id, quantity: 1 }] });
    await send(stores.a, secrets.a, foreign);
    const ignoredJob = await fulfillmentReaches(api, jobs.a.id, foreign.id, 'ignored');
    const ignored = ignoredJob.fulfillments.find((f: any) => f.sourceFulfillmentId === String(foreign.id));
    expect(ignored.errorMessage).toBe('the fulfillment names no line item of this job');
    // No lines named: the rest of A's job, the cup.
    const rest = fulfillmentPayload(supplierOrders.a.id);
    await send(stores.a, secrets.a, rest);
    const job = await fulfillmentReaches(api, jobs.a.id, rest.id, 'delivered');
    // And once everything is shipped, one more parcel has nothing left.
    const extra = fulfillmentPayload(supplierOrders.a.id);
    await send(stores.a, secrets.a, extra);
    await fulfillmentReaches(api, jobs.a.id, extra.id, 'ignored');

    const shown = await resellerOrder(reseller.shopDomain, payload.id);
    expect(shown.fulfilled).toEqual({ '1': 2, '2': 1, '3': 0 });
    expect(shown.fulfillments).toHaveLength(2);
    expect(job.fulfillmentStatus).toBe('fulfilled');
    expect(job.lineItems.map((l: any) => l.fulfilledQuantity)).toEqual([2, 1]);
  });

  it('applies corrected tracking once per change, in updated_at order, and unfulfills a voided parcel', async () => {
    const { api, reseller, payload, stores, secrets, jobs, supplierOrders } = await splitOrder();
    const [mug] = supplierOrders.a.line_items as any[];
    const at = (minute: number) => `2026-11-25T10:${String(minute).padStart(2, '0')}:00-05:00`;
    const created = fulfillmentPayload(supplierOrders.a.id, {
      line_items: [{ id: mug.id, quantity: 2 }],
      updated_at: at(0),
    });
    await send(stores.a, secrets.a, created);
    await fulfillmentReaches(api, jobs.a.id, created.id, 'delivered');
    const onReseller = async () => (await resellerOrder(reseller.shopDomain, payload.id)).fulfillments[0];
    const updateCalls = async () =>
      (await sim().calls()).filter(
        (c) => c.shopDomain === reseller.shopDomain && c.path.endsWith('/update_tracking.json'),
      ).length;

    // Corrected twice; the first correction arrives again, late: it changes nothing.
    const corrected = (n: string, minute: number) => ({
      ...created,
      tracking_number: n,
      tracking_numbers: [n],
      tracking_url: `https://ups.example/${n}`,
      tracking_urls: [`https://ups.example/${n}`],
      updated_at: at(minute),
    });
    await send(stores.a, secrets.a, corrected('1ZFIRST', 5), 'fulfillments/update');
    await eventually(async () => (await onReseller()).tracking_number === '1ZFIRST');
    await send(stores.a, secrets.a, corrected('1ZSECOND', 9), 'fulfillments/update');
    await eventually(async () => (await onReseller()).tracking_number === '1ZSECOND');
    expect((await send(stores.a, secrets.a, corrected('1ZFIRST', 5), 'fulfillments/update')).status).toBe(200);
    // The same tracking again (a redelivery) sends no update either.
    await send(stores.a, secrets.a, corrected('1ZSECOND', 9), 'fulfillments/update');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await onReseller()).tracking_number).toBe('1ZSECOND');
    expect(await updateCalls()).toBe(2);
    const job = await jobNow(api, jobs.a.id);
    expect(job.fulfillment).toMatchObject({ status: 'delivered', trackingNumber: '1ZSECOND' });

    // The supplier voids the parcel: the reseller's fulfillment is cancelled, its mugs unfulfilled again.
    await send(stores.a, secrets.a, { ...corrected('1ZSECOND', 12), status: 'cancelled' }, 'fulfillments/update');
    const voided = await fulfillmentReaches(api, jobs.a.id, created.id, 'cancelled');
    expect((await onReseller()).status).toBe('cancelled');
    expect((await resellerOrder(reseller.shopDomain, payload.id)).fulfilled['1']).toBe(0);
    expect(voided.fulfillmentStatus).toBe('unfulfilled');
    // A new parcel may ship them again.
    const again = fulfillmentPayload(supplierOrders.a.id, { line_items: [{ id: mug.id, quantity: 2 }] });
    await send(stores.a, secrets.a, again);
    await fulfillmentReaches(api, jobs.a.id, again.id, 'delivered');
    expect((await resellerOrder(reseller.shopDomain, payload.id)).fulfilled['1']).toBe(2);
  });

  it('never lets two parcels that arrive at once claim the same items', async () => {
    const { api, reseller, payload, stores, secrets, jobs, supplierOrders } = await splitOrder();
    const [mug] = supplierOrders.a.line_items as any[];
    const both = [1, 2].map(() =>
      fulfillmentPayload(supplierOrders.a.id, { line_items: [{ id: mug.id, quantity: 2 }] }),
    );
    const receipts = await Promise.all(both.map((body) => send(stores.a, secrets.a, body)));
    expect(receipts.map((r) => r.status)).toEqual([200, 200]);
    const settled = await eventually(async () => {
      const job = await jobNow(api, jobs.a.id);
      const statuses = (job.fulfillments as any[]).map((f) => f.status).sort();
      return statuses.join() === 'delivered,ignored' && job;
    }, 30_000);
    expect(settled.lineItems.map((l: any) => l.fulfilledQuantity)).toEqual([2, 0]);
    expect((await resellerOrder(reseller.shopDomain, payload.id)).fulfilled).toEqual({ '1': 2, '2': 0, '3': 0 });
  });

  it('updates the tracking once when the worker dies between the update call and its record', async () => {
    const { api, reseller, payload, stores, secrets, jobs, supplierOrders } = await splitOrder();
    const shipped = fulfillmentPayload(supplierOrders.a.id, { updated_at: '2026-11-25T10:00:00Z' });
    await send(stores.a, secrets.a, shipped);
    await fulfillmentReaches(api, jobs.a.id, shipped.id, 'delivered');
    // The worker's write that records the update: its environment dies there, once.
    const crash = service.runtime.faults.inject({ ...entryStatusWrite('delivered'), action: 'crash' });
    const corrected = {
      ...shipped,
      tracking_number: '1ZCRASH',
      tracking_numbers: ['1ZCRASH'],
      updated_at: '2026-11-25T10:05:00Z',
    };
    await send(stores.a, secrets.a, corrected, 'fulfillments/update');
    await eventually(
      async () =>
        (await jobNow(api, jobs.a.id)).fulfillment?.trackingNumber === '1ZCRASH' &&
        (await jobNow(api, jobs.a.id)).fulfillment?.status === 'delivered',
      30_000,
    );
    expect(crash.hits).toHaveLength(1);
    const updates = (await sim().calls()).filter(
      (c) => c.shopDomain === reseller.shopDomain && c.path.endsWith('/update_tracking.json'),
    );
    // Sent again after the crash under the same key: the reseller's fulfillment changed once.
    expect(updates).toHaveLength(2);
    expect(new Set(updates.map((c) => c.idempotencyKey)).size).toBe(1);
    const [onReseller] = (await resellerOrder(reseller.shopDomain, payload.id)).fulfillments;
    expect(onReseller.tracking_number).toBe('1ZCRASH');
  });

  it('takes an update of a fulfillment it never received as its create', async () => {
    const { api, reseller, payload, stores, secrets, jobs, supplierOrders } = await splitOrder();
    const [, cup] = supplierOrders.a.line_items as any[];
    const update = fulfillmentPayload(supplierOrders.a.id, { line_items: [{ id: cup.id, quantity: 1 }] });
    expect((await send(stores.a, secrets.a, update, 'fulfillments/update')).status).toBe(200);
    await fulfillmentReaches(api, jobs.a.id, update.id, 'delivered');
    expect((await resellerOrder(reseller.shopDomain, payload.id)).fulfilled).toEqual({ '1': 0, '2': 1, '3': 0 });
  });

  it('refuses a topic the endpoint does not take, naming the header, and writes nothing', async () => {
    const { stores, secrets, supplierOrders } = await splitOrder();
    const res = await send(stores.a, secrets.a, fulfillmentPayload(supplierOrders.a.id), 'fulfillments/delete');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', param: 'X-Platform-Topic' });
  });

  it('routes and ships a 250-line order, its body kept in parts', async () => {
    const api = service.api('owner_a');
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api, { webhookSecret: resellerSecret });
    const secret = unique('whsec_s');
    const tag = unique('Bulk');
    const store = await createSourceStore(api, reseller.id, { vendorTag: tag, webhookSecret: secret });
    const payload = orderPayload(
      Array.from({ length: 250 }, (_, i) => ({ vendor: tag, price: '2.00', quantity: 1 + (i % 3), sku: `BULK-${i}` })),
    );
    await sim().placeOrder(reseller.shopDomain, payload);
    const receipt = await sendOrder(service.runtime.apiUrl, reseller.shopDomain, resellerSecret, payload);
    const job = await jobReaches(api, receipt.body.syncJobIds[0], 'completed', 30_000);
    expect(job.lineItems).toHaveLength(250);
    expect(job.lineItems.every((line: any) => line.sourceLineItemId !== null)).toBe(true);
    const supplierOrder = (await sim().orders(store.shopDomain)).find((o) => String(o.id) === job.sourceOrderId);
    // One parcel of the first ten lines, then one of the rest.
    const some = fulfillmentPayload(supplierOrder.id, {
      line_items: (supplierOrder.line_items as any[]).slice(0, 10).map((l) => ({ id: l.id, quantity: l.quantity })),
    });
    await send(store, secret, some);
    await fulfillmentReaches(api, job.id, some.id, 'delivered');
    const rest = fulfillmentPayload(supplierOrder.id);
    await send(store, secret, rest);
    const shipped = await fulfillmentReaches(api, job.id, rest.id, 'delivered');
    expect(shipped.fulfillmentStatus).toBe('fulfilled');
    const shown = await resellerOrder(reseller.shopDomain, payload.id);
    expect(Object.values(shown.fulfilled).every((quantity, i) => quantity === 1 + (i % 3))).toBe(true);
    expect(shown.fulfillments.map((f) => f.line_items.length)).toEqual([10, 240]);
  });

  it.each<[Platform, Platform]>([
    ['storeplatform_b', 'storeplatform_a'],
    ['custom', 'storeplatform_b'],
  ])('ships named lines to a %s reseller from a %s supplier', async (resellerPlatform, sourcePlatform) => {
    const { api, reseller, payload, stores, secrets, jobs, supplierOrders } = await splitOrder(
      resellerPlatform,
      sourcePlatform,
    );
    const [mug] = supplierOrders.a.line_items as any[];
    const shipped = fulfillmentPayload(supplierOrders.a.id, { line_items: [{ id: mug.id, quantity: 1 }] });
    await send(stores.a, secrets.a, shipped);
    const job = await fulfillmentReaches(api, jobs.a.id, shipped.id, 'delivered');
    expect(job.lineItems.map((l: any) => l.fulfilledQuantity)).toEqual([1, 0]);
    expect((await resellerOrder(reseller.shopDomain, payload.id)).fulfilled).toEqual({ '1': 1, '2': 0, '3': 0 });
  });
});
