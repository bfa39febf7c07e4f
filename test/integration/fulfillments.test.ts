import { createHmac } from 'node:crypto';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { keptFulfillmentKey } from '../../shared/entities/kept-fulfillment.js';
import {
  type ApiClient,
  createResellerStore,
  createSourceStore,
  entryStatusWrite,
  jobStatusWrite,
  type OwnerName,
  replaceAccessToken,
  scanAllButEvents,
  serviceForSuite,
  unique,
} from './support.js';
import { eventually, fulfillmentPayload, jobReaches, orderPayload, sendWebhook } from './webhooks.js';

// The local runtime can hold the worker's write that completes a job (lib/local/faults.ts): the
// supplier has placed the order, the job is still `processing`. That is the moment a fulfillment
// can arrive before the job has recorded its `sourceOrderId`, which is what kept fulfillments are for.

jest.setTimeout(60_000);

type Platform = 'storeplatform_a' | 'storeplatform_b' | 'custom';

interface Setup {
  owner?: OwnerName;
  resellerPlatform?: Platform;
  resellerToken?: string;
  sourcePlatform?: Platform;
  sourceShopDomain?: string;
  sourceSecret?: string;
}

describe('propagation of fulfillments through the local runtime', () => {
  const hmac = (secret: string, raw: string) => createHmac('sha256', secret).update(raw).digest('base64');

  // A window of ten receives, so a reseller platform can be down for a while without the
  // fulfillment's message reaching the DLQ during the test.
  const { service, sim } = serviceForSuite({ maxReceiveCount: 10 });
  afterEach(() => service.runtime.faults.clear());

  /** A reseller store, one source store, and an order of the reseller routed to it. */
  const placeOrder = async (setup: Setup = {}) => {
    const api = service.api(setup.owner ?? 'owner_a');
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api, {
      platform: setup.resellerPlatform ?? 'storeplatform_a',
      webhookSecret: resellerSecret,
      ...(setup.resellerToken ? { accessToken: setup.resellerToken } : {}),
    });
    const sourceSecret = setup.sourceSecret ?? unique('whsec_s');
    const vendorTag = unique('Vendor');
    const source = await createSourceStore(api, reseller.id, {
      platform: setup.sourcePlatform ?? 'storeplatform_a',
      vendorTag,
      webhookSecret: sourceSecret,
      ...(setup.sourceShopDomain ? { shopDomain: setup.sourceShopDomain } : {}),
    });
    const payload = orderPayload([{ vendor: vendorTag, price: '13.00', quantity: 2 }]);
    // A Shopify reseller's order exists on its shop: its fulfillment orders are what a parcel ships.
    if (setup.resellerPlatform === 'storeplatform_b') await sim().placeOrder(reseller.shopDomain, payload);
    const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret: resellerSecret,
      body: payload,
    });
    expect(receipt.status).toBe(200);
    return {
      api,
      reseller,
      resellerSecret,
      source,
      sourceSecret,
      payload,
      jobId: receipt.body.syncJobIds[0] as string,
    };
  };

  /** As placeOrder, and waits until the job has placed the supplier order and recorded it. */
  const completedOrder = async (setup: Setup = {}) => {
    const placed = await placeOrder(setup);
    const job = await jobReaches(placed.api, placed.jobId, 'completed');
    return { ...placed, job };
  };

  const fulfill = (
    shopDomain: string,
    secret: string,
    body: unknown,
    extra: Partial<Parameters<typeof sendWebhook>[2]> = {},
  ) =>
    sendWebhook(service.runtime.apiUrl, '/v1/fulfillments/webhook', {
      shopDomain,
      secret,
      body,
      topic: 'fulfillments/create',
      ...extra,
    });

  const fulfillmentOf = (job: any, sourceFulfillmentId: number | string) =>
    (job.fulfillments as any[]).find((f) => f.sourceFulfillmentId === String(sourceFulfillmentId));

  const fulfillmentReaches = (
    api: ApiClient,
    jobId: string,
    sourceFulfillmentId: number | string,
    status: string,
    timeoutMs?: number,
  ) =>
    eventually(async () => {
      const job = (await api.get(`/v1/sync_jobs/${jobId}`)).body;
      return fulfillmentOf(job, sourceFulfillmentId)?.status === status && job;
    }, timeoutMs);

  /** The fulfillments the simulator holds on a reseller order. */
  const resellerFulfillments = async (shopDomain: string, externalOrderId: string | number) =>
    ((await sim().orders(shopDomain)).find((order) => String(order.id) === String(externalOrderId))?.fulfillments ??
      []) as any[];

  /** The simulator stores a push's input followed by the fields it adds, so the signed bytes can be rebuilt. */
  const withoutSimFields = (stored: Record<string, unknown>, added: string[]) =>
    Object.fromEntries(Object.entries(stored).filter(([field]) => !added.includes(field)));

  const keptItem = async (sourceStoreId: string, sourceOrderId: string, sourceFulfillmentId: number) =>
    (
      await service.doc.send(
        new GetCommand({
          TableName: service.tableName,
          Key: keptFulfillmentKey({ sourceStoreId, sourceOrderId, sourceFulfillmentId: String(sourceFulfillmentId) }),
          ConsistentRead: true,
        }),
      )
    ).Item;

  describe('POST /v1/fulfillments/webhook', () => {
    it('makes one fulfillment on a Shopify reseller when a parcel’s update meets its create in flight', async () => {
      // Shopify takes no key: two messages of one parcel (its create, then its update) must not both create.
      const { api, reseller, source, sourceSecret, payload, job } = await completedOrder({
        resellerPlatform: 'storeplatform_b',
      });
      const [sourceOrder] = await sim().orders(source.shopDomain);
      const gate = service.runtime.faults.inject({ ...entryStatusWrite('delivered'), action: 'hold', times: 1 });
      // One of the two units shipped: a second create would find one left to fulfil.
      const parcel = fulfillmentPayload(sourceOrder.id, {
        line_items: [{ id: sourceOrder.line_items[0].id, quantity: 1 }],
        updated_at: new Date(Date.now() - 1000).toISOString(),
      });
      expect((await fulfill(source.shopDomain, sourceSecret, parcel)).status).toBe(200);
      await gate.reached;
      const updated = {
        ...parcel,
        tracking_number: '1ZNEWER',
        tracking_numbers: ['1ZNEWER'],
        updated_at: new Date().toISOString(),
      };
      const sent = await fulfill(source.shopDomain, sourceSecret, updated, { topic: 'fulfillments/update' });
      expect(sent.status).toBe(200);
      await new Promise((settle) => setTimeout(settle, 3_000));
      gate.release();
      // The update's message, back after the create, applies its tracking to the one fulfillment.
      await eventually(async () => {
        const [made] = await resellerFulfillments(reseller.shopDomain, payload.id);
        return made?.tracking_number === '1ZNEWER';
      });
      await new Promise((settle) => setTimeout(settle, 2_000));
      expect(await resellerFulfillments(reseller.shopDomain, payload.id)).toHaveLength(1);
      expect(fulfillmentOf((await api.get(`/v1/sync_jobs/${job.id}`)).body, parcel.id)).toMatchObject({
        status: 'delivered',
      });
    });

    it.each([
      ['storeplatform_a', 'storeplatform_b'],
      ['storeplatform_b', 'custom'],
      ['custom', 'storeplatform_a'],
    ] as [Platform, Platform][])(
      'syncs an order to a %s source store and carries its tracking back to a %s reseller order',
      async (sourcePlatform, resellerPlatform) => {
        const { api, reseller, resellerSecret, source, sourceSecret, payload, job } = await completedOrder({
          sourcePlatform,
          resellerPlatform,
        });

        // The supplier order exists, at the supplier's price.
        const [sourceOrder] = await sim().orders(source.shopDomain);
        expect(sourceOrder.line_items).toEqual([
          expect.objectContaining({ quantity: 2, price: '10.00', vendor: expect.any(String) }),
        ]);
        // Shopify answers a gid; the job records its number, as webhooks name the order.
        expect(job.sourceOrderId).toBe(String(sourceOrder.id));
        if (sourcePlatform === 'custom') {
          // The push is signed with the source store's webhook secret over the exact bytes sent.
          const push = (await sim().calls()).find(
            (c) => c.shopDomain === source.shopDomain && c.path === '/reseller/orders',
          );
          const order = withoutSimFields(sourceOrder, [
            'id',
            'created_at',
            'updated_at',
            'cancelled_at',
            'cancel_reason',
            'fulfillments',
            'refunds',
            'returns',
          ]);
          order.line_items = sourceOrder.line_items.map((line: Record<string, unknown>) =>
            withoutSimFields(line, ['id', 'fulfilled_quantity', 'current_quantity']),
          );
          const signed = JSON.stringify({ order });
          expect(push.signature).toBe(hmac(sourceSecret, signed));
        }

        // The platform's webhook names the order by its number, also where the API answered a gid.
        const body = fulfillmentPayload(sourceOrder.id);
        const receipt = await fulfill(source.shopDomain, sourceSecret, body);

        expect(receipt.status).toBe(200);
        expect(receipt.body).toEqual({ object: 'webhook_receipt', request_id: expect.stringMatching(/^req_/) });
        const delivered = await fulfillmentReaches(api, job.id, body.id, 'delivered');
        const [onReseller] = await resellerFulfillments(reseller.shopDomain, payload.id);
        expect(await resellerFulfillments(reseller.shopDomain, payload.id)).toHaveLength(1);
        expect(onReseller).toMatchObject({
          tracking_company: 'UPS',
          tracking_number: body.tracking_number,
          tracking_url: body.tracking_url,
          notify_customer: true,
        });
        expect(delivered.fulfillment).toEqual({
          sourceFulfillmentId: String(body.id),
          status: 'delivered',
          trackingCompany: 'UPS',
          trackingNumber: body.tracking_number,
          trackingNumbers: [body.tracking_number],
          trackingUrl: body.tracking_url,
          resellerFulfillmentId: expect.stringContaining(String(onReseller.id)),
          // No lines named: the parcel ships every item of the job (CONTRACT.md §10.2).
          lineItems: [{ resellerLineItemId: '1', quantity: 2 }],
          attempts: 1,
          errorMessage: null,
          // The carrier's progress (CONTRACT §16.2): none reported for this parcel yet.
          shipmentStatus: null,
          firstScanAt: null,
          receivedAt: expect.any(String),
          deliveredAt: expect.any(String),
          updatedAt: expect.any(String),
        });
        expect(delivered.fulfillments).toEqual([delivered.fulfillment]);
        expect(delivered.status).toBe('completed');
        const call = (await sim().calls()).find((c) => c.shopDomain === reseller.shopDomain && c.method === 'POST');
        // Shopify takes no idempotency key: its fulfillment is found again by lookup (PLATFORM-API.md).
        expect(call.idempotencyKey).toBe(resellerPlatform === 'storeplatform_b' ? null : `ful:${source.id}:${body.id}`);
        if (resellerPlatform === 'custom') {
          const signed = JSON.stringify({
            // The parcel ships the job's line: the reseller's line 1, both mugs (CONTRACT.md §10.2).
            fulfillment: {
              line_items: [{ id: 1, quantity: 2 }],
              ...withoutSimFields(onReseller, ['id', 'order_id', 'status', 'created_at', 'updated_at', 'line_items']),
            },
          });
          expect(call.signature).toBe(hmac(resellerSecret, signed));
        }
      },
    );

    it('leaves one fulfillment on the reseller order when the webhook is redelivered, at once or later', async () => {
      const { api, reseller, source, sourceSecret, payload, job } = await completedOrder();
      const body = fulfillmentPayload(job.sourceOrderId);

      const first = await Promise.all([
        fulfill(source.shopDomain, sourceSecret, body),
        fulfill(source.shopDomain, sourceSecret, body),
      ]);
      expect(first.map((r) => r.status)).toEqual([200, 200]);
      const delivered = await fulfillmentReaches(api, job.id, body.id, 'delivered');
      const later = await fulfill(source.shopDomain, sourceSecret, { ...body, id: String(body.id) });
      expect(later.status).toBe(200);
      await new Promise((r) => setTimeout(r, 1500));

      expect(await resellerFulfillments(reseller.shopDomain, payload.id)).toHaveLength(1);
      const after = (await api.get(`/v1/sync_jobs/${job.id}`)).body;
      expect(after.fulfillments).toHaveLength(1);
      expect(after.fulfillment).toMatchObject({
        status: 'delivered',
        resellerFulfillmentId: delivered.fulfillment.resellerFulfillmentId,
      });
    });

    it('keeps every parcel of a split shipment on the job, the latest as `fulfillment`', async () => {
      const { api, reseller, source, sourceSecret, payload, job } = await completedOrder();
      // Two parcels of one mug each: the job's line is of two (CONTRACT.md §10.2).
      const [line] = (await sim().orders(source.shopDomain)).find((o) => String(o.id) === job.sourceOrderId).line_items;
      const oneMug = [{ id: line.id, quantity: 1 }];
      const first = fulfillmentPayload(job.sourceOrderId, { tracking_company: 'UPS', line_items: oneMug });
      const second = fulfillmentPayload(job.sourceOrderId, { tracking_company: 'DHL', line_items: oneMug });

      await fulfill(source.shopDomain, sourceSecret, first);
      await fulfillmentReaches(api, job.id, first.id, 'delivered');
      await fulfill(source.shopDomain, sourceSecret, second);
      const both = await fulfillmentReaches(api, job.id, second.id, 'delivered');

      expect(both.fulfillments.map((f: any) => [f.sourceFulfillmentId, f.trackingCompany])).toEqual([
        [String(first.id), 'UPS'],
        [String(second.id), 'DHL'],
      ]);
      expect(both.fulfillment.sourceFulfillmentId).toBe(String(second.id));
      expect((await resellerFulfillments(reseller.shopDomain, payload.id)).map((f) => f.tracking_company)).toEqual([
        'UPS',
        'DHL',
      ]);
    });

    describe('refusals', () => {
      let order: Awaited<ReturnType<typeof completedOrder>>;
      let otherSecret: string;
      beforeAll(async () => {
        order = await completedOrder();
        otherSecret = unique('whsec_other');
        await createSourceStore(order.api, order.reseller.id, { webhookSecret: otherSecret });
      });

      it.each([
        ['a wrong signature', () => ({ secret: 'not-the-secret' })],
        ["a signature made with another store's secret", () => ({ secret: otherSecret })],
        ['an unknown shop', () => ({ shopDomain: 'nobody-ships.myshopify.com' })],
        ['a missing signature', () => ({ secret: undefined })],
      ])('refuses %s with 401 invalid_signature and changes nothing', async (_, change) => {
        const before = await scanAllButEvents(service.doc, service.tableName);
        const callsBefore = (await sim().calls()).length;

        const res = await fulfill(
          order.source.shopDomain,
          order.sourceSecret,
          fulfillmentPayload(order.job.sourceOrderId),
          change(),
        );
        await new Promise((r) => setTimeout(r, 1000));

        expect(res.status).toBe(401);
        expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_signature' });
        expect(await scanAllButEvents(service.doc, service.tableName)).toEqual(before);
        expect((await sim().calls()).length).toBe(callsBefore);
      });

      it('refuses a topic header that names another topic with 400 validation_failed', async () => {
        const res = await fulfill(
          order.source.shopDomain,
          order.sourceSecret,
          fulfillmentPayload(order.job.sourceOrderId),
          { topic: 'orders/create' },
        );
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('validation_failed');
      });

      it('refuses a signed payload without order_id with 400 naming the field', async () => {
        const res = await fulfill(order.source.shopDomain, order.sourceSecret, { id: 1, tracking_number: 'x' });
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'validation_failed', param: 'order_id' });
      });
    });

    it('gives two resellers sharing one supplier shop each only their own order’s tracking', async () => {
      const sharedShop = `${unique('shared-supplier')}.myshopify.com`;
      const sharedSecret = unique('whsec_shared');
      const a = await completedOrder({ owner: 'owner_a', sourceShopDomain: sharedShop, sourceSecret: sharedSecret });
      const b = await completedOrder({ owner: 'owner_b', sourceShopDomain: sharedShop, sourceSecret: sharedSecret });
      expect(a.job.sourceOrderId).not.toBe(b.job.sourceOrderId);
      expect(await sim().orders(sharedShop)).toHaveLength(2);

      const forA = fulfillmentPayload(a.job.sourceOrderId, { tracking_company: 'UPS' });
      const forB = fulfillmentPayload(b.job.sourceOrderId, { tracking_company: 'FedEx' });
      expect((await fulfill(sharedShop, sharedSecret, forA)).status).toBe(200);
      expect((await fulfill(sharedShop, sharedSecret, forB)).status).toBe(200);

      const jobA = await fulfillmentReaches(a.api, a.job.id, forA.id, 'delivered');
      const jobB = await fulfillmentReaches(b.api, b.job.id, forB.id, 'delivered');
      expect(jobA.fulfillments.map((f: any) => f.trackingNumber)).toEqual([forA.tracking_number]);
      expect(jobB.fulfillments.map((f: any) => f.trackingNumber)).toEqual([forB.tracking_number]);
      expect((await resellerFulfillments(a.reseller.shopDomain, a.payload.id)).map((f) => f.tracking_number)).toEqual([
        forA.tracking_number,
      ]);
      expect((await resellerFulfillments(b.reseller.shopDomain, b.payload.id)).map((f) => f.tracking_number)).toEqual([
        forB.tracking_number,
      ]);
      // Neither store kept the other's fulfillment.
      expect(await keptItem(b.source.id, a.job.sourceOrderId, forA.id)).toBeUndefined();
      expect(await keptItem(a.source.id, b.job.sourceOrderId, forB.id)).toBeUndefined();

      // An order neither of them placed (the supplier's own customer) is kept for both, for a week.
      const foreign = fulfillmentPayload(99_999_001);
      expect((await fulfill(sharedShop, sharedSecret, foreign)).status).toBe(200);
      const kept = await Promise.all([
        keptItem(a.source.id, '99999001', foreign.id),
        keptItem(b.source.id, '99999001', foreign.id),
      ]);
      const week = Math.floor(Date.now() / 1000) + 7 * 24 * 3600;
      for (const item of kept)
        expect(item).toMatchObject({ sourceFulfillmentId: String(foreign.id), expiresAt: expect.any(Number) });
      for (const item of kept) expect(Math.abs(item!.expiresAt - week)).toBeLessThan(120);
    });

    it('reaches the reseller when the fulfillment arrives before its job has recorded sourceOrderId', async () => {
      // Hold every completion of the job until the fulfillment has been answered: the supplier has
      // the order (the platform call returned) but the job is still `processing`.
      const gate = service.runtime.faults.inject({ ...jobStatusWrite('completed'), action: 'hold' });
      const { api, reseller, source, sourceSecret, payload, jobId } = await placeOrder();
      await eventually(async () => gate.hits.some((input: any) => input.Key.PK === `SJ#${jobId}`));
      const [sourceOrder] = await sim().orders(source.shopDomain);
      const body = fulfillmentPayload(sourceOrder.id);

      const receipt = await fulfill(source.shopDomain, sourceSecret, body);

      expect(receipt.status).toBe(200);
      const waiting = (await api.get(`/v1/sync_jobs/${jobId}`)).body;
      expect(waiting).toMatchObject({ status: 'processing', sourceOrderId: null, fulfillment: null, fulfillments: [] });
      expect(await keptItem(source.id, String(sourceOrder.id), body.id)).toMatchObject({
        tracking: expect.objectContaining({ number: body.tracking_number }),
      });

      gate.release();
      const delivered = await fulfillmentReaches(api, jobId, body.id, 'delivered');

      expect(delivered.status).toBe('completed');
      expect((await resellerFulfillments(reseller.shopDomain, payload.id)).map((f) => f.tracking_number)).toEqual([
        body.tracking_number,
      ]);
      expect(await keptItem(source.id, String(sourceOrder.id), body.id)).toBeUndefined();
    });
  });

  describe('a fulfillment kept just after its job completed', () => {
    it('reaches the reseller through the delayed recheck', async () => {
      // The race the recheck exists for: the job completed and read its (then empty) kept
      // fulfillments, and only afterwards did the webhook, not yet seeing the job in GSI2, keep one.
      const { api, reseller, source, payload, job } = await completedOrder();
      const body = fulfillmentPayload(job.sourceOrderId);
      const tracking = {
        company: 'UPS',
        number: body.tracking_number,
        numbers: body.tracking_numbers,
        url: body.tracking_url,
        urls: body.tracking_urls,
      };
      await service.doc.send(
        new PutCommand({
          TableName: service.tableName,
          Item: {
            PK: `FULORDER#${source.id}#${job.sourceOrderId}`,
            SK: `KEPT#${body.id}`,
            sourceStoreId: source.id,
            sourceOrderId: job.sourceOrderId,
            sourceFulfillmentId: String(body.id),
            tracking,
            receivedAt: new Date().toISOString(),
            expiresAt: Math.floor(Date.now() / 1000) + 3600,
          },
        }),
      );
      const { sqs } = await import('../../shared/aws/batch.js');
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: service.runtime.queues.fulfillment.url,
          MessageBody: JSON.stringify({
            recheck: {
              sourceStoreId: source.id,
              sourceOrderId: job.sourceOrderId,
              sourceFulfillmentId: String(body.id),
            },
          }),
        }),
      );

      await fulfillmentReaches(api, job.id, body.id, 'delivered');

      expect((await resellerFulfillments(reseller.shopDomain, payload.id)).map((f) => f.tracking_number)).toEqual([
        body.tracking_number,
      ]);
      expect(await keptItem(source.id, job.sourceOrderId, body.id)).toBeUndefined();
    });
  });

  describe('when the reseller platform fails', () => {
    it('still delivers after the reseller platform answered 500 for a while', async () => {
      const { api, reseller, source, sourceSecret, payload, job } = await completedOrder({
        resellerToken: 'tok_fail500',
      });
      const body = fulfillmentPayload(job.sourceOrderId);

      await fulfill(source.shopDomain, sourceSecret, body);
      const failed = await fulfillmentReaches(api, job.id, body.id, 'failed');
      expect(failed.fulfillment.errorMessage).toMatch(/500/);
      expect(failed.fulfillment.errorMessage).not.toMatch(/tok_fail500/);
      // The reseller's platform recovers (here: the store now holds a token the simulator accepts).
      await replaceAccessToken(service, { kind: 'reseller', id: reseller.id }, 'tok_recovered');

      const delivered = await fulfillmentReaches(api, job.id, body.id, 'delivered', 30_000);

      expect(delivered.fulfillment.attempts).toBeGreaterThanOrEqual(2);
      expect(delivered.fulfillment.errorMessage).toBeNull();
      expect(await resellerFulfillments(reseller.shopDomain, payload.id)).toHaveLength(1);
      const statuses = (await sim().calls()).filter((c) => c.shopDomain === reseller.shopDomain).map((c) => c.status);
      expect(statuses.at(-1)).toBe(201);
      expect(statuses.slice(0, -1).every((s) => s === 500)).toBe(true);
    });

    it('marks the fulfillment dead at once, with the reason, when the reseller platform refuses it (401)', async () => {
      const { api, source, sourceSecret, job } = await completedOrder({ resellerToken: 'tok_fail401' });
      const body = fulfillmentPayload(job.sourceOrderId);

      await fulfill(source.shopDomain, sourceSecret, body);
      const dead = await fulfillmentReaches(api, job.id, body.id, 'dead');

      expect(dead.fulfillment).toMatchObject({
        attempts: 1,
        resellerFulfillmentId: null,
        deliveredAt: null,
        errorMessage: expect.stringMatching(/401/),
      });
      // The sync job itself completed; its audit trail has no entry for the fulfillment.
      expect(dead.status).toBe('completed');
      expect((await api.get(`/v1/audit_log?resource_id=${job.id}`)).body.data).toEqual([]);
    });
  });
});
