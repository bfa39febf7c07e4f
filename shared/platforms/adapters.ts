import { PlatformError } from './http.js';
import { type AdapterFor, callsOnDemand, type Platform, type PlatformAdapter, type ShopConnection } from './port.js';

type ShopCall<A extends unknown[], R> = (shop: ShopConnection, ...args: A) => Promise<R>;

const keepingToken =
  <A extends unknown[], R>(call: ShopCall<A, R>): ShopCall<A, R> =>
  async (shop, ...args) => {
    const tokens = shop.tokens;
    if (!tokens) return call(shop, ...args);
    const token = await tokens.current();
    try {
      return await call({ ...shop, accessToken: token }, ...args);
    } catch (error) {
      if (!(error instanceof PlatformError) || error.status !== 401) throw error;
      const next = await tokens.afterUnauthorized(token);
      if (next === null) throw error;
      try {
        return await call({ ...shop, accessToken: next }, ...args);
      } catch (again) {
        throw expiredMeanwhile(again, tokens.isStale(next));
      }
    }
  };

/**
 * A second 401, to a token that expired or was replaced while the call was under way (a slow call, a
 * short-lived token): the next try, with a fresh token, may succeed, so it is retryable, not a refusal.
 */
const expiredMeanwhile = (error: unknown, stale: boolean) =>
  error instanceof PlatformError && error.status === 401 && stale
    ? new PlatformError({
        platform: error.platform,
        status: 401,
        retryable: true,
        message: `${error.message} (its token expired during the call)`,
      })
    : error;

/** The adapter with every shop call keeping its token fresh; the token refresh itself is left as it is. */
export const withFreshTokens = (adapter: PlatformAdapter): PlatformAdapter => ({
  takesIdempotencyKeys: adapter.takesIdempotencyKeys,
  createOrder: keepingToken(adapter.createOrder.bind(adapter)),
  findOrder: keepingToken(adapter.findOrder.bind(adapter)),
  createFulfillment: keepingToken(adapter.createFulfillment.bind(adapter)),
  updateFulfillmentTracking: keepingToken(adapter.updateFulfillmentTracking.bind(adapter)),
  cancelFulfillment: keepingToken(adapter.cancelFulfillment.bind(adapter)),
  cancelOrder: keepingToken(adapter.cancelOrder.bind(adapter)),
  updateOrder: keepingToken(adapter.updateOrder.bind(adapter)),
  ordersChangedSince: keepingToken(adapter.ordersChangedSince.bind(adapter)),
  readOrder: keepingToken(adapter.readOrder.bind(adapter)),
  listWebhooks: keepingToken(adapter.listWebhooks.bind(adapter)),
  createWebhook: keepingToken(adapter.createWebhook.bind(adapter)),
  refreshAccessToken: adapter.refreshAccessToken.bind(adapter),
  addOrderTags: keepingToken(adapter.addOrderTags.bind(adapter)),
  // CONTRACT §15
  editOrderQuantities: keepingToken(adapter.editOrderQuantities.bind(adapter)),
  createReturn: keepingToken(adapter.createReturn.bind(adapter)),
  findReturn: keepingToken(adapter.findReturn.bind(adapter)),
  cancelReturn: keepingToken(adapter.cancelReturn.bind(adapter)),
  readOrderAfterSale: keepingToken(adapter.readOrderAfterSale.bind(adapter)),
  // Supplier service levels (CONTRACT.md §16.1): only where the platform has them.
  ...(adapter.shopTimeZone ? { shopTimeZone: keepingToken(adapter.shopTimeZone.bind(adapter)) } : {}),
  ...(adapter.setFulfillmentDeadline
    ? { setFulfillmentDeadline: keepingToken(adapter.setFulfillmentDeadline.bind(adapter)) }
    : {}),
});

type Call = Exclude<keyof PlatformAdapter, 'takesIdempotencyKeys'>;

/** Every call of the port (a call added there without its line here does not compile). */
const CALLS: Record<Call, 'always' | 'optional'> = {
  createOrder: 'always',
  findOrder: 'always',
  createFulfillment: 'always',
  updateFulfillmentTracking: 'always',
  cancelFulfillment: 'always',
  cancelOrder: 'always',
  updateOrder: 'always',
  ordersChangedSince: 'always',
  readOrder: 'always',
  listWebhooks: 'always',
  createWebhook: 'always',
  refreshAccessToken: 'always',
  addOrderTags: 'always',
  editOrderQuantities: 'always',
  createReturn: 'always',
  findReturn: 'always',
  cancelReturn: 'always',
  readOrderAfterSale: 'always',
  shopTimeZone: 'optional',
  setFulfillmentDeadline: 'optional',
};

/** What is known of a platform's adapter before it is loaded (test/unit/platform-adapters.test.ts holds it true). */
export const KNOWN: Record<Platform, { takesIdempotencyKeys: boolean; optional: Call[] }> = {
  storeplatform_a: { takesIdempotencyKeys: true, optional: [] },
  storeplatform_b: { takesIdempotencyKeys: false, optional: ['shopTimeZone', 'setFulfillmentDeadline'] },
  custom: { takesIdempotencyKeys: true, optional: [] },
};

/** The adapter whose calls load it on the first one (port.ts, `callsOnDemand`). */
const onDemand = (platform: Platform, load: () => Promise<PlatformAdapter>): PlatformAdapter => {
  const { takesIdempotencyKeys, optional } = KNOWN[platform];
  const calls = (Object.keys(CALLS) as Call[]).filter((call) => CALLS[call] === 'always' || optional.includes(call));
  return { ...callsOnDemand(calls, load), takesIdempotencyKeys };
};

/** Each keeps an expiring token fresh (adapters.ts) for the shops whose connection has a keeper. */
const adapters: Record<Platform, PlatformAdapter> = {
  storeplatform_a: withFreshTokens(
    onDemand('storeplatform_a', async () => (await import('./storeplatform-a.js')).storePlatformAAdapter),
  ),
  storeplatform_b: withFreshTokens(
    onDemand('storeplatform_b', async () => (await import('./storeplatform-b.js')).storePlatformBAdapter),
  ),
  custom: onDemand('custom', async () => (await import('./custom.js')).customAdapter),
};

export const adapterFor: AdapterFor = (platform) => {
  const adapter = adapters[platform];
  if (!adapter) throw new Error(`no adapter for platform ${JSON.stringify(platform)}`);
  return adapter;
};
