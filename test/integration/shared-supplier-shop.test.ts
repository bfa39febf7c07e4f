import { createResellerStore, createSourceStore, serviceForSuite, unique } from './support.js';
import { orderPayload, sendWebhook, jobReaches as waitForJob } from './webhooks.js';

jest.setTimeout(90_000);

/**
 * PLATFORM-API.md, "Lookups": one reseller store routes two vendor tags to two source stores on the
 * same supplier shop. Each job's supplier order is named `<reseller shop>:<order>:<job>`, so after an
 * unknown outcome each job finds its own order, never the other's; an order placed before, named
 * `<reseller shop>:<order>` only, is taken by the job whose lines it carries, and by no other.
 */
describe('two source stores on one supplier shop', () => {
  let reseller: any;
  const secret = 'whsec_shared_supplier_shop';
  const jobReaches = (id: string, status: string) => waitForJob(api(), id, status, 30_000);

  const { service, api, sim } = serviceForSuite({ platformTimeoutMs: 1_500 }, 120_000);
  beforeAll(async () => {
    reseller = await createResellerStore(api(), { webhookSecret: secret, shopDomain: 'shared-shop.myshopify.com' });
  }, 120_000);

  /** Two source stores of `platform` on one new shop domain, each with its own vendor tag and `token`. */
  const twoStoresOnOneShop = async (platform: string, token: string) => {
    const shopDomain = `${unique('shared')}.myshopify.com`;
    const [first, second] = [unique('First'), unique('Second')];
    const stores = [];
    for (const vendorTag of [first, second])
      stores.push(await createSourceStore(api(), reseller.id, { platform, shopDomain, vendorTag, accessToken: token }));
    return { shopDomain, stores };
  };

  const send = async (payload: unknown) => {
    const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret,
      body: payload,
    });
    expect(receipt.status).toBe(200);
    expect(receipt.body.syncJobIds).toHaveLength(2);
    return receipt.body.syncJobIds as string[];
  };

  it.each(['storeplatform_a', 'storeplatform_b', 'custom'])(
    'on %s, with every answer lost: each job completes with its own supplier order',
    async (platform) => {
      const { shopDomain, stores } = await twoStoresOnOneShop(platform, 'tok_lost');
      const payload = orderPayload([
        { vendor: stores[0].vendorTag, price: '13.00', quantity: 2 },
        { vendor: stores[1].vendorTag, price: '13.00' },
      ]);

      const jobs = await Promise.all((await send(payload)).map((id) => jobReaches(id, 'completed')));

      const placed = await sim().orders(shopDomain);
      expect(placed).toHaveLength(2);
      for (const job of jobs) {
        const own = placed.find((o) => o.source_identifier === `${reseller.shopDomain}:${payload.id}:${job.id}`);
        expect(own).toBeDefined();
        expect(job.sourceOrderId).toBe(String(own.id));
        // The order found carries this job's line, not the other job's.
        const vendor = stores.find((s) => s.id === job.sourceStoreId).vendorTag;
        expect(own.line_items.map((line: any) => line.vendor)).toEqual([vendor]);
      }
      expect(new Set(jobs.map((j) => j.sourceOrderId)).size).toBe(2);
    },
  );

  it('takes an order placed before under <reseller shop>:<order> for the job whose lines it carries only', async () => {
    // Shopify (no idempotency keys); flaky: each job's first create answers 503 without creating.
    const { shopDomain, stores } = await twoStoresOnOneShop('storeplatform_b', 'tok_flaky');
    const payload = orderPayload([
      { vendor: stores[0].vendorTag, price: '13.00', quantity: 2 },
      { vendor: stores[1].vendorTag, price: '13.00' },
    ]);
    // The first job's order, placed by older code: it names the reseller order, not the job.
    const legacy = await sim().placeOrder(shopDomain, {
      source_identifier: `${reseller.shopDomain}:${payload.id}`,
      currency: 'USD',
      tags: 'reseller-order',
      line_items: [{ title: 'Item 1', sku: 'SKU-1', quantity: 2, price: '10.00', vendor: stores[0].vendorTag }],
    });

    const jobs = await Promise.all((await send(payload)).map((id) => jobReaches(id, 'completed')));

    const byStore = (store: { id: string }) => jobs.find((j) => j.sourceStoreId === store.id);
    expect(byStore(stores[0]).sourceOrderId).toBe(String(legacy.id));
    const placed = await sim().orders(shopDomain);
    expect(placed).toHaveLength(2);
    const second = byStore(stores[1]);
    const own = placed.find((o) => o.source_identifier === `${reseller.shopDomain}:${payload.id}:${second.id}`);
    expect(second.sourceOrderId).toBe(String(own.id));
    expect(own.line_items).toEqual([expect.objectContaining({ sku: 'SKU-2', quantity: 1 })]);
  });
});
