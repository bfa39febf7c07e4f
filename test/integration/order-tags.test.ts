import { createResellerStore, createSourceStore, startService, type TestService, unique } from './support.js';
import { eventually, jobReaches, orderPayload, sendWebhook, simulator } from './webhooks.js';

jest.setTimeout(90_000);

/**
 * CONTRACT.md §12.5: once a job is placed, the reseller's order gets `routed-<vendorTag>` through its
 * platform, once, however often the job's messages are delivered; the job says `tagged`. The supplier
 * order carries `reseller_order` in its note attributes from its create.
 */
describe("the reseller's order tagged", () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService();
  }, 90_000);
  afterAll(() => service?.stop());
  afterEach(() => service.runtime.faults.clear());

  const api = () => service.api('owner_a');
  const sim = () => simulator(service.runtime.simulator!.url);

  /** A reseller store on `platform`, a supplier, and the reseller's order on the simulator, then its webhook. */
  const placedOrder = async (platform: 'storeplatform_a' | 'storeplatform_b', vendorTag = unique('Acme')) => {
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api(), { platform, webhookSecret: resellerSecret });
    const source = await createSourceStore(api(), reseller.id, { vendorTag });
    const payload = orderPayload([{ vendor: vendorTag, price: '10.00' }], {
      note_attributes: [{ name: 'gift', value: 'yes' }],
    });
    // The reseller's own shop holds the order, as a real one does: the tag is added to it.
    await sim().placeOrder(reseller.shopDomain, payload);
    const sent = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret: resellerSecret,
      body: payload,
    });
    expect(sent.status).toBe(200);
    return { reseller, source, payload, jobId: sent.body.syncJobIds[0] as string, vendorTag };
  };

  const resellerOrder = async (shopDomain: string, id: number) =>
    (await sim().orders(shopDomain)).find((order) => Number(order.id) === id);
  const tagsOf = (order: { tags?: string }) =>
    String(order.tags ?? '')
      .split(',')
      .map((tag) => tag.trim())
      .filter(Boolean);
  /** The tag calls the reseller's shop answered (the simulator marks them). */
  const tagCalls = async (shopDomain: string) => (await sim().tagCalls()).filter((c) => c.shopDomain === shopDomain);
  /** Every other call it answered, but those keeping its subscriptions: none here (no poll, no fulfillment). */
  const otherCalls = async (shopDomain: string) => (await sim().calls()).filter((c) => c.shopDomain === shopDomain);
  const taggedJob = (jobId: string, tagged: boolean) =>
    eventually(async () => {
      const job = (await api().get(`/v1/sync_jobs/${jobId}`)).body;
      return job.tagged === tagged && job;
    }, 30_000);

  it.each(['storeplatform_a', 'storeplatform_b'] as const)(
    'tags a %s reseller order routed-<vendorTag> once, with one call; the supplier order names the reseller order',
    async (platform) => {
      const { reseller, source, payload, jobId, vendorTag } = await placedOrder(platform);
      const job = await taggedJob(jobId, true);
      expect(job.status).toBe('completed');

      const order = await resellerOrder(reseller.shopDomain, payload.id);
      expect(tagsOf(order)).toEqual([`routed-${vendorTag.toLowerCase()}`]);
      expect(await tagCalls(reseller.shopDomain)).toHaveLength(1);
      expect(await otherCalls(reseller.shopDomain)).toEqual([]);
      // The supplier order carried the reseller order's name from its create.
      const [supplierOrder] = await sim().orders(source.shopDomain);
      expect(supplierOrder.note_attributes).toEqual([
        { name: 'gift', value: 'yes' },
        { name: 'reseller_order', value: payload.name },
      ]);
    },
  );

  it('cuts the tag to 40 characters, lower-cased', async () => {
    const vendorTag = `Very-Long-Vendor-Name-${'X'.repeat(40)}`;
    const { reseller, payload, jobId } = await placedOrder('storeplatform_a', vendorTag);
    await taggedJob(jobId, true);
    const order = await resellerOrder(reseller.shopDomain, payload.id);
    expect(tagsOf(order)).toEqual([`routed-${vendorTag}`.toLowerCase().slice(0, 40)]);
  });

  it('asks for the tag again when the sync worker dies between the completion and the tag', async () => {
    // The completion's first follow-up (the kept fulfillments' read), before the tag it tries at once.
    const crash = service.runtime.faults.inject({
      function: 'SyncWorker',
      service: 'DynamoDB',
      command: 'Query',
      match: { ExpressionAttributeValues: { ':prefix': 'KEPT#' } },
      action: 'crash',
    });
    const { reseller, payload, jobId, vendorTag } = await placedOrder('storeplatform_a');
    await taggedJob(jobId, true);
    expect(crash.hits).toHaveLength(1);
    // The job's message came back, met the completed job and asked for the tag: there, once.
    const order = await resellerOrder(reseller.shopDomain, payload.id);
    expect(tagsOf(order)).toEqual([`routed-${vendorTag.toLowerCase()}`]);
    expect(await tagCalls(reseller.shopDomain)).toHaveLength(1);
    // One supplier order all the same.
    const job = (await api().get(`/v1/sync_jobs/${jobId}`)).body;
    expect(job.attempts).toBe(1);
  });

  it('leaves the tag once when it is tried again after the call (the worker died before the write)', async () => {
    // The sync worker tags at once once the job is placed; its message comes back and asks for the tag again.
    const crash = service.runtime.faults.inject({
      function: 'SyncWorker',
      service: 'DynamoDB',
      command: 'UpdateItem',
      writes: { tg: true },
      action: 'crash',
    });
    const { reseller, payload, jobId, vendorTag } = await placedOrder('storeplatform_b');
    await taggedJob(jobId, true);
    expect(crash.hits).toHaveLength(1);
    // Called twice (the job's message came back and asked again), tagged once: a tag already there is nothing.
    expect(await tagCalls(reseller.shopDomain)).toHaveLength(2);
    const order = await resellerOrder(reseller.shopDomain, payload.id);
    expect(tagsOf(order)).toEqual([`routed-${vendorTag.toLowerCase()}`]);
  });

  it('gives up on a reseller order the platform does not have: tagged false, the job completed', async () => {
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api(), { webhookSecret: resellerSecret });
    const vendorTag = unique('Acme');
    await createSourceStore(api(), reseller.id, { vendorTag });
    // No order on the reseller's shop: the tag call answers 404, a refusal.
    const sent = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret: resellerSecret,
      body: orderPayload([{ vendor: vendorTag, price: '10.00' }]),
    });
    const jobId = sent.body.syncJobIds[0];
    const job = await taggedJob(jobId, false);
    expect(job.status).toBe('completed');
    expect(job.errorMessage).toBeNull();
  });

  it('shows tagged null while the job is not placed', async () => {
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api(), { webhookSecret: resellerSecret });
    const vendorTag = unique('Acme');
    await createSourceStore(api(), reseller.id, { vendorTag, accessToken: 'tok_fail401' });
    const sent = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret: resellerSecret,
      body: orderPayload([{ vendor: vendorTag, price: '10.00' }]),
    });
    const dead = await jobReaches(api(), sent.body.syncJobIds[0], 'dead');
    expect(dead.tagged).toBeNull();
    expect(await tagCalls(reseller.shopDomain)).toHaveLength(0);
  });
});
