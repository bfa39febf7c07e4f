import { readFileSync } from 'node:fs';
import { main as jobsCli } from '../../bin/jobs.js';
import {
  createResellerStore,
  createSourceStore,
  pollStores,
  scanAllButEvents,
  startService,
  TEST_KEYS,
  type TestService,
  unique,
} from './support.js';
import { eventually, jobReaches, orderPayload, sendWebhook, simulator } from './webhooks.js';

/**
 * When an order may go to its suppliers (CONTRACT.md §11), through the local runtime against DynamoDB
 * Local, the SQS emulator and the platform simulator: the routing policy on reseller stores, held
 * jobs, the release after a delay with one re-read of the order, the platform's word lifting a hold,
 * cancellations of held jobs, and operators' holds and releases. What reached a supplier is read on
 * the simulator (its orders and its call log).
 */

jest.setTimeout(120_000);

/** Past this, a held job gets `attention` `hold_expired` from the reconciler (passed through to the functions). */
const MAX_HOLD_SECONDS = 4;
const fixture = (name: string) => JSON.parse(readFileSync(`${__dirname}/../fixtures/shopify/${name}`, 'utf8'));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('held jobs through the local runtime', () => {
  let service: TestService;
  const sim = () => simulator(service.runtime.simulator!.url);
  const simUrl = () => service.runtime.simulator!.url;
  const api = () => service.api('owner_a');

  beforeAll(async () => {
    process.env.MAX_HOLD_SECONDS = String(MAX_HOLD_SECONDS);
    service = await startService();
  }, 90_000);
  afterAll(async () => {
    delete process.env.MAX_HOLD_SECONDS;
    await service?.stop();
  });

  /** One poll of a store now, as the poll queue's message would invoke the poller. */
  const poll = (store: { kind: 'reseller' | 'source'; id: string }) => pollStores(service.runtime, store);

  /** A reseller store with the policy given and one supplier. */
  const stores = async (routingPolicy?: Record<string, unknown>) => {
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api(), {
      webhookSecret: resellerSecret,
      ...(routingPolicy ? { routingPolicy } : {}),
    });
    const vendorTag = unique('Vendor');
    const source = await createSourceStore(api(), reseller.id, { vendorTag });
    return { reseller, resellerSecret, source, vendorTag };
  };

  /** An order on the reseller's shop (the simulator keeps it, as the platform does) and its webhook. */
  const order = async (
    setup: Awaited<ReturnType<typeof stores>>,
    overrides: Record<string, unknown> = {},
    options: { onShop?: boolean; topic?: string } = {},
  ) => {
    const payload = orderPayload([{ vendor: setup.vendorTag, price: '13.00' }], overrides);
    if (options.onShop !== false) await sim().placeOrder(setup.reseller.shopDomain, payload);
    const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: setup.reseller.shopDomain,
      secret: setup.resellerSecret,
      body: payload,
    });
    expect(receipt.status).toBe(200);
    return { payload, jobId: receipt.body.syncJobIds[0] as string };
  };

  const job = async (id: string) => (await api().get(`/v1/sync_jobs/${id}`)).body;
  const supplierCalls = async (shopDomain: string) =>
    (await sim().calls()).filter((call) => call.shopDomain === shopDomain);
  const patchOnShop = async (shopDomain: string, id: number, changes: Record<string, unknown>) => {
    const res = await fetch(`${simUrl()}/_sim/orders/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ shopDomain, ...changes }),
    });
    expect(res.status).toBe(200);
  };

  it('takes a routing policy on POST and PATCH, shows it whole, and refuses a bad value changing nothing', async () => {
    const defaults = await createResellerStore(api());
    expect(defaults.routingPolicy).toEqual({
      holdSeconds: 0,
      payment: 'paid_or_authorized',
      risk: 'off',
      testOrders: 'hold',
    });
    const created = await createResellerStore(api(), { routingPolicy: { holdSeconds: 120, risk: 'hold_cancel' } });
    expect(created.routingPolicy).toEqual({
      holdSeconds: 120,
      payment: 'paid_or_authorized',
      risk: 'hold_cancel',
      testOrders: 'hold',
    });
    const patched = await api().patch(`/v1/reseller_stores/${created.id}`, {
      name: 'Renamed',
      routingPolicy: { payment: 'paid' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'Renamed',
      routingPolicy: { holdSeconds: 120, payment: 'paid', risk: 'hold_cancel', testOrders: 'hold' },
    });

    const before = await scanAllButEvents(service.doc, service.tableName);
    for (const [routingPolicy, param] of [
      [{ holdSeconds: -1 }, 'routingPolicy.holdSeconds'],
      [{ holdSeconds: 604_801 }, 'routingPolicy.holdSeconds'],
      [{ holdSeconds: 1.5 }, 'routingPolicy.holdSeconds'],
      [{ payment: 'sometimes' }, 'routingPolicy.payment'],
      [{ risk: 'on' }, 'routingPolicy.risk'],
      [{ testOrders: 'maybe' }, 'routingPolicy.testOrders'],
      [{ colour: 'blue' }, 'routingPolicy.colour'],
    ] as const) {
      const res = await api().patch(`/v1/reseller_stores/${created.id}`, { routingPolicy });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_failed', param });
      const post = await api().post('/v1/reseller_stores', { ...createBody(), routingPolicy });
      expect(post.status).toBe(400);
      expect(post.body.error).toMatchObject({ code: 'validation_failed', param });
    }
    expect(await scanAllButEvents(service.doc, service.tableName)).toEqual(before);
    expect((await api().get(`/v1/reseller_stores/${created.id}`)).body.routingPolicy.payment).toBe('paid');
  });

  const createBody = () => ({
    name: 'R',
    platform: 'storeplatform_a',
    shopDomain: `${unique('reseller')}.myshopify.com`,
    accessToken: unique('tok'),
    webhookSecret: unique('sec'),
  });

  it('sends a paid order at once, with no read of it and no hold', async () => {
    const setup = await stores();
    const { jobId } = await order(setup, { financial_status: 'paid' });
    const completed = await jobReaches(api(), jobId, 'completed');
    expect(completed.hold).toBeNull();
    const resellerCalls = await supplierCalls(setup.reseller.shopDomain);
    expect(resellerCalls.filter((call) => call.method === 'GET' && call.path.includes('/orders/'))).toEqual([]);
  });

  it('holds a delay, then reads the order again once and places it as it is then (the edited address)', async () => {
    const setup = await stores({ holdSeconds: 3 });
    const { payload, jobId } = await order(setup, { financial_status: 'paid' });
    const held = await job(jobId);
    expect(held).toMatchObject({ status: 'pending', hold: { reasons: ['delay'], since: expect.any(String) } });
    expect(Date.parse(held.hold.until) - Date.parse(held.hold.since)).toBe(3000);
    const listed = (await api().get(`/v1/sync_jobs?held=true&reseller_store_id=${setup.reseller.id}`)).body.data;
    expect(listed.map((j: any) => j.id)).toEqual([jobId]);
    // The shop's order is edited during the delay, with no webhook.
    const address = { name: 'New Name', address1: '9 Elm St', city: 'Y', zip: '2', country_code: 'US' };
    await patchOnShop(setup.reseller.shopDomain, payload.id, { shipping_address: address });
    await sleep(1000);
    expect(await supplierCalls(setup.source.shopDomain)).toEqual([]);

    const completed = await jobReaches(api(), jobId, 'completed', 30_000);
    expect(completed.hold).toBeNull();
    const [placed] = await sim().orders(setup.source.shopDomain);
    expect(placed.shipping_address).toMatchObject({ name: 'New Name', address1: '9 Elm St' });
    const reads = (await supplierCalls(setup.reseller.shopDomain)).filter(
      (call) => call.method === 'GET' && call.path.endsWith(`/orders/${payload.id}.json`),
    );
    expect(reads).toHaveLength(1);
    const after = (await api().get(`/v1/sync_jobs?held=true&reseller_store_id=${setup.reseller.id}`)).body.data;
    expect(after).toEqual([]);
  });

  it('ends the jobs `cancelled` (order_deleted) when the shop no longer has the order after the delay', async () => {
    const setup = await stores({ holdSeconds: 1 });
    const { jobId } = await order(setup, {}, { onShop: false });
    const cancelled = await jobReaches(api(), jobId, 'cancelled', 30_000);
    expect(cancelled.cancellation).toMatchObject({ reason: 'order_deleted', status: 'done' });
    expect(await supplierCalls(setup.source.shopDomain)).toEqual([]);
  });

  it('holds an order the platform says to investigate (hold_investigate), and places it once released', async () => {
    const setup = await stores({ holdSeconds: 1, risk: 'hold_investigate' });
    const { jobId } = await order(setup, { financial_status: 'paid', risk_recommendation: 'investigate' });
    const riskHeld = await eventually(async () => {
      const current = await job(jobId);
      return current.hold?.reasons.join() === 'risk' && current;
    }, 30_000);
    expect(riskHeld).toMatchObject({ status: 'pending', hold: { reasons: ['risk'], until: null } });
    await sleep(1000);
    expect(await supplierCalls(setup.source.shopDomain)).toEqual([]);

    const key = unique('idem');
    const released = await api().post(`/v1/sync_jobs/${jobId}/release`, undefined, {
      headers: { 'idempotency-key': key },
    });
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ id: jobId, status: 'pending', hold: null });
    const replayed = await api().post(`/v1/sync_jobs/${jobId}/release`, undefined, {
      headers: { 'idempotency-key': key },
    });
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.id).toBe(jobId);
    await jobReaches(api(), jobId, 'completed');
    expect(await sim().orders(setup.source.shopDomain)).toHaveLength(1);
    const audit = (await api().get(`/v1/audit_log?resource_id=${jobId}`)).body.data;
    expect(audit.map((entry: any) => [entry.action, entry.metadata.reasons])).toEqual([
      ['sync_job.released', ['risk']],
    ]);
    // Released and placed: neither a second release nor a hold is allowed.
    const again = await api().post(`/v1/sync_jobs/${jobId}/release`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('invalid_state');
    const hold = await api().post(`/v1/sync_jobs/${jobId}/hold`);
    expect(hold.status).toBe(409);
    expect(hold.body.error.code).toBe('invalid_state');
  });

  it('holds an unpaid order, adds an operator’s hold, and places it once paid and released', async () => {
    const setup = await stores();
    const { payload, jobId } = await order(setup, { financial_status: 'pending' });
    expect(await job(jobId)).toMatchObject({ status: 'pending', hold: { reasons: ['payment'], until: null } });

    const key = unique('idem');
    const held = await api().post(
      `/v1/sync_jobs/${jobId}/hold`,
      { note: 'call the customer' },
      { headers: { 'idempotency-key': key } },
    );
    expect(held.status).toBe(200);
    expect(held.body.hold.reasons).toEqual(['payment', 'manual']);
    const replayed = await api().post(
      `/v1/sync_jobs/${jobId}/hold`,
      { note: 'call the customer' },
      { headers: { 'idempotency-key': key } },
    );
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.hold.reasons).toEqual(['payment', 'manual']);

    // The platform says paid: the payment hold lifts, the operator's stays.
    await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: setup.reseller.shopDomain,
      secret: setup.resellerSecret,
      body: { ...payload, financial_status: 'paid', updated_at: new Date().toISOString() },
      topic: 'orders/updated',
    });
    const manualOnly = await eventually(async () => {
      const current = await job(jobId);
      return current.hold?.reasons.join() === 'manual' && current;
    });
    expect(manualOnly.status).toBe('pending');
    expect(await supplierCalls(setup.source.shopDomain)).toEqual([]);

    expect((await api().post(`/v1/sync_jobs/${jobId}/release`)).status).toBe(200);
    await jobReaches(api(), jobId, 'completed');
    const audit = (await api().get(`/v1/audit_log?resource_id=${jobId}`)).body.data;
    expect(audit.map((entry: any) => entry.action)).toEqual(['sync_job.released', 'sync_job.held']);
    expect(audit[1].metadata).toMatchObject({ reasons: ['payment', 'manual'], note: 'call the customer' });
  });

  it('places a held order once orders/updated says it is paid', async () => {
    const setup = await stores();
    const { payload, jobId } = await order(setup, { financial_status: 'pending' });
    expect((await job(jobId)).hold.reasons).toEqual(['payment']);
    const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: setup.reseller.shopDomain,
      secret: setup.resellerSecret,
      body: { ...payload, financial_status: 'paid', updated_at: new Date().toISOString() },
      topic: 'orders/updated',
    });
    expect(receipt.status).toBe(200);
    const completed = await jobReaches(api(), jobId, 'completed');
    expect(completed.hold).toBeNull();
  });

  it('keeps an authorized order held under `paid`, and sends it under the default', async () => {
    const strict = await stores({ payment: 'paid' });
    const waiting = await order(strict, { financial_status: 'authorized' });
    const lenient = await stores();
    const going = await order(lenient, { financial_status: 'authorized' });
    await jobReaches(api(), going.jobId, 'completed');
    expect(await job(waiting.jobId)).toMatchObject({ status: 'pending', hold: { reasons: ['payment'] } });
    expect(await supplierCalls(strict.source.shopDomain)).toEqual([]);
  });

  it('cancels a held job on orders/cancelled with no supplier call', async () => {
    const setup = await stores();
    const { payload, jobId } = await order(setup, { financial_status: 'pending' });
    expect((await job(jobId)).hold.reasons).toEqual(['payment']);
    await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: setup.reseller.shopDomain,
      secret: setup.resellerSecret,
      body: { id: payload.id, cancel_reason: 'customer', cancelled_at: new Date().toISOString() },
      topic: 'orders/cancelled',
    });
    const cancelled = await jobReaches(api(), jobId, 'cancelled');
    expect(cancelled.hold).toBeNull();
    await sleep(1000);
    expect(await supplierCalls(setup.source.shopDomain)).toEqual([]);
    expect((await api().post(`/v1/sync_jobs/${jobId}/release`)).status).toBe(409);
  });

  it('holds a test order, and never routes one under `testOrders: skip`', async () => {
    const holding = await stores();
    const held = await order(holding, { test: true });
    expect(await job(held.jobId)).toMatchObject({ status: 'pending', hold: { reasons: ['test_order'] } });
    const skipping = await stores({ testOrders: 'skip' });
    const payload = orderPayload([{ vendor: skipping.vendorTag, price: '13.00' }], { test: true });
    const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: skipping.reseller.shopDomain,
      secret: skipping.resellerSecret,
      body: payload,
    });
    expect(receipt.body.syncJobIds).toEqual([]);
    const recorded = (await api().get(`/v1/reseller_stores/${skipping.reseller.id}/orders/${payload.id}`)).body;
    expect(recorded.unroutedLineItems.map((line: any) => line.reason)).toEqual(['test_order']);
  });

  it('places a held order once a poll sees it paid, its webhook lost', async () => {
    const setup = await stores();
    const { payload, jobId } = await order(setup, { financial_status: 'pending' });
    expect((await job(jobId)).hold.reasons).toEqual(['payment']);
    // The shop takes the payment; its orders/updated never arrives.
    await patchOnShop(setup.reseller.shopDomain, payload.id, { financial_status: 'paid' });
    await poll({ kind: 'reseller', id: setup.reseller.id });
    const completed = await jobReaches(api(), jobId, 'completed');
    expect(completed.hold).toBeNull();
    expect(await sim().orders(setup.source.shopDomain)).toHaveLength(1);
  });

  it('routes or holds Shopify’s own payloads as §11 says, reading a Shopify order again once per order', async () => {
    const secret = unique('whsec_shopify');
    const reseller = await createResellerStore(api(), {
      platform: 'storeplatform_b',
      webhookSecret: secret,
      routingPolicy: { holdSeconds: 1, payment: 'paid' },
    });
    const suppliers = await Promise.all(
      ['VCR', 'OMC'].map((vendorTag) => createSourceStore(api(), reseller.id, { vendorTag })),
    );
    // Shopify's fixture: `financial_status: "authorized"`, as Shopify sends it.
    const { order: shopifyOrder } = fixture('order_with_properties.json');
    const placed = { ...shopifyOrder, id: 8_100_000 + Math.floor(Math.random() * 100_000) };
    await sim().placeOrder(reseller.shopDomain, placed);
    const send = (body: unknown, topic: string) =>
      sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
        shopDomain: reseller.shopDomain,
        secret,
        body,
        topic,
        spelling: 'shopify',
      });
    const receipt = await send(placed, 'orders/create');
    const jobIds: string[] = receipt.body.syncJobIds;
    expect(jobIds).toHaveLength(2);
    for (const id of jobIds) expect((await job(id)).hold.reasons).toEqual(['delay', 'payment']);
    // The delay ends: Shopify is asked once for the order (its two jobs), which is still only authorized.
    const paymentOnly = await eventually(async () => {
      const jobs = await Promise.all(jobIds.map(job));
      return jobs.every((j) => j.hold?.reasons.join() === 'payment') && jobs;
    }, 30_000);
    expect(paymentOnly.map((j: any) => j.hold.until)).toEqual([null, null]);
    const reads = (await supplierCalls(reseller.shopDomain)).filter((call) => call.path.endsWith('graphql.json'));
    expect(reads).toHaveLength(1);
    for (const supplier of suppliers) expect(await supplierCalls(supplier.shopDomain)).toEqual([]);

    // Shopify says paid: both jobs go.
    await patchOnShop(reseller.shopDomain, placed.id, { financial_status: 'paid' });
    await send({ ...placed, financial_status: 'paid', updated_at: new Date().toISOString() }, 'orders/updated');
    await Promise.all(jobIds.map((id) => jobReaches(api(), id, 'completed')));
    for (const supplier of suppliers) expect(await sim().orders(supplier.shopDomain)).toHaveLength(1);
  });

  it('gives a job held past MAX_HOLD_SECONDS `attention` hold_expired, and keeps it held', async () => {
    const setup = await stores();
    const { jobId } = await order(setup, { financial_status: 'pending' });
    await sleep(MAX_HOLD_SECONDS * 1000 + 500);
    await service.runtime.invoke('SyncReconciler', {});
    const expired = await job(jobId);
    expect(expired).toMatchObject({
      status: 'pending',
      hold: { reasons: ['payment'] },
      attention: { reason: 'hold_expired' },
    });
    const audit = (await api().get(`/v1/audit_log?resource_id=${jobId}`)).body.data;
    expect(audit.map((entry: any) => [entry.action, entry.metadata.reason])).toEqual([
      ['sync_job.attention_required', 'hold_expired'],
    ]);
    // Still held: the reconciler neither re-sent nor ended it.
    expect(await supplierCalls(setup.source.shopDomain)).toEqual([]);
    const released = await api().post(`/v1/sync_jobs/${jobId}/release`);
    expect(released.body).toMatchObject({ hold: null, attention: null });
    await jobReaches(api(), jobId, 'completed');
  });

  it('lists held jobs, holds and releases them with `npm run jobs`', async () => {
    const cli = async (...argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const args = [...argv, '--url', service.runtime.apiUrl, '--key', TEST_KEYS.owner_a];
      const code = await jobsCli(args, { out: (l) => out.push(l), err: (l) => err.push(l), env: {} });
      return { code, out: out.join('\n'), err: err.join('\n') };
    };
    const setup = await stores();
    const { jobId } = await order(setup, { financial_status: 'pending' });
    const listed = await cli('list', '--held', '--store', setup.reseller.id);
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(new RegExp(`${jobId}\\s+pending.*payment`));
    const held = await cli('hold', jobId, '--note', 'fraud check');
    expect(held).toMatchObject({ code: 0, out: `${jobId} is held (payment, manual)` });
    const released = await cli('release', jobId);
    expect(released).toMatchObject({ code: 0, out: `${jobId} is released: it goes to its supplier now` });
    await jobReaches(api(), jobId, 'completed');
    const again = await cli('release', jobId);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/invalid_state \(409\)/);
    expect((await cli('list', '--held', '--store', setup.reseller.id)).out).toBe('no sync jobs');
  });
});
