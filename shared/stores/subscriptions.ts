import type { Deps } from '../aws/deps.js';
import { config } from '../core/config.js';
import { now } from '../core/ids.js';
import { BUSINESS_METRICS, countMetric, logger } from '../core/telemetry.js';
import {
  recordWebhooks,
  type StoreApiVersion,
  type StoreFields,
  type StoreKind,
  type StoreWebhooks,
} from '../entities/store.js';
import { withPlatformSignal } from '../platforms/http.js';
import {
  classify,
  type Platform,
  type ShopConnection,
  type WebhookSubscription,
  type WebhookTopic,
} from '../platforms/port.js';
import { watchApiVersion } from './connection.js';

/** CONTRACT.md §12.1: the topics each kind of store is subscribed to, and where each goes. */
export const SUBSCRIPTIONS: Record<StoreKind, ReadonlyArray<{ topic: WebhookTopic; path: string }>> = {
  reseller: [
    { topic: 'orders/create', path: '/v1/orders/webhook' },
    { topic: 'orders/updated', path: '/v1/orders/webhook' },
    { topic: 'orders/cancelled', path: '/v1/orders/webhook' },
    { topic: 'app/uninstalled', path: '/v1/app/webhook' },
    // CONTRACT.md §15: the reseller's refunds and returns.
    { topic: 'refunds/create', path: '/v1/orders/webhook' },
    { topic: 'returns/approve', path: '/v1/orders/webhook' },
    { topic: 'returns/cancel', path: '/v1/orders/webhook' },
  ],
  source: [
    { topic: 'fulfillments/create', path: '/v1/fulfillments/webhook' },
    { topic: 'fulfillments/update', path: '/v1/fulfillments/webhook' },
    // CONTRACT.md §16.2: the carrier's progress on each parcel.
    { topic: 'fulfillment_events/create', path: '/v1/fulfillments/webhook' },
    { topic: 'orders/cancelled', path: '/v1/orders/webhook' },
    { topic: 'app/uninstalled', path: '/v1/app/webhook' },
    // CONTRACT.md §15: the supplier's refunds, and its close or cancel of a return the service opened.
    { topic: 'refunds/create', path: '/v1/orders/webhook' },
    { topic: 'returns/close', path: '/v1/orders/webhook' },
    { topic: 'returns/cancel', path: '/v1/orders/webhook' },
  ],
};

/**
 * The access scopes a Shopify topic's subscription needs, any one of them (the 2026-10 schema's topic
 * descriptions, quoted in platform-notes/supplier-sla-platform.md §1.4 and
 * platform-notes/refunds-returns-platform.md §1.2); empty: none listed.
 */
export const TOPIC_SCOPES: Record<WebhookTopic, readonly string[]> = {
  'orders/create': ['read_orders'],
  'orders/updated': ['read_orders'],
  'orders/cancelled': ['read_orders'],
  'fulfillments/create': ['read_fulfillments', 'read_marketplace_orders'],
  'fulfillments/update': ['read_fulfillments', 'read_marketplace_orders'],
  // "Requires the `read_fulfillments` scope." (FULFILLMENT_EVENTS_CREATE)
  'fulfillment_events/create': ['read_fulfillments'],
  'app/uninstalled': [],
  'refunds/create': ['read_orders'],
  'returns/approve': ['read_returns'],
  'returns/cancel': ['read_orders', 'read_returns'],
  'returns/close': ['read_orders', 'read_returns'],
};

/**
 * The scopes the app asks a Shopify store of each kind for: its topics' (above) and its calls'
 * (PLATFORM-API.md): orders both ways; on suppliers the fulfillments and their carrier events
 * (CONTRACT.md §16.2), the fulfillment orders' deadline, merchant-managed or a 3PL's (§16.1),
 * returns and order edits (§15).
 */
