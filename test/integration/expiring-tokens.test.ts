import {
  type ApiResponse,
  allJobsOf,
  createResellerStore,
  createSourceStore,
  loggedServiceForSuite,
  pollStores,
  unique,
} from './support.js';
import { eventually, jobReaches, orderPayload, sendWebhook, simulator } from './webhooks.js';

jest.setTimeout(300_000);

/**
 * CONTRACT.md §12.3: a store's access token that expires is refreshed before its expiry (its last tenth)
 * or after a 401, by one worker at a time however many place orders, with the new pair and expiry stored
 * together; a refused refresh (a revoked shop) makes the store `reauthorization_required`, and its work
 * ends `store_disconnected`. The refresh token and the client secret are never in an answer nor a log line.
 */
describe('expiring tokens', () => {
  // Every line, info included: all of them are searched for secrets.
  const { service, log } = loggedServiceForSuite(
    { visibilityTimeoutSeconds: 2 },
    { env: { POWERTOOLS_LOG_LEVEL: 'INFO' } },
  );
  /** Every answer of the API in this file, searched for secrets at the end. */
  const answers: ApiResponse[] = [];
  const api = () => {
    const client = service.api('owner_a');
    const kept =
      (call: (...args: any[]) => Promise<ApiResponse>) =>
      async (...args: any[]) => {
        const res = await call(...args);
        answers.push(res);
        return res;
      };
    return { ...client, get: kept(client.get), post: kept(client.post) };
  };
  const sim = () => simulator(service.runtime.simulator!.url);
  const simShop = async (domain: string, control: 'tokens' | 'revoke', body?: unknown) => {
    const res = await fetch(`${service.runtime.simulator!.url}/_sim/shops/${domain}/${control}`, {
      method: body === undefined && control === 'tokens' ? 'GET' : 'POST',
      headers: { 'content-type': 'application/json' },
      ...(body === undefined && control === 'tokens' ? {} : { body: JSON.stringify(body ?? {}) }),
    });
    return (await res.json()) as { refreshes: number; reusedRefreshTokens: number; revoked: boolean };
  };
  /** Every secret a test gave, and the simulator's token prefixes: none may be in an answer or a log line. */
  const secrets: string[] = ['shprt_sim_', 'shpat_sim_'];

  /** A new grant (tokens, client id and secret) the simulator issues to `shopDomain`, expiring in `seconds`. */
  const issueGrant = async (shopDomain: string, seconds: number, label: string) => {
    const grant = {
      accessToken: `shpat_${unique(label)}`,
      refreshToken: `shprt_${unique(label)}`,
      clientId: unique('client-id'),
      clientSecret: `shpss_${unique(label)}`,
    };
    secrets.push(...Object.values(grant));
    await simShop(shopDomain, 'tokens', { ...grant, expiresInSeconds: seconds });
    return grant;
  };
  /** A source store whose token the simulator issued to expire in `seconds`, with its refresh grant. */
  const expiringSource = async (resellerId: string, seconds: number, vendorTag: string) => {
    const shopDomain = `${unique('supplier')}.myshopify.com`;
    const grant = await issueGrant(shopDomain, seconds, 'expiring');
    const expiresAt = new Date(Date.now() + seconds * 1000).toISOString();
    const source = await createSourceStore(api(), resellerId, {
      shopDomain,
      vendorTag,
      ...grant,
      accessTokenExpiresAt: expiresAt,
    });
    return { source, grant, expiresAt };
  };

  it('refreshes a 2-second token once per expiry while 50 orders are placed by several workers', async () => {
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api(), { webhookSecret: resellerSecret });
    const vendorTag = unique('Vendor');
    const { source, expiresAt } = await expiringSource(reseller.id, 2, vendorTag);
    expect(source.tokenExpiresAt).toBe(expiresAt);

    // 50 orders in waves of 10 over about 6 seconds: the token (and each refreshed one) expires meanwhile.
    const startedAt = Date.now();
    const jobIds: string[] = [];
    for (let wave = 0; wave < 5; wave++) {
      const sent = await Promise.all(
        Array.from({ length: 10 }, () =>
          sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
            shopDomain: reseller.shopDomain,
            secret: resellerSecret,
            body: orderPayload([{ vendor: vendorTag, price: '10.00' }]),
          }),
        ),
      );
      for (const res of sent) {
        expect(res.status).toBe(200);
        jobIds.push(...res.body.syncJobIds);
      }
      await new Promise((resolve) => setTimeout(resolve, 1_200));
    }
    expect(jobIds).toHaveLength(50);
    await eventually(async () => {
      const jobs = await allJobsOf(api(), reseller.id);
      return jobs.length === 50 && jobs.every((job) => job.status === 'completed') && jobs;
    }, 180_000).catch(async (error) => {
      // What the jobs say, for the failure's message.
      const jobs = await allJobsOf(api(), reseller.id);
      const seen = jobs.map((job) => `${job.status} ${job.attempts} ${job.errorMessage ?? ''}`);
      throw new Error(`${error}: ${JSON.stringify(seen.filter((line) => !line.startsWith('completed')))}`);
    });
    const elapsed = Date.now() - startedAt;

    // No order lost or doubled: one supplier order per job.
    const orders = await sim().orders(source.shopDomain);
    expect(orders).toHaveLength(50);
    expect(new Set(orders.map((order: { source_identifier: string }) => order.source_identifier)).size).toBe(50);

    // Refreshed, and once per expiry: no refresh token used twice, and no more refreshes than a token's
    // life (at least 0.9 of its 2 s, refreshed in its last tenth or after it) fits in the time taken.
    const tokens = await simShop(source.shopDomain, 'tokens');
    expect(tokens.refreshes).toBeGreaterThanOrEqual(2);
    expect(tokens.reusedRefreshTokens).toBe(0);
    expect(tokens.refreshes).toBeLessThanOrEqual(Math.ceil(elapsed / 1_800) + 1);

    // The store shows its current token's expiry (a refresh's), and is connected.
    const store = (await api().get(`/v1/reseller_stores/${reseller.id}/source_stores/${source.id}`)).body;
    expect(Date.parse(store.tokenExpiresAt)).toBeGreaterThan(Date.parse(expiresAt));
    expect(store.connection).toEqual({ state: 'connected', since: null, reason: null });

    // The poller reads with a fresh token too: an expired one is refreshed once for the poll.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const polled = await pollStores(service.runtime, { kind: 'source', id: source.id });
    expect(polled.batchItemFailures).toEqual([]);
    const after = await simShop(source.shopDomain, 'tokens');
    expect(after.refreshes).toBe(tokens.refreshes + 1);
    expect(after.reusedRefreshTokens).toBe(0);
  });

  it('makes a revoked shop’s store reauthorization_required; new credentials and retry end the job', async () => {
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api(), { webhookSecret: resellerSecret });
    const vendorTag = unique('Vendor');
    const { source } = await expiringSource(reseller.id, 1, vendorTag);
    await simShop(source.shopDomain, 'revoke');
    await new Promise((resolve) => setTimeout(resolve, 1_100));

    const order = async () => {
      const sent = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
        shopDomain: reseller.shopDomain,
        secret: resellerSecret,
        body: orderPayload([{ vendor: vendorTag, price: '10.00' }]),
      });
      expect(sent.status).toBe(200);
      return sent.body.syncJobIds[0] as string;
    };
    const first = await order();
    const dead = await jobReaches(api(), first, 'dead');
    expect(dead.errorMessage).toMatch(
      /^store_disconnected: source store sst_\w+ is reauthorization_required \(token refresh refused: invalid_grant/,
    );
    const path = `/v1/reseller_stores/${reseller.id}/source_stores/${source.id}`;
    const store = (await api().get(path)).body;
    expect(store.connection).toMatchObject({
      state: 'reauthorization_required',
      reason: 'token refresh refused: invalid_grant',
    });
    expect(await sim().orders(source.shopDomain)).toEqual([]);

    // Disconnected: the next order's job ends at once, without a call (not even a refresh).
    const callsBefore = (await sim().allCalls()).filter((c) => c.shopDomain === source.shopDomain).length;
    const second = await order();
    expect((await jobReaches(api(), second, 'dead')).errorMessage).toMatch(
      /^store_disconnected: .* reauthorization_required/,
    );
    expect((await sim().allCalls()).filter((c) => c.shopDomain === source.shopDomain)).toHaveLength(callsBefore);

    // The merchant authorizes again: new tokens, given as new credentials, reconnect the store.
    const grant = await issueGrant(source.shopDomain, 3600, 'again');
    const rotated = await api().post(`${path}/credentials`, {
      ...grant,
      accessTokenExpiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.connection).toEqual({ state: 'connected', since: null, reason: null });
    for (const id of [first, second]) expect((await api().post(`/v1/sync_jobs/${id}/retry`)).status).toBe(200);
    await jobReaches(api(), first, 'completed');
    await jobReaches(api(), second, 'completed');
    expect(await sim().orders(source.shopDomain)).toHaveLength(2);
  });

  it('refuses a refresh grant that is not whole, or without its access token, changing nothing', async () => {
    const reseller = await createResellerStore(api());
    const partial = await api().post(`/v1/reseller_stores/${reseller.id}/source_stores`, {
      name: 'Supplier',
      platform: 'storeplatform_b',
      shopDomain: `${unique('supplier')}.myshopify.com`,
      accessToken: 'shpat_x',
      webhookSecret: 'whsec_x',
      refreshToken: 'shprt_partial_secret',
      vendorTag: unique('Vendor'),
      pricingMode: 'percentage',
      pricingConfig: { type: 'percentage', value: 30 },
    });
    expect(partial.status).toBe(400);
    expect(partial.body.error).toMatchObject({ code: 'validation_failed', param: 'refreshToken' });
    expect(partial.text).not.toContain('shprt_partial_secret');
    const alone = await api().post(`/v1/reseller_stores/${reseller.id}/credentials`, {
      webhookSecret: 'whsec_new_one',
      refreshToken: 'shprt_alone_secret',
      clientId: 'c',
      clientSecret: 'shpss_alone_secret',
    });
    expect(alone.status).toBe(400);
    expect(alone.body.error).toMatchObject({ code: 'validation_failed', param: 'refreshToken' });
    expect(alone.text).not.toMatch(/shprt_alone_secret|shpss_alone_secret/);
  });

  it('never shows a refresh token, client secret or access token in an answer or a log line', () => {
    expect(answers.length).toBeGreaterThan(10);
    const texts = answers.map((res) => res.text);
    const lines = log.lines().map((line) => JSON.stringify(line));
    expect(lines.some((line) => line.includes('access token refreshed'))).toBe(true);
    for (const secret of secrets) {
      expect(texts.filter((text) => text.includes(secret))).toEqual([]);
      expect(lines.filter((line) => line.includes(secret))).toEqual([]);
    }
  });
});
