import { BUSINESS_METRICS } from '../../shared/core/telemetry.js';
import { PLATFORM_API_VERSIONS } from '../../shared/platforms/http.js';
import { metricValues } from './logs.js';
import { createResellerStore, createSourceStore, loggedServiceForSuite, pollStores, unique } from './support.js';
import { eventually, jobReaches, orderPayload, sendWebhook } from './webhooks.js';

jest.setTimeout(90_000);

/**
 * CONTRACT.md §12.4 against the simulator: an answer that carries `X-Shopify-API-Deprecated-Reason`,
 * or names another version than the one asked for, is counted (`PlatformApiDeprecated`) and shown on
 * the store as `apiVersion`; an answer of the version asked for, with no reason, counts nothing.
 */
describe('the platform’s API version watched', () => {
  // The metric is what this suite reads (test/integration/env.ts turns metrics off elsewhere).
  const { service, log } = loggedServiceForSuite({}, { env: { POWERTOOLS_METRICS_DISABLED: 'false' } });

  const api = () => service.api('owner_a');
  /** The simulator's control of what a shop's answers say of their version (PLATFORM-API.md). */
  const answerAs = async (
    shopDomain: string,
    body: { servedVersion?: string | null; deprecatedReason?: string | null },
  ) => {
    const res = await fetch(`${service.runtime.simulator!.url}/_sim/shops/${shopDomain}/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
  };
  const deprecatedCount = (from: number) =>
    metricValues(
      log
        .lines()
        .slice(from)
        .filter((line) => line._aws),
      BUSINESS_METRICS.platformApiDeprecated,
    ).reduce((sum, n) => sum + n, 0);

  /** A supplier on `platform` whose answers say what `answers` says, and one order placed with it. */
  const orderTo = async (
    platform: 'storeplatform_a' | 'storeplatform_b',
    answers: { servedVersion?: string; deprecatedReason?: string },
  ) => {
    const resellerSecret = unique('whsec_r');
    const reseller = await createResellerStore(api(), { webhookSecret: resellerSecret });
    const vendorTag = unique('Acme');
    const source = await createSourceStore(api(), reseller.id, { vendorTag, platform });
    await answerAs(source.shopDomain, answers);
    const from = log.lines().length;
    const sent = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret: resellerSecret,
      body: orderPayload([{ vendor: vendorTag, price: '10.00' }]),
    });
    await jobReaches(api(), sent.body.syncJobIds[0], 'completed');
    const path = `/v1/reseller_stores/${reseller.id}/source_stores/${source.id}`;
    return { source, from, path };
  };

  it('counts an answer with X-Shopify-API-Deprecated-Reason and shows it on the store', async () => {
    const reason = 'The orderCreate field `sourceIdentifier` is deprecated; see the 2027-01 release notes';
    const { from, path } = await orderTo('storeplatform_b', { deprecatedReason: reason });
    const requested = PLATFORM_API_VERSIONS.storeplatform_b;

    const shown = await eventually(async () => {
      const store = (await api().get(path)).body;
      return store.apiVersion?.deprecations?.length && store.apiVersion;
    });
    expect(shown).toMatchObject({ requested, served: requested, deprecations: [reason] });
    // Counted: the worker writes its metrics when its invocation ends, a moment after the job completes.
    await eventually(async () => deprecatedCount(from) >= 1);
    const warned = log
      .lines()
      .slice(from)
      .find((line) => line.message === 'the platform answered another API version or a deprecation');
    expect(warned).toMatchObject({ requested, served: requested, deprecatedReason: reason });
  });

  it('counts an answer of another version than the one asked for and shows what was served', async () => {
    const { from, path } = await orderTo('storeplatform_a', { servedVersion: '2024-01' });
    const shown = await eventually(async () => {
      const store = (await api().get(path)).body;
      return store.apiVersion?.served === '2024-01' && store.apiVersion;
    });
    expect(shown).toMatchObject({ requested: PLATFORM_API_VERSIONS.storeplatform_a, deprecations: [] });
    await eventually(async () => deprecatedCount(from) >= 1);
  });

  it('counts nothing for answers of the version asked for, and shows that version', async () => {
    const { from, path } = await orderTo('storeplatform_a', {});
    const requested = PLATFORM_API_VERSIONS.storeplatform_a;
    const shown = await eventually(async () => (await api().get(path)).body.apiVersion);
    expect(shown).toMatchObject({ requested, served: requested, deprecations: [] });
    // The job's metrics are out once jobsCompleted is: none of them is a deprecation.
    await eventually(
      async () =>
        metricValues(
          log
            .lines()
            .slice(from)
            .filter((line) => line._aws),
          BUSINESS_METRICS.jobsCompleted,
        ).length >= 1,
    );
    expect(deprecatedCount(from)).toBe(0);
  });

  it('records the version the subscription calls named when a store is created, and shows it at once', async () => {
    for (const platform of ['storeplatform_a', 'storeplatform_b'] as const) {
      const requested = PLATFORM_API_VERSIONS[platform];
      const reseller = await createResellerStore(api(), { platform });
      const source = await createSourceStore(api(), reseller.id, { platform });
      for (const [answer, path] of [
        [reseller, `/v1/reseller_stores/${reseller.id}`],
        [source, `/v1/reseller_stores/${reseller.id}/source_stores/${source.id}`],
      ] as const) {
        // No order, no poll: only the creation's calls (list and create the subscriptions) were made.
        expect(answer.webhooks.status).toBe('healthy');
        expect(answer.apiVersion).toEqual({
          requested,
          served: requested,
          deprecations: [],
          checkedAt: expect.any(String),
        });
        expect((await api().get(path)).body.apiVersion).toEqual(answer.apiVersion);
      }
    }
  });

  it('records the version a poll’s answers named', async () => {
    const reseller = await createResellerStore(api(), { platform: 'storeplatform_a' });
    await answerAs(reseller.shopDomain, { servedVersion: '2024-04' });
    expect((await pollStores(service.runtime, { kind: 'reseller', id: reseller.id })).batchItemFailures).toEqual([]);
    const shown = await eventually(async () => {
      const store = (await api().get(`/v1/reseller_stores/${reseller.id}`)).body;
      return store.apiVersion?.served === '2024-04' && store.apiVersion;
    });
    expect(shown).toMatchObject({ requested: PLATFORM_API_VERSIONS.storeplatform_a, served: '2024-04' });
  });
});
