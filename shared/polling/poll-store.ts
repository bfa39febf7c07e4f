import type { Deps } from '../aws/deps.js';
import { ApiError } from '../core/errors.js';
import { BUSINESS_METRICS, countMetric, logger, withLogContext } from '../core/telemetry.js';
import type { StoreKind } from '../entities/store.js';
import {
  clearFailures,
  findPolledStore,
  type PolledStore,
  saveFailure,
  savePollMark,
  storeOnShopOf,
} from '../entities/store-poll.js';
import { acceptCancellation, acceptEdit } from '../order-flow/changing.js';
import { loadJob } from '../order-flow/order-repository.js';
import { jobIdsBySupplierOrder } from '../order-flow/propagating.js';
import { acceptFulfillment } from '../order-flow/propagating-intake.js';
import { acceptOrder, orderKnown } from '../order-flow/receiving.js';
import { acceptAfterSale } from '../order-flow/refunding-request.js';
import { type ChangedOrder, classify, type ShopConnection } from '../platforms/port.js';
import { tokenKeeper, watchApiVersion, webhookSecretOf } from '../stores/connection.js';
import { keepSubscriptions } from '../stores/subscriptions.js';
import { advance, type Change, handledAlready, isHistory, pollSince, waitingForShop } from './watermark.js';

/**
 * One poll of one store (CONTRACT.md §10.7): its orders changed since its watermark, each taking
 * exactly the path its webhook would have taken, then the watermark moved past what was handled.
 * The paths are the webhooks' own use cases, idempotent by ids and `updated_at`, so a poll and a
 * webhook of one change never double anything, whichever comes first.
 */

/** The tag of the orders the service places (PLATFORM-API.md): a supplier's shop is asked for those only. */
export const SERVICE_ORDER_TAG = 'reseller-order';
/** Polls failing in a row before the store counts as failing (an hour at the default interval): alarmed. */
export const POLL_FAILING_AFTER = 4;
/**
 * What one poll reads at most; the rest is the next poll's, from the watermark this one leaves. In
 * changed orders rather than pages (a Shopify page holds 5, a REST page 250: the platforms then poll
 * alike), and in time, so the ten stores of a poller's invocation end well within its 120 s.
 */
export const MAX_ORDERS_PER_POLL = 5_000;
export const POLL_BUDGET_MS = 45_000;

export type PollOutcome = 'polled' | 'failed' | 'waiting' | 'gone' | 'disconnected';

/** A failure that no later poll heals (a payload the webhook would answer 400): logged, passed. */
const isPermanent = (error: unknown) => error instanceof ApiError || classify(error, 'internal').kind === 'permanent';

const text = (value: unknown) => (typeof value === 'string' ? value : null);

/**
 * What the adapter needs to read the shop, decrypted: storeplatform_a and _b read with the access
 * token alone; custom signs its reads with the webhook secret too. One KMS call per secret, cached
 * by the cipher (shared/aws/kms-cipher.ts).
 */
const connectionOf = async (deps: Pick<Deps, 'cipher' | 'platforms'>, store: PolledStore): Promise<ShopConnection> => {
  const [accessToken, webhookSecret] = await Promise.all([
    deps.cipher.decrypt(store.secrets.accessToken, { storeId: store.id, field: 'accessToken' }),
    store.platform === 'custom' ? webhookSecretOf(deps.cipher, store) : '',
  ]);
  // An expiring token is refreshed before it is read with, or after a 401 (CONTRACT.md §12.3).
  const tokens = tokenKeeper(deps, store.kind, store, accessToken);
  return {
    platform: store.platform,
    shopDomain: store.shopDomain,
    accessToken,
    webhookSecret,
    // Every answer's API version headers counted and shown on the store (CONTRACT.md §12.4); what the
    // store already shows is not written again.
    onApiVersion: watchApiVersion(store.kind, store.id, store.apiVersion),
    ...(tokens ? { tokens } : {}),
  };
};

/**
 * A reseller's changed order, as its webhooks would have brought it: cancelled (the cancellation
 * first, so an order both new and cancelled has its jobs cancelled from the start and no placement
 * can race it), new, then updated.
 */