export const SCOPES: Record<StoreKind, readonly string[]> = {
  reseller: ['read_orders', 'write_orders', 'read_returns'],
  source: [
    'read_orders',
    'write_orders',
    'read_fulfillments',
    'read_merchant_managed_fulfillment_orders',
    'write_merchant_managed_fulfillment_orders',
    'read_third_party_fulfillment_orders',
    'write_third_party_fulfillment_orders',
    'read_returns',
    'write_returns',
    'write_order_edits',
  ],
};

/** The address of a path at the service's public URL (`PUBLIC_URL`, without its trailing slash). */
export const addressOf = (path: string) => `${config.publicUrl().replace(/\/+$/, '')}${path}`;

/** The subscriptions the store lacks: a topic with no subscription at its address. */
export const missingSubscriptions = (kind: StoreKind, found: WebhookSubscription[]) =>
  SUBSCRIPTIONS[kind].filter(
    ({ topic, path }) => !found.some((s) => s.topic === topic && s.address === addressOf(path)),
  );

/** Why a platform call failed, in words that hold no secret (the adapters redact theirs). */
const reasonOf = (error: unknown) => classify(error, 'internal error while keeping the subscriptions').reason;

/**
 * How long creating a store or giving it new credentials waits for its platform (CONTRACT.md §12.1):
 * well inside the route's 10 s, so a shop that is slow (or throttles, or fails) never turns the
 * answer into a 5xx. What did not finish shows as `failing` with its reason; the next poll, which
 * keeps the subscriptions without this budget, finishes it.
 */
export const STORE_PLATFORM_BUDGET_MS = 2_500;

/** The budget as deployed (`STORE_PLATFORM_BUDGET_MS`, a whole number from 500 to 8,000 ms), else 2.5 s. */
export const storePlatformBudgetMs = () => {
  const configured = Number(process.env.STORE_PLATFORM_BUDGET_MS);
  return Number.isSafeInteger(configured) && configured >= 500 && configured <= 8_000
    ? configured
    : STORE_PLATFORM_BUDGET_MS;
};

/**
 * Keeps a store's webhook subscriptions (CONTRACT.md §12.1): lists them, creates each missing one and
 * records what it found on the store: `healthy`, `repaired` (some were missing and are made again;
 * counted and logged), `failing` (the platform's reason; counted, alarmed when it lasts), `unmanaged`
 * (custom). `created`: the store was just made, so nothing missing is news (`healthy` once made).
 * `budgetMs`: the platform calls are cancelled past it (`failing`, the time spent as its reason).
 * Never throws for the platform: a store is never refused or a poll failed because of it.
 */
export const keepSubscriptions = async (
  deps: Pick<Deps, 'platforms'>,
  store: { kind: StoreKind; id: string; platform: Platform },
  shop: ShopConnection,
  created = false,
  budgetMs?: number,
): Promise<StoreWebhooks> => {
  const webhooks =
    budgetMs === undefined
      ? await checkSubscriptions(deps, store.kind, shop, created)
      : await withinBudget(budgetMs, (signal, progress) =>
          withPlatformSignal(signal, () => checkSubscriptions(deps, store.kind, shop, created, progress)),
        );
  if (webhooks.status === 'repaired') {
    countMetric(BUSINESS_METRICS.subscriptionsRepaired, webhooks.missing.length);
    logger.warn('webhook subscriptions were missing and are made again', {
      storeId: store.id,
      missing: webhooks.missing,
    });
  } else if (webhooks.status === 'failing') {
    countMetric(BUSINESS_METRICS.subscriptionsFailing);
    logger.warn('webhook subscriptions could not be kept', { storeId: store.id, error: webhooks.error });
  } else if (webhooks.status === 'pending') {
    logger.info('webhook subscriptions pending: the shop did not answer within the budget', { storeId: store.id });
  }
  // What was found is shown on the store; a write that fails loses one check, never the caller's work.
  await recordWebhooks(store.kind, store.id, webhooks).catch((error: Error) =>
    logger.error("the store's webhook check could not be recorded", error),
  );
  return webhooks;
};

