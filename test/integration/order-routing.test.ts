import {
  createResellerStore,
  createSourceStore,
  jobStatusWrite,
  replaceAccessToken,
  scanAll,
  serviceForSuite,
} from './support.js';
import { orderPayload, postSigned, sendWebhook, simulator, jobReaches as waitForJob } from './webhooks.js';

jest.setTimeout(60_000);
describe('order routing through the local runtime', () => {
  const simCalls = async () => simulator(service.runtime.simulator!.url).calls();
  const simOrders = (shopDomain: string) => simulator(service.runtime.simulator!.url).orders(shopDomain);
  /** The table's items but events, which the stream's recorder writes a moment after earlier tests' writes. */
  const itemsButEvents = async () =>
    (await scanAll(service.doc, service.tableName)).filter((item) => !String(item.PK).startsWith('EVT#')).length;
  const jobReaches = (id: string, status: string, timeoutMs?: number) => waitForJob(api(), id, status, timeoutMs);

  let reseller: any;
  const resellerSecret = 'whsec_reseller_routing';

  const { service, api } = serviceForSuite();
  beforeAll(async () => {
    reseller = await createResellerStore(api(), {
      webhookSecret: resellerSecret,
      shopDomain: 'routing-reseller.myshopify.com',
    });
  }, 90_000);

  const order = (body: unknown, overrides: Partial<Parameters<typeof sendWebhook>[2]> = {}) =>
    sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret: resellerSecret,
      body,
      ...overrides,
    });

  describe('POST /v1/orders/webhook', () => {
    it('routes an order with items of two vendors to both suppliers, at their prices, exactly once each', async () => {
      const acme = await createSourceStore(api(), reseller.id, {
        vendorTag: 'Acme',
        pricingMode: 'percentage',
        pricingConfig: { type: 'percentage', value: 30 },
      });
      const bolt = await createSourceStore(api(), reseller.id, {
        vendorTag: 'Bolt',
        pricingMode: 'field_rules',
        pricingConfig: { type: 'field_rules', productCost: 3, shippingCost: 2 },
      });
      const payload = orderPayload([
        { vendor: 'Acme', price: '13.00', quantity: 2 },
        { vendor: 'Bolt', price: '13.00' },
        { vendor: 'Nobody', price: '1.00' },
      ]);

      const receipt = await order(payload);

      expect(receipt.status).toBe(200);
      expect(receipt.body.object).toBe('webhook_receipt');
      expect(receipt.body.syncJobIds).toHaveLength(2);
      const jobs = await Promise.all(receipt.body.syncJobIds.map((id: string) => jobReaches(id, 'completed')));
      for (const j of jobs) {
        // Exactly one supplier order each (below) is the guarantee; a slow first call may add an attempt.
        expect(j.attempts).toBeGreaterThanOrEqual(1);
        expect(j.sourceOrderId).toEqual(expect.any(String));
        expect(j.completedAt).toEqual(expect.any(String));
        expect(j.externalOrderId).toBe(String(payload.id));
      }
      const [acmeOrders, boltOrders] = await Promise.all([simOrders(acme.shopDomain), simOrders(bolt.shopDomain)]);
      expect(acmeOrders).toHaveLength(1);
      expect(boltOrders).toHaveLength(1);
      expect(acmeOrders[0].line_items).toEqual([
        expect.objectContaining({ sku: 'SKU-1', quantity: 2, price: '10.00', vendor: 'Acme' }),
      ]);
      expect(acmeOrders[0].shipping_lines).toEqual([{ title: 'Standard', price: '5.00' }]);
      const acmeJob = jobs.find((j) => j.sourceStoreId === acme.id);
      expect(acmeOrders[0].source_identifier).toBe(`${reseller.shopDomain}:${payload.id}:${acmeJob.id}`);
      expect(boltOrders[0].line_items).toEqual([expect.objectContaining({ sku: 'SKU-2', price: '10.00' })]);
      expect(boltOrders[0].shipping_lines).toEqual([{ title: 'Standard', price: '3.00' }]);
      const keys = (await simCalls()).filter((c) => c.method === 'POST').map((c) => c.idempotencyKey);
      expect(keys).toEqual(expect.arrayContaining(receipt.body.syncJobIds));
    });

    it('creates nothing for a redelivered order and answers the same ids (numeric, string: one order)', async () => {
      const supplier = await createSourceStore(api(), reseller.id, { vendorTag: 'Redelivered' });
      const payload = orderPayload([{ vendor: 'Redelivered', price: '20.00' }]);
      const first = await order(payload);
      await jobReaches(first.body.syncJobIds[0], 'completed');
      const itemsBefore = await itemsButEvents();

      const again = await order(payload);
      const asString = await order({ ...payload, id: String(payload.id) });

      expect(again.body.syncJobIds).toEqual(first.body.syncJobIds);
      expect(asString.body.syncJobIds).toEqual(first.body.syncJobIds);
      expect(await itemsButEvents()).toBe(itemsBefore);
      await new Promise((r) => setTimeout(r, 1500));
      expect(await simOrders(supplier.shopDomain)).toHaveLength(1);
    });

    it('answers 200 with no jobs for an order with no matching items', async () => {
      const receipt = await order(orderPayload([{ vendor: 'acme', price: '1.00' }])); // tags match case-sensitively
      expect(receipt.status).toBe(200);
      expect(receipt.body.syncJobIds).toEqual([]);
    });

    it.each([
      [
        'a tampered body',
        (raw: string) => ({ rawBody: raw.replace('13.00', '1.00'), signature: undefined as string | undefined }),
      ],
      ['a wrong secret', () => ({ secret: 'not-the-secret' })],
      ['a missing signature', () => ({ secret: undefined })],
      ['an unknown shop', () => ({ shopDomain: 'nobody.myshopify.com' })],
      ['a missing shop domain header', () => ({ shopDomain: undefined })],
    ])('refuses %s with 401 invalid_signature and writes nothing', async (_, change) => {
      await createSourceStore(api(), reseller.id, { vendorTag: `Tamper${Math.random()}` });
      const payload = orderPayload([{ vendor: 'Acme', price: '13.00' }]);
      const raw = JSON.stringify(payload);
      const { createHmac } = await import('node:crypto');
      const signed = createHmac('sha256', resellerSecret).update(raw).digest('base64');
      const before = await itemsButEvents();
      const overrides = change(raw) as Record<string, unknown>;
      const res = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
        shopDomain: reseller.shopDomain,
        secret: resellerSecret,
        body: payload,
        ...('rawBody' in overrides ? { signature: signed } : {}),
        ...overrides,
        ...('rawBody' in overrides ? { signature: signed } : {}),
      });
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_signature' });
      expect(await itemsButEvents()).toBe(before);
    });

    it('answers 200 with no jobs for an order of a soft-deleted reseller store, which still verifies', async () => {
      const gone = await createResellerStore(api(), { webhookSecret: 'whsec_gone' });
      await createSourceStore(api(), gone.id, { vendorTag: 'Acme' });
      expect((await api().delete(`/v1/reseller_stores/${gone.id}`)).status).toBe(204);
      const before = await itemsButEvents();

      const res = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
        shopDomain: gone.shopDomain,
        secret: 'whsec_gone',
        body: orderPayload([{ vendor: 'Acme', price: '13.00' }]),
      });

      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'webhook_receipt', syncJobIds: [] });
      expect(await itemsButEvents()).toBe(before);
    });

    it('refuses a signed body that is not sent as JSON with 415', async () => {
      const raw = JSON.stringify(orderPayload([{ vendor: 'Acme', price: '13.00' }]));
      const res = await postSigned(service.runtime.apiUrl, '/v1/orders/webhook', raw, {
        shopDomain: reseller.shopDomain,
        secret: resellerSecret,
        headers: { 'content-type': 'text/plain' },
      });
      expect(res.status).toBe(415);
      expect(((await res.json()) as any).error.code).toBe('unsupported_media_type');
    });

    it('refuses a topic header that names another topic with 400 validation_failed', async () => {
      const res = await order(orderPayload([{ vendor: 'Acme', price: '1.00' }]), { topic: 'fulfillments/create' });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    });

    it('refuses a signed payload without line items with 400 naming the field', async () => {
      const res = await order({ id: 1, currency: 'USD' });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_failed', param: 'line_items' });
    });
  });

  describe('failures, dead letters and retries', () => {
    it('ends dead after three receives when the supplier answers 500, with an audit entry', async () => {
      await createSourceStore(api(), reseller.id, { vendorTag: 'Down', accessToken: 'tok_fail500' });
      const receipt = await order(orderPayload([{ vendor: 'Down', price: '9.99' }]));
      const id = receipt.body.syncJobIds[0];

      const dead = await jobReaches(id, 'dead', 30_000);

      expect(dead.attempts).toBe(3);
      expect(dead.deadAt).toEqual(expect.any(String));
      expect(dead.errorMessage).toMatch(/500/);
      expect(dead.errorMessage).not.toMatch(/tok_fail500/);
      const audit = (await api().get(`/v1/audit_log?resource_id=${id}`)).body.data;
      expect(audit).toEqual([
        expect.objectContaining({
          action: 'sync_job.dead',
          resourceType: 'sync_job',
          resourceId: id,
          actorId: 'system',
        }),
      ]);
    });

    it('completes a job whose supplier fails once (flaky)', async () => {
      const flaky = await createSourceStore(api(), reseller.id, { vendorTag: 'Flaky', accessToken: 'tok_flaky' });
      const receipt = await order(orderPayload([{ vendor: 'Flaky', price: '4.00' }]));
      const done = await jobReaches(receipt.body.syncJobIds[0], 'completed', 30_000);
      expect(done.attempts).toBe(2);
      expect(done.errorMessage).toBeNull();
      expect(await simOrders(flaky.shopDomain)).toHaveLength(1);
    });

    it('makes a job dead at once when the supplier refuses it (422), with the reason', async () => {
      await createSourceStore(api(), reseller.id, { vendorTag: 'Refuses', accessToken: 'tok_fail422' });
      const receipt = await order(orderPayload([{ vendor: 'Refuses', price: '4.00' }]));
      const dead = await jobReaches(receipt.body.syncJobIds[0], 'dead');
      expect(dead.attempts).toBe(1);
      expect(dead.errorMessage).toMatch(/422/);
    });

    it('retries a dead job by API: it completes, and exactly one sync_job.retried entry is written', async () => {
      const store = await createSourceStore(api(), reseller.id, { vendorTag: 'Healed', accessToken: 'tok_fail422' });
      const receipt = await order(orderPayload([{ vendor: 'Healed', price: '4.00' }]));
      const id = receipt.body.syncJobIds[0];
      const dead = await jobReaches(id, 'dead');
      // The supplier fixes its side: the same store now holds a token the platform accepts.
      await replaceAccessToken(service, { kind: 'source', id: store.id }, 'tok_now_fine');

      const retried = await api().post(`/v1/sync_jobs/${id}/retry`);

      expect(retried.status).toBe(200);
      expect(retried.body).toMatchObject({
        id,
        status: 'pending',
        errorMessage: null,
        deadAt: null,
        failedAt: null,
        attempts: dead.attempts,
      });
      const done = await jobReaches(id, 'completed');
      expect(done.attempts).toBeGreaterThan(dead.attempts);
      const entries = (await api().get(`/v1/audit_log?action=sync_job.retried&resource_id=${id}`)).body.data;
      expect(entries).toEqual([
        expect.objectContaining({
          object: 'audit_log_entry',
          action: 'sync_job.retried',
          resourceId: id,
          resellerStoreId: reseller.id,
          resourceType: 'sync_job',
          metadata: { previousStatus: 'dead' },
          actor: { type: 'api_key', id: expect.stringMatching(/^key_/) },
        }),
      ]);
    });

    it('answers 400 sync_job_not_retryable for a completed job, and 404 for an unknown or foreign one', async () => {
      await createSourceStore(api(), reseller.id, { vendorTag: 'Fine' });
      const receipt = await order(orderPayload([{ vendor: 'Fine', price: '4.00' }]));
      const id = receipt.body.syncJobIds[0];
      await jobReaches(id, 'completed');

      const res = await api().post(`/v1/sync_jobs/${id}/retry`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'sync_job_not_retryable' });
      expect((await api().post('/v1/sync_jobs/sj_unknown/retry')).status).toBe(404);
      expect((await service.api('owner_b').post(`/v1/sync_jobs/${id}/retry`)).status).toBe(404);
      expect((await service.api('owner_b').get(`/v1/sync_jobs/${id}`)).status).toBe(404);
    });

    it('gives one 200 and one 400 for two concurrent retries of a dead job', async () => {
      await createSourceStore(api(), reseller.id, { vendorTag: 'Twice', accessToken: 'tok_fail401' });
      const receipt = await order(orderPayload([{ vendor: 'Twice', price: '4.00' }]));
      const id = receipt.body.syncJobIds[0];
      await jobReaches(id, 'dead');
      // The worker's claim waits until both have answered: otherwise a retry that starts a cold
      // environment late could find the job already dead again (401 kills it at once) and retry it too.
      const claim = service.runtime.faults.inject({ ...jobStatusWrite('processing', id), action: 'hold' });

      const results = await Promise.all([
        api().post(`/v1/sync_jobs/${id}/retry`),
        api().post(`/v1/sync_jobs/${id}/retry`),
      ]);
      claim.release();

      expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
      const entries = (await api().get(`/v1/audit_log?action=sync_job.retried&resource_id=${id}`)).body.data;
      expect(entries).toHaveLength(1);
    });
  });
});