const handleResellerOrder = async (store: PolledStore, change: ChangedOrder) => {
  const reseller = storeOnShopOf(store);
  const rawBody = Buffer.from(JSON.stringify(change.payload), 'utf8');
  // An order seen again (it changed since: shipped, edited) is not created again: one read says so.
  const create = async () => (await orderKnown(reseller, rawBody)) || acceptOrder(reseller, rawBody, { via: 'poll' });
  if (text(change.payload.cancelled_at)) {
    await acceptCancellation({ resellerStores: [reseller], sourceStores: [] }, change.payload);
    await create();
    return;
  }
  await create();
  if (text(change.payload.updated_at) !== text(change.payload.created_at))
    await acceptEdit([reseller], change.payload, rawBody);
  await afterTheSale({ resellerStores: [reseller], sourceStores: [] }, change);
};

/**
 * The order's refunds and returns (CONTRACT.md §15), as their webhooks would have brought them: each
 * taken once per job whichever way it came. A return is approved while `open`, ended once `closed`
 * or `canceled` (a reseller's close is not a topic of its: nothing is done for it).
 */
const afterTheSale = async (stores: Parameters<typeof acceptAfterSale>[1], change: ChangedOrder) => {
  const orderId = change.payload.id;
  for (const refund of change.refunds ?? [])
    await acceptAfterSale('refunds/create', stores, { order_id: orderId, ...refund });
  for (const entry of change.returns ?? []) {
    const status = text(entry.status);
    const payload = { order_id: orderId, ...entry };
    if (status === 'open' && stores.resellerStores.length) await acceptAfterSale('returns/approve', stores, payload);
    if (status === 'canceled') await acceptAfterSale('returns/cancel', stores, payload);
    if (status === 'closed' && stores.sourceStores.length) await acceptAfterSale('returns/close', stores, payload);
  }
};

/**
 * Whether a supplier order is one this source store placed: a job of the store recorded it, or its
 * `source_identifier` names a job of the store (placed, not recorded yet: the intake keeps its
 * fulfillments until it is). A shop shared by several resellers' source stores answers every one's
 * orders; the others' are not this store's to route.
 */
const placedBy = async (store: PolledStore, orderId: string, payload: Record<string, unknown>) => {
  if ((await jobIdsBySupplierOrder(store.id, orderId)).length) return true;
  const identifier = text(payload.source_identifier);
  const jobId = identifier?.slice(identifier.lastIndexOf(':') + 1);
  if (!jobId) return false;
  return (await loadJob(jobId))?.sourceStoreId === store.id;
};

const updatedAtOf = (fulfillment: Record<string, unknown>) => text(fulfillment.updated_at) ?? '';

/**
 * A supplier's changed order, as its webhooks would have brought it: each fulfillment (created,
 * new tracking or cancelled) through the fulfillments webhook's intake, in the order of their
 * `updated_at`, then its cancellation.
 */
const handleSupplierOrder = async (store: PolledStore, change: ChangedOrder) => {
  const orderId = String(change.payload.id);
  if (!(await placedBy(store, orderId, change.payload))) return;
  const sourceStore = storeOnShopOf(store);
  const fulfillments = [...change.fulfillments].sort((a, b) => updatedAtOf(a).localeCompare(updatedAtOf(b)));
  // An update of a fulfillment never received is taken as its create (CONTRACT.md §10.3).
  for (const fulfillment of fulfillments)
    await acceptFulfillment([sourceStore], fulfillment, undefined, 'fulfillments/update');
  await afterTheSale({ resellerStores: [], sourceStores: [sourceStore] }, change);
  if (text(change.payload.cancelled_at))
    await acceptCancellation({ resellerStores: [], sourceStores: [sourceStore] }, change.payload);
};

const handleChange = (store: PolledStore, change: ChangedOrder) => {
  if (isHistory(text(change.payload.created_at), store.createdAt)) {
    logger.info('order created before its store: history, not routed by a poll');
    return Promise.resolve();
  }
  return store.kind === 'reseller' ? handleResellerOrder(store, change) : handleSupplierOrder(store, change);
};

/** The watermark moved: never back (a poll of the same store that overlapped this one wins). */
const saveProgress = async (store: PolledStore, mark: NonNullable<ReturnType<typeof advance>>) => {
  if (!(await savePollMark(store, mark))) logger.info('watermark already moved further (or the store is gone)');
};