/**
 * A store just created, or given new credentials, with its subscriptions kept (CONTRACT.md §12.1)
 * within `STORE_PLATFORM_BUDGET_MS`, its secrets as the request gave them (no decrypt). Creating a
 * store never fails for it: `failing` then, and the next poll finishes it. The API version its
 * answers named is recorded and shown, as every other call's (CONTRACT.md §12.4).
 */
export const withSubscriptions = async <S extends StoreFields>(
  deps: Pick<Deps, 'platforms'>,
  kind: StoreKind,
  store: S,
  secrets: { accessToken: string; webhookSecret: string },
  created: boolean,
  budgetMs = storePlatformBudgetMs(),
): Promise<S> => {
  let apiVersion: StoreApiVersion | undefined;
  const writes: Promise<void>[] = [];
  const watch = watchApiVersion(kind, store.id, undefined, (version) => {
    apiVersion = version;
  });
  const onApiVersion: ShopConnection['onApiVersion'] = (notice) => {
    const write = watch(notice);
    if (write) writes.push(write);
  };
  const shop = { platform: store.platform, shopDomain: store.shopDomain, ...secrets, onApiVersion };
  const webhooks = await keepSubscriptions(deps, { kind, ...store }, shop, created, budgetMs);
  // Written before the answer (an invocation's unawaited write may never run), which shows it.
  await Promise.all(writes);
  return { ...store, webhooks, ...(apiVersion ? { apiVersion } : {}) };
};

/** The topics a check found missing and has not made yet: what a check cut short still lacks. */
interface Progress {
  missing: WebhookTopic[];
}

/**
 * A check run within `budgetMs`: past it, its platform calls are cancelled (the signal) and it is
 * `pending` (CONTRACT.md §12.1: the shop did not say no; the next poll finishes it), with the topics
 * it had found missing and not made yet.
 */
const withinBudget = async (
  budgetMs: number,
  check: (signal: AbortSignal, progress: Progress) => Promise<StoreWebhooks>,
): Promise<StoreWebhooks> => {
  const controller = new AbortController();
  const progress: Progress = { missing: [] };
  let timer: NodeJS.Timeout | undefined;
  const spent = new Promise<StoreWebhooks>((resolve) => {
    timer = setTimeout(() => {
      resolve({ status: 'pending', checkedAt: now(), missing: [...progress.missing], error: null });
      controller.abort();
    }, budgetMs);
  });
  try {
    return await Promise.race([check(controller.signal, progress), spent]);
  } finally {
    clearTimeout(timer);
  }
};

/**
 * Lists the subscriptions and makes the missing ones side by side (a slow shop costs one call's time,
 * not one per topic). `progress`: the topics still missing, as they are made.
 */
const checkSubscriptions = async (
  deps: Pick<Deps, 'platforms'>,
  kind: StoreKind,
  shop: ShopConnection,
  created: boolean,
  progress: Progress = { missing: [] },
): Promise<StoreWebhooks> => {
  const checkedAt = now();
  const platform = deps.platforms(shop.platform);
  let missing: Array<{ topic: WebhookTopic; path: string }> = [];
  try {
    const found = await platform.listWebhooks(shop);
    if (found === 'unmanaged') return { status: 'unmanaged', checkedAt, missing: [], error: null };
    missing = missingSubscriptions(kind, found);
    progress.missing = missing.map((m) => m.topic);
    const made = await Promise.allSettled(
      missing.map(async ({ topic, path }) => {
        await platform.createWebhook(shop, topic, addressOf(path));
        progress.missing = progress.missing.filter((t) => t !== topic);
      }),
    );
    const refused = made.find((outcome) => outcome.status === 'rejected');
    if (refused) throw refused.reason;
  } catch (error) {
    return { status: 'failing', checkedAt, missing: missing.map((m) => m.topic), error: reasonOf(error) };
  }
  return missing.length && !created
    ? { status: 'repaired', checkedAt, missing: missing.map((m) => m.topic), error: null }
    : { status: 'healthy', checkedAt, missing: [], error: null };
};
