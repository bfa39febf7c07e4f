import { createResellerStore, createSourceStore, pollStores, serviceForSuite } from './support.js';
import { subscriptionsExpected } from './webhooks.js';

jest.setTimeout(90_000);

/** CONTRACT.md §12.1: the service makes and keeps each store's webhook subscriptions. */
describe('webhook subscriptions kept', () => {
  // What this suite checks is which subscriptions are made, not the creation's budget (slow-shops.test.ts
  // does): the budget as deployed may be raised to 8 s, so a loaded machine cannot leave them `pending`.
  beforeAll(() => {
    process.env.STORE_PLATFORM_BUDGET_MS = '8000';
  });
  afterAll(() => {
    delete process.env.STORE_PLATFORM_BUDGET_MS;
  });
  const { service, api } = serviceForSuite();

  const simUrl = () => service.runtime.simulator!.url;
  const subscriptionsOf = async (shopDomain: string) =>
    ((await (await fetch(`${simUrl()}/_sim/webhooks?shopDomain=${shopDomain}`)).json()) as any).webhooks as Array<{
      id: number;
      topic: string;
      address: string;
    }>;
  const pairs = (subs: Array<{ topic: string; address: string }>) => subs.map((s) => `${s.topic} ${s.address}`).sort();
  const poll = (store: { kind: 'reseller' | 'source'; id: string }) => pollStores(service.runtime, store);

  it('subscribes a new reseller store (REST) to every topic of the table, at the API’s URL', async () => {
    const reseller = await createResellerStore(api(), { platform: 'storeplatform_a' });
    expect(reseller.webhooks).toEqual({ status: 'healthy', checkedAt: expect.any(String), missing: [], error: null });
    const url = service.runtime.apiUrl;
    expect(pairs(await subscriptionsOf(reseller.shopDomain))).toEqual(subscriptionsExpected('reseller', url));
    // Read back, the store shows the same.
    expect((await api().get(`/v1/reseller_stores/${reseller.id}`)).body.webhooks).toEqual(reseller.webhooks);
  });

  it('subscribes a source store (GraphQL), and makes one the platform dropped again at the next poll', async () => {
    const reseller = await createResellerStore(api());
    const source = await createSourceStore(api(), reseller.id, { platform: 'storeplatform_b' });
    expect(source.webhooks.status).toBe('healthy');
    const url = service.runtime.apiUrl;
    const subs = await subscriptionsOf(source.shopDomain);
    expect(pairs(subs)).toEqual(subscriptionsExpected('source', url));

    // A poll that finds them all: healthy, nothing made.
    await poll({ kind: 'source', id: source.id });
    expect(await subscriptionsOf(source.shopDomain)).toEqual(subs);
    const healthy = (await api().get(`/v1/reseller_stores/${reseller.id}/source_stores/${source.id}`)).body.webhooks;
    expect(healthy).toMatchObject({ status: 'healthy', missing: [] });

    // The platform drops one (as after 8 failed deliveries): the next poll makes it again.
    const dropped = subs.find((s) => s.topic === 'fulfillments/create')!;
    expect((await fetch(`${simUrl()}/_sim/webhooks/${dropped.id}`, { method: 'DELETE' })).status).toBeLessThan(300);
    expect(pairs(await subscriptionsOf(source.shopDomain))).not.toContain(`fulfillments/create ${dropped.address}`);
    await poll({ kind: 'source', id: source.id });
    expect(pairs(await subscriptionsOf(source.shopDomain))).toEqual(pairs(subs));
    const repaired = (await api().get(`/v1/reseller_stores/${reseller.id}/source_stores/${source.id}`)).body.webhooks;
    expect(repaired).toEqual({
      status: 'repaired',
      checkedAt: expect.any(String),
      missing: ['fulfillments/create'],
      error: null,
    });
    expect(repaired.checkedAt > healthy.checkedAt).toBe(true);
  });

  it('shows a custom store `unmanaged`', async () => {
    const reseller = await createResellerStore(api(), { platform: 'custom' });
    expect(reseller.webhooks).toMatchObject({ status: 'unmanaged', missing: [], error: null });
  });
});
