import { createResellerStore, createSourceStore, serviceForSuite, unique } from './support.js';
import { eventually, jobReaches, orderPayload, sendOrder } from './webhooks.js';

jest.setTimeout(90_000);

/**
 * CONTRACT.md §12.5: once a job is placed, the reseller's order gets `routed-<vendorTag>` through its
 * platform, once, however often the job's messages are delivered; the job says `tagged`. The supplier
 * order carries `reseller_order` in its note attributes from its create.
 */
describe("the reseller's order tagged", () => {
  const { service, api, sim } = serviceForSuite();
  afterEach(() => service.runtime.faults.clear());

  /** A reseller store on `platform`, a supplier, and the reseller's order on the simulator, then its webhook. */
  const placedOrder = async (
    platform: 'storeplatform_a' | 'storeplatform_b',
    vendorTag = unique('Acme'),
    sourcePlatform: 'storeplatform_a' | 'storeplatform_b' = 'storeplatform_a',
  ) => {
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api(), { platform, webhookSecret: resellerSecret });
    const source = await createSourceStore(api(), reseller.id, { vendorTag, platform: sourcePlatform });
    const payload = orderPayload([{ vendor: vendorTag, price: '10.00' }], {
      note_attributes: [{ name: 'gift', value: 'yes' }],
    });
    // The reseller's own shop holds the order, as a real one does: the tag is added to it.
    await sim().placeOrder(reseller.shopDomain, payload);
    const sent = await sendOrder(service.runtime.apiUrl, reseller.shopDomain, resellerSecret, payload);
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

  it("asks for the tag again when the sync worker dies between the completion and the tag's message", async () => {
    // The tag tried at once before the completion fails (its reseller store's read), so it is left to its
    // message, sent after the completion's follow-ups; the worker dies at the first (the kept fulfillments' read).
    const storeRead = service.runtime.faults.inject({
      function: 'SyncWorker',
      service: 'DynamoDB',
      command: 'GetItem',
      match: { Key: { SK: 'RST' } },
      action: 'fail',
    });
    const crash = service.runtime.faults.inject({
      function: 'SyncWorker',
      service: 'DynamoDB',
      command: 'Query',
      match: { ExpressionAttributeValues: { ':prefix': 'KEPT#' } },
      action: 'crash',
    });
    const { reseller, payload, jobId, vendorTag } = await placedOrder('storeplatform_a');
    await taggedJob(jobId, true);
    expect(storeRead.hits).toHaveLength(1);
    expect(crash.hits).toHaveLength(1);
    // The job's message came back, met the completed job and asked for the tag: there, once.
    const order = await resellerOrder(reseller.shopDomain, payload.id);
    expect(tagsOf(order)).toEqual([`routed-${vendorTag.toLowerCase()}`]);
    expect(await tagCalls(reseller.shopDomain)).toHaveLength(1);
    // One supplier order all the same.
    const job = (await api().get(`/v1/sync_jobs/${jobId}`)).body;
    expect(job.attempts).toBe(1);
  });

  // The supplier: storeplatform_a takes the job id as idempotency key; storeplatform_b's order is looked up first.
  it.each(['storeplatform_a', 'storeplatform_b'] as const)(
    'leaves the tag and the %s supplier order once when the worker dies between the tag and the completion',
    async (sourcePlatform) => {
      // The sync worker tags at once once the job is placed, and its completion's write records it (`tg`): it dies
      // there, the job stays processing, its message comes back, the supplier answers the same order (the job id is
      // its idempotency key) and the tag is added again.
      const crash = service.runtime.faults.inject({
        function: 'SyncWorker',
        service: 'DynamoDB',
        command: 'UpdateItem',
        writes: { status: 'completed', tg: true },
        action: 'crash',
      });
      const { reseller, source, payload, jobId, vendorTag } = await placedOrder(
        'storeplatform_b',
        undefined,
        sourcePlatform,
      );
      await taggedJob(jobId, true);
      expect(crash.hits).toHaveLength(1);
      // Called twice (the job's message came back and asked again), tagged once: a tag already there is nothing.
      expect(await tagCalls(reseller.shopDomain)).toHaveLength(2);
      const order = await resellerOrder(reseller.shopDomain, payload.id);
      expect(tagsOf(order)).toEqual([`routed-${vendorTag.toLowerCase()}`]);
      // One supplier order, and the job completed by its second try.
      expect(await sim().orders(source.shopDomain)).toHaveLength(1);
      const job = (await api().get(`/v1/sync_jobs/${jobId}`)).body;
      expect(job).toMatchObject({ status: 'completed', attempts: 2 });
    },
  );

  it('gives up on a reseller order the platform does not have: tagged false, the job completed', async () => {
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api(), { webhookSecret: resellerSecret });
    const vendorTag = unique('Acme');
    await createSourceStore(api(), reseller.id, { vendorTag });
    // No order on the reseller's shop: the tag call answers 404, a refusal.
    const sent = await sendOrder(
      service.runtime.apiUrl,
      reseller.shopDomain,
      resellerSecret,
      orderPayload([{ vendor: vendorTag, price: '10.00' }]),
    );
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
    const sent = await sendOrder(
      service.runtime.apiUrl,
      reseller.shopDomain,
      resellerSecret,
      orderPayload([{ vendor: vendorTag, price: '10.00' }]),
    );
    const dead = await jobReaches(api(), sent.body.syncJobIds[0], 'dead');
    expect(dead.tagged).toBeNull();
    expect(await tagCalls(reseller.shopDomain)).toHaveLength(0);
  });
});