/** A failure for a time, which ends the poll where it stands: the next poll starts again from there. */
type Stop = { error: unknown };

/** The changes of one poll, handled in the order answered until one fails for a time. */
const pollChanges = async (deps: Deps, store: PolledStore, shop: ShopConnection) => {
  const adapter = deps.platforms(store.platform);
  const since = pollSince(store.mark, store.createdAt);
  const tag = store.kind === 'source' ? SERVICE_ORDER_TAG : undefined;
  const handled: Change[] = [];
  let cursor: string | undefined;
  const until = Date.now() + POLL_BUDGET_MS;
  do {
    let answer: Awaited<ReturnType<typeof adapter.ordersChangedSince>>;
    try {
      answer = await adapter.ordersChangedSince(shop, since, { tag, cursor });
    } catch (error) {
      return { handled, error };
    }
    const stop = await handlePage(store, answer.orders, handled);
    if (stop) return { handled, error: stop.error };
    if (!answer.nextCursor) break;
    cursor = answer.nextCursor;
  } while (handled.length < MAX_ORDERS_PER_POLL && Date.now() < until);
  return { handled, error: undefined };
};

/** One page's changes in the order answered, each added to `handled` once taken (or passed). */
const handlePage = async (store: PolledStore, orders: ChangedOrder[], handled: Change[]): Promise<Stop | undefined> => {
  for (const order of orders) {
    const change = { orderId: String(order.payload.id), updatedAt: order.updatedAt };
    if (!handledAlready(store.mark, change)) {
      const stop = await takeChange(store, order, change);
      if (stop) return stop;
    }
    handled.push(change);
  }
  return undefined;
};

/** One change down its webhook's path: a permanent refusal is logged and passed, a failure for a time stops. */
const takeChange = async (store: PolledStore, order: ChangedOrder, change: Change): Promise<Stop | undefined> => {
  try {
    await withLogContext({ externalOrderId: change.orderId }, () => handleChange(store, order));
    countMetric(BUSINESS_METRICS.pollChangesHandled);
  } catch (error) {
    if (!isPermanent(error)) return { error };
    logger.warn('a changed order its webhook could not take either; passed', { error: (error as Error).message });
  }
  return undefined;
};

/** Polls one store (reseller or source) by its kind and id; never throws for the shop's failures. */
export const pollStore = async (deps: Deps, ref: { kind: StoreKind; id: string }, now = Date.now()) =>
  withLogContext({ storeId: ref.id }, async (): Promise<PollOutcome> => {
    const store = await findPolledStore(ref.kind, ref.id);
    if (!store || store.deletedAt) return 'gone';
    // Uninstalled or its token refused (CONTRACT.md §12.2): never called with its token until reconnected.
    if (store.connection.state !== 'connected') return 'disconnected';
    if (waitingForShop(store.mark, now)) {
      logger.info('the shop asked to wait (429): not polled before', { notBefore: store.mark.notBefore });
      return 'waiting';
    }
    countMetric(BUSINESS_METRICS.storesPolled);
    const shop = await connectionOf(deps, store);
    // Every poll checks the store's webhook subscriptions (CONTRACT.md §12.1); it never fails the poll.
    await keepSubscriptions(deps, store, shop);
    const { handled, error } = await pollChanges(deps, store, shop);
    const mark = advance(store.mark, handled);
    if (mark) await saveProgress(store, mark);
    if (!error) {
      // A success after failures resets their count (the one write of a poll that found nothing).
      if (!mark && (store.mark.failures > 0 || store.mark.notBefore)) await clearFailures(store);
      return 'polled';
    }
    const failure = classify(error, 'internal error');
    // Retry-After obeyed: the next polls of this store make no call before it (scheduled or not).
    const notBefore = failure.kind === 'throttled' ? new Date(now + failure.delaySeconds * 1000).toISOString() : null;
    const failures = await saveFailure(store, notBefore);
    countMetric(BUSINESS_METRICS.pollsFailed);
    if (failures >= POLL_FAILING_AFTER) countMetric(BUSINESS_METRICS.storesFailingToPoll);
    logger.warn('poll failed; the next one starts from the watermark', {
      failure: failure.kind,
      reason: failure.reason,
      failures,
      handled: handled.length,
    });
    return 'failed';
  });
