/**
 * Expiring tokens at the adapters' door (CONTRACT.md §12.3): every call of a shop whose connection has
 * a `TokenKeeper` is made with the token it hands (refreshed first when about to expire), and a call
 * answered 401 is made once more with a newer one, when there is one. What an adapter does stays as it
 * is; a call of a shop without a keeper is made as before. A 401 is a refusal before any change: the
 * call made again cannot make a second order (and the writes carry their idempotency keys anyway).
 */
import { PlatformError } from './platform-errors.js';
import type { PlatformAdapter, ShopConnection } from './port.js';

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
