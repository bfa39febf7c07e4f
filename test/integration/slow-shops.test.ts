import {
  createResellerStore,
  createSourceStore,
  pollStores,
  resellerStoreBody as resellerBody,
  serviceForSuite,
  sourceStoreBody as sourceBody,
} from './support.js';
import { subscriptionsExpected } from './webhooks.js';

jest.setTimeout(120_000);

/**
 * CONTRACT.md §12.1: creating a store (or giving it new credentials) never fails because of its shop
 * (issue 39, item 5). A shop that answers after 30 s (`tok_slow`), one that answers 500 and one that
 * throttles (429; storeplatform_b: THROTTLED) on both platforms: 201 (200 for a rotation) well within
 * 5 s, the store there and usable at once, its webhooks `pending` (the shop did not answer within the
 * budget) or `failing` with the platform's reason; the next poll makes the subscriptions.
 */
describe('a store whose shop is slow or failing', () => {
  const { service, api } = serviceForSuite({}, 120_000);
  beforeAll(async () => {
    // Each route's first call starts its environment (seconds on a busy machine): not the shop's time.
    const reseller = await createResellerStore(api());
    const source = await createSourceStore(api(), reseller.id);
    await api().get(`/v1/reseller_stores/${reseller.id}`);
    await api().get(`/v1/reseller_stores/${reseller.id}/source_stores/${source.id}`);
    await api().post(`/v1/reseller_stores/${reseller.id}/credentials`, { accessToken: 'shpat_warm' });
    await api().post(`/v1/reseller_stores/${reseller.id}/source_stores/${source.id}/credentials`, {
      accessToken: 'shpat_warm',
    });
  }, 120_000);

  const simUrl = () => service.runtime.simulator!.url;
  const subscriptionsOf = async (shopDomain: string) =>
    (
      ((await (await fetch(`${simUrl()}/_sim/webhooks?shopDomain=${shopDomain}`)).json()) as any).webhooks as Array<{
        topic: string;
        address: string;
      }>
    )
      .map((s) => `${s.topic} ${s.address}`)
      .sort();
  const expected = (kind: 'reseller' | 'source') => subscriptionsExpected(kind, service.runtime.apiUrl);
  /** A request and how long its answer took. */
  const timed = async <T>(call: () => Promise<T>) => {
    const started = Date.now();
    const answer = await call();
    return { answer, ms: Date.now() - started };
  };
  const outage = (shopDomain: string, status: number | null) =>
    fetch(`${simUrl()}/_sim/outages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ shopDomain, status, ...(status === 429 ? { retryAfter: 1 } : {}) }),
    });

  const PLATFORMS = ['storeplatform_a', 'storeplatform_b'] as const;
  const TOKENS = ['tok_slow', 'tok_fail500', 'tok_fail429'] as const;
  const cases = PLATFORMS.flatMap((platform) => TOKENS.map((token) => [platform, token] as const));

  /** What a check cut short shows (§12.1): `pending` when the shop did not answer in time, else `failing`. */
  const unfinished = (token: string) =>
    token === 'tok_slow' ? { status: 'pending', error: null } : { status: 'failing', error: expect.any(String) };

  it.each(cases)(
    '%s, %s: both kinds of store are created within 5 s, pending or failing, and usable at once',
    async (platform, token) => {
      const accessToken = `${token}_${platform}`;
      const reseller = await timed(() => api().post('/v1/reseller_stores', resellerBody({ platform, accessToken })));
      expect(reseller.answer.status).toBe(201);
      expect(reseller.ms).toBeLessThan(5_000);
      const store = reseller.answer.body;
      expect(store.webhooks).toMatchObject(unfinished(token));
      expect(String(store.webhooks.error)).not.toContain(accessToken);
      // Usable at once: read back as answered, in its owner's list, and a source store can be made under it.
      const read = await api().get(`/v1/reseller_stores/${store.id}`);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ id: store.id, webhooks: unfinished(token) });

      const source = await timed(() =>
        api().post(`/v1/reseller_stores/${store.id}/source_stores`, sourceBody({ platform, accessToken })),
      );
      expect(source.answer.status).toBe(201);
      expect(source.ms).toBeLessThan(5_000);
      expect(source.answer.body.webhooks).toMatchObject(unfinished(token));
      const sourceRead = await api().get(`/v1/reseller_stores/${store.id}/source_stores/${source.answer.body.id}`);
      expect(sourceRead.status).toBe(200);
      // Created once: the client has no reason to retry, and a retry with another key would meet the tag.
      const retry = await api().post(
        `/v1/reseller_stores/${store.id}/source_stores`,
        sourceBody({ platform, accessToken, vendorTag: source.answer.body.vendorTag }),
      );
      expect(retry.status).toBe(409);
    },
  );

  it.each(cases)(
    '%s, %s: a rotation to that token answers 200 within 5 s, pending or failing',
    async (platform, token) => {
      const reseller = await createResellerStore(api(), { platform });
      const source = await createSourceStore(api(), reseller.id, { platform });
      expect([reseller.webhooks.status, source.webhooks.status]).toEqual(['healthy', 'healthy']);
      const accessToken = `${token}_${platform}_rotated`;
      for (const path of [
        `/v1/reseller_stores/${reseller.id}/credentials`,
        `/v1/reseller_stores/${reseller.id}/source_stores/${source.id}/credentials`,
      ]) {
        const rotated = await timed(() => api().post(path, { accessToken }));
        expect(rotated.answer.status).toBe(200);
        expect(rotated.ms).toBeLessThan(5_000);
        expect(rotated.answer.body.webhooks).toMatchObject({
          status: expect.stringMatching(token === 'tok_slow' ? /^(pending|healthy)$/ : /^(failing|healthy)$/),
        });
      }
    },
  );

  it.each(PLATFORMS)('%s, tok_slow: the next poll finds the subscriptions in place', async (platform) => {
    const accessToken = `tok_slow_${platform}`;
    const reseller = await createResellerStore(api(), { platform, accessToken });
    const source = await createSourceStore(api(), reseller.id, { platform, accessToken });
    expect([reseller.webhooks.status, source.webhooks.status]).toEqual(['pending', 'pending']);
    await pollStores(service.runtime, { kind: 'reseller', id: reseller.id }, { kind: 'source', id: source.id });
    expect(await subscriptionsOf(reseller.shopDomain)).toEqual(expected('reseller'));
    expect(await subscriptionsOf(source.shopDomain)).toEqual(expected('source'));
    const readReseller = (await api().get(`/v1/reseller_stores/${reseller.id}`)).body;
    const readSource = (await api().get(`/v1/reseller_stores/${reseller.id}/source_stores/${source.id}`)).body;
    expect(readReseller.webhooks).toMatchObject({ status: expect.stringMatching(/^(healthy|repaired)$/), error: null });
    expect(readSource.webhooks).toMatchObject({ status: expect.stringMatching(/^(healthy|repaired)$/), error: null });
  });

  it.each(PLATFORMS.flatMap((platform) => [500, 429].map((status) => [platform, status] as const)))(
    '%s, a shop answering %s at creation: 201 within 5 s, and the next poll once it answers makes them',
    async (platform, status) => {
      const resellerInput = resellerBody({ platform });
      const sourceInput = sourceBody({ platform });
      await outage(resellerInput.shopDomain, status);
      await outage(sourceInput.shopDomain, status);
      const reseller = await timed(() => api().post('/v1/reseller_stores', resellerInput));
      expect(reseller.answer.status).toBe(201);
      expect(reseller.ms).toBeLessThan(5_000);
      const source = await timed(() =>
        api().post(`/v1/reseller_stores/${reseller.answer.body.id}/source_stores`, sourceInput),
      );
      expect(source.answer.status).toBe(201);
      expect(source.ms).toBeLessThan(5_000);
      expect([reseller.answer.body.webhooks.status, source.answer.body.webhooks.status]).toEqual([
        'failing',
        'failing',
      ]);
      expect(await subscriptionsOf(resellerInput.shopDomain)).toEqual([]);

      await outage(resellerInput.shopDomain, null);
      await outage(sourceInput.shopDomain, null);
      await pollStores(
        service.runtime,
        { kind: 'reseller', id: reseller.answer.body.id },
        { kind: 'source', id: source.answer.body.id },
      );
      expect(await subscriptionsOf(resellerInput.shopDomain)).toEqual(expected('reseller'));
      expect(await subscriptionsOf(sourceInput.shopDomain)).toEqual(expected('source'));
      const read = (await api().get(`/v1/reseller_stores/${reseller.answer.body.id}`)).body;
      expect(read.webhooks).toMatchObject({ status: 'repaired', error: null });
    },
  );
});
