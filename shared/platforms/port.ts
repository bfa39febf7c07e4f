import type { LineSummary, SupplierOrder } from '../domain/orders.js';
import { PlatformError } from './http.js';

/** The three hosting-platform kinds a store can live on (SPEC 2.2). */
export const PLATFORMS = ['storeplatform_a', 'storeplatform_b', 'custom'] as const;
export type Platform = (typeof PLATFORMS)[number];

/**
 * What an adapter needs to call one shop: its platform, its domain and its decrypted secrets.
 * `accessToken` and `webhookSecret` are plaintext here and must never be logged.
 */
export interface ShopConnection {
  platform: Platform;
  shopDomain: string;
  accessToken: string;
  webhookSecret: string;
  /**
   * Told of every answer's API version headers (CONTRACT §12.4), errors included: what lets the caller
   * count a deprecation and show it on the store without the adapters knowing of metrics or stores.
   */
  onApiVersion?: (notice: ApiVersionNotice) => void;
  /**
   * A token that expires (CONTRACT.md §12.3): what the adapters (adapters.ts, adapters.ts) ask for the
   * token to call with, and for a new one after a 401. Absent: `accessToken` is used as it is.
   */
  tokens?: TokenKeeper;
}

/** Keeps a shop's expiring access token fresh (shared/stores/connection.ts); plaintext tokens, never logged. */
export interface TokenKeeper {
  /** The token to call with: refreshed first when in the last tenth of its life (at most 5 minutes). */
  current(): Promise<string>;
  /**
   * After a 401 answered to `refused`: a newer token (refreshed now, or by another worker meanwhile), or
   * null when there is none to be had (the call's 401 stands). Throws when the refresh was refused.
   */
  afterUnauthorized(refused: string): Promise<string | null>;
  /** Whether `token` is no longer the one to call with: replaced, or about to expire (a 401 to it may heal). */
  isStale(token: string): boolean;
}

export interface Tracking {
  company: string | null;
  number: string | null;
  numbers: string[];
  url: string | null;
  urls: string[];
}

export interface PlatformAdapter extends AfterSaleCalls {
  /**
   * Whether the platform takes an idempotency key on its writes (storeplatform_a, custom). Where it
   * does not (storeplatform_b: Shopify), a write that an earlier attempt may have made is looked up
   * before it is sent again (PLATFORM-API.md).
   */
  takesIdempotencyKeys: boolean;
  /**
   * Places the order; with a key, the same key never creates a second order. `status`: the HTTP status
   * answered; `lineItemIds`: the supplier's ids of the order's lines, in the order sent, when answered.
   */
  createOrder(
    shop: ShopConnection,
    order: SupplierOrder,
    idempotencyKey: string,
  ): Promise<{ orderId: string; status?: number; lineItemIds?: string[] }>;
  /**
   * The shop's order with this `source_identifier` (PLATFORM-API.md, "Lookups"), or null when it has
   * none: what settles a creation whose answer was lost. A read: it never creates anything.
   */
  findOrder(shop: ShopConnection, sourceIdentifier: string): Promise<FoundOrder | null>;
  /**
   * Creates a fulfillment with tracking on an order of the shop; with a key, the same key never creates
   * a second one. `resend`: an earlier attempt may have created it (a platform without keys looks for
   * it first); `lineItems`: the order's lines and quantities it ships (absent: every unfulfilled item).
   */
  createFulfillment(
    shop: ShopConnection,
    orderId: string,
    tracking: Tracking,
    idempotencyKey: string,
    options?: FulfillmentOptions,
  ): Promise<{ fulfillmentId: string }>;
  /**
   * New tracking on a fulfillment of an order of the shop, notifying the customer. Idempotent by key where the
   * platform takes keys.
   */
  updateFulfillmentTracking(
    shop: ShopConnection,
    fulfillmentId: string,
    tracking: Tracking,
    idempotencyKey: string,
  ): Promise<void>;
  /** Cancels a fulfillment; one already cancelled is success. */
  cancelFulfillment(shop: ShopConnection, fulfillmentId: string, idempotencyKey: string): Promise<void>;
  /**
   * Cancels an order (refund false, restock true, no customer notification on Shopify); already cancelled is
   * success. A refusal (anything shipped) throws the platform's 422 as a permanent failure.
   */
  cancelOrder(shop: ShopConnection, orderId: string, reason: string, idempotencyKey: string): Promise<void>;
  /**
   * Updates what is present of shipping address, email, note, note attributes. A refusal (shipped, cancelled)
   * throws 422 permanent.
   */
  updateOrder(shop: ShopConnection, orderId: string, changes: OrderChanges, idempotencyKey: string): Promise<void>;
  /**
   * One page of the shop's orders changed since `since` (ISO 8601), oldest change first, at most 250; `tag`
   * filters (a supplier's shop is asked with tag 'reseller-order'); `cursor` is the previous page's nextCursor.
   */
  ordersChangedSince(
    shop: ShopConnection,
    since: string,
    options?: { tag?: string; cursor?: string },
  ): Promise<{ orders: ChangedOrder[]; nextCursor: string | null }>;
  /**
   * The reseller's order as the platform has it now (CONTRACT §11, PLATFORM-API.md "Before the order
   * goes"): `not_found` when the shop no longer has it, `unsupported` where the platform has no such read
   * (custom: judged on its webhooks alone).
   */
  readOrder(shop: ShopConnection, orderId: string): Promise<OrderReadResult>;
  /** The shop's webhook subscriptions (CONTRACT §12.1); `unmanaged` where the platform has none (custom). */
  listWebhooks(shop: ShopConnection): Promise<WebhookSubscription[] | 'unmanaged'>;
  /**
   * Subscribes `address` to `topic` (REST spelling, `orders/create`); `unmanaged` on custom. A platform's
   * refusal (an address it cannot reach) is a 422 permanent failure.
   */
  createWebhook(shop: ShopConnection, topic: WebhookTopic, address: string): Promise<WebhookSubscription | 'unmanaged'>;
  /**
   * A new access token for a refresh token (CONTRACT §12.3). A refusal (400 `invalid_grant`, or 401) throws
   * `RefreshRefusedError`, permanent; `unsupported` on custom, whose pushes are signed, not tokened.
   */
  refreshAccessToken(shop: ShopConnection, grant: RefreshGrant): Promise<RefreshedToken | 'unsupported'>;
  /**
   * Adds tags to the reseller's order (CONTRACT §12.5): never removes one, a tag already there changes
   * nothing, so a repeated call is harmless. `unsupported` on custom (`tagged` stays null).
   */
  addOrderTags(shop: ShopConnection, orderId: string, tags: string[]): Promise<'tagged' | 'unsupported'>;
  // ---- supplier service levels (CONTRACT.md §16.1); optional: a platform without them leaves them out.
  /** The shop's own IANA time zone; null when the platform does not say. */
  shopTimeZone?(shop: ShopConnection): Promise<string | null>;
  /**
   * Sets the deadline of the order's open fulfillment orders (Shopify's `fulfillBy`), idempotent by
   * value; `none` when the order has no open fulfillment order.
   */
  setFulfillmentDeadline?(shop: ShopConnection, orderId: string, deadline: string): Promise<'set' | 'none'>;
}

/** Every call of the after-sale (a call added to AfterSaleCalls without its line here does not compile). */
const AFTER_SALE: Record<keyof AfterSaleCalls, true> = {
  editOrderQuantities: true,
  createReturn: true,
  findReturn: true,
  cancelReturn: true,
  readOrderAfterSale: true,
};
export const AFTER_SALE_CALLS = Object.keys(AFTER_SALE) as (keyof AfterSaleCalls)[];

/**
 * Calls whose module the first of them loads (a chunk of its own locally; in Lambda's one-file bundle,
 * evaluated then): what one order's round trip never calls is never loaded (an adapter, its after-sale).
 * A load that failed is tried again by the next call.
 */
export const callsOnDemand = <C extends object>(names: readonly (keyof C & string)[], load: () => Promise<C>): C => {
  let loading: Promise<C> | undefined;
  const loaded = () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
  const call =
    (name: keyof C & string) =>
    async (...args: unknown[]) =>
      ((await loaded())[name] as (...args: unknown[]) => Promise<unknown>)(...args);
  return Object.fromEntries(names.map((name) => [name, call(name)])) as C;
};

/** The calls of staying connected (CONTRACT §11–§12), which each adapter adds from its own module. */
export type ConnectCalls = Pick<
  PlatformAdapter,
  'readOrder' | 'listWebhooks' | 'createWebhook' | 'refreshAccessToken' | 'addOrderTags'
>;

/** What an answer said of the API version (CONTRACT §12.4), for the caller to count and show. */
export interface ApiVersionNotice {
  platform: Platform;
  shopDomain: string;
  /** The version the call asked for (its path), null when the call names none (token refresh). */
  requested: string | null;
  /** `X-Shopify-API-Version`, null when the answer had none. */
  served: string | null;
  /** `X-Shopify-API-Deprecated-Reason`, null when absent. */
  deprecatedReason: string | null;
  /** Served another version than asked for, or told of a deprecation: what `PlatformApiDeprecated` counts. */
  deprecated: boolean;
}

/** The platform's fraud recommendation in CONTRACT §11's words. */
export type RiskRecommendation = 'accept' | 'investigate' | 'cancel' | 'none';

export type OrderReadResult = { kind: 'found'; order: OrderRead } | { kind: 'not_found' } | { kind: 'unsupported' };

/** The reseller's order as read before it goes (CONTRACT §11). */
export interface OrderRead {
  /** `financial_status` lower-cased (`paid`, `authorized`, `pending`…); null when the platform said none. */
  financialStatus: string | null;
  riskRecommendation: RiskRecommendation;
  test: boolean;
  cancelledAt: string | null;
  updatedAt: string | null;
  /**
   * The order as its orders/create webhook carries it (snake_case, numeric-string ids), with
   * `financial_status` and `test`: what goes to the suppliers, edits included.
   */
  payload: Record<string, unknown>;
}

/** The topics CONTRACT §12.1 subscribes, in the REST spelling (Shopify's GraphQL: `ORDERS_CREATE`…). */
export const WEBHOOK_TOPICS = [
  'orders/create',
  'orders/updated',
  'orders/cancelled',
  'fulfillments/create',
  'fulfillments/update',
  'fulfillment_events/create',
  'app/uninstalled',
  'refunds/create',
  'returns/approve',
  'returns/cancel',
  'returns/close',
] as const;
export type WebhookTopic = (typeof WEBHOOK_TOPICS)[number];

/** One subscription as the platform lists it; `topic` in the REST spelling whatever the platform. */
export interface WebhookSubscription {
  id: string;
  topic: string;
  address: string;
}

/** What a token refresh sends besides the shop: plaintext secrets, never logged. */
export interface RefreshGrant {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
}

export interface RefreshedToken {
  accessToken: string;
  refreshToken: string;
  /** ISO 8601, from `expires_in`; null when the platform gave no lifetime. */
  accessTokenExpiresAt: string | null;
  refreshTokenExpiresAt: string | null;
  scope: string | null;
}

/**
 * An order a lookup found: its id, its line ids in order, and its lines (sku, quantity, vendor) when the
 * platform answered them, which is what tells whose an order found by a shared identifier is.
 */
export interface FoundOrder {
  orderId: string;
  lineItemIds?: string[];
  lines?: LineSummary[];
}

export interface OrderChanges {
  /** As the orders/updated webhook carries `shipping_address` (snake_case keys). */
  shippingAddress?: Record<string, unknown>;
  email?: string;
  note?: string | null;
  noteAttributes?: Array<{ name: string; value: string }>;
}

/**
 * An order as "Orders changed since" answers it, in storeplatform_a's webhook shape whatever the platform:
 * numeric-string ids.
 */
export interface ChangedOrder {
  /**
   * The order exactly as an orders/create webhook would carry it (snake_case JSON: id, line_items with
   * id/quantity/vendor/price/sku/title/variant_title/properties/gift_card, currency, shipping_address, email, note,
   * note_attributes, tags, source_identifier…), plus updated_at, cancelled_at, cancel_reason.
   */
  payload: Record<string, unknown>;
  /**
   * Each fulfillment as a fulfillments/create webhook carries it (id, order_id, status, tracking_company,
   * tracking_number(s), tracking_url(s), line_items [{id, quantity}], updated_at).
   */
  fulfillments: Array<Record<string, unknown>>;
  /**
   * CONTRACT §15: each refund of the order as a `refunds/create` webhook carries it (`RefundPayload`), oldest
   * first; each line of `payload.line_items` also carries `current_quantity` (Shopify's `currentQuantity`:
   * `quantity` never goes down, this does when units are refunded with `restock_type` cancel or edited away).
   */
  refunds: RefundPayload[];
  /** CONTRACT §15: each return of the order (`ReturnPayload`), whatever its status, oldest first. */
  returns: ReturnPayload[];
  updatedAt: string;
}

export interface FulfillmentOptions {
  resend?: boolean;
  lineItems?: Array<{ id: string; quantity: number }>;
}

// ---------- after the sale: refunds and returns (CONTRACT §15, PLATFORM-API.md "Refunds and returns")

/**
 * The calls of CONTRACT §15 on a supplier's (source store's) order, which each adapter adds from its own
 * module (storeplatform-a-after-sale.ts, storeplatform-b-after-sale.ts, custom-after-sale.ts). Errors are
 * `PlatformError`s classified as the other calls' are (429 with its `Retry-After`, Shopify's THROTTLED as a 429,
 * 5xx and lost answers retryable; 401/404/422 permanent). `unsupported` where the platform has no such call.
 */
export interface AfterSaleCalls {
  /**
   * Sets lines of the supplier's order to new ABSOLUTE quantities (`QuantityTarget.quantity`: the units the line
   * should keep, shipped ones included): units the reseller refunded before shipping leave the order. Convergent:
   * a line already at or below its target is not touched, so an edit whose answer was lost, sent again, never
   * removes twice. A target below what the supplier has already shipped is raised to the shipped quantity
   * ("removed what can be"): the answer's `fulfilledQuantity` and `currentQuantity` show what could not go.
   * storeplatform_a (`POST orders/{id}/edits.json`) and custom (`POST /reseller/orders/{id}/edits`) take the key;
   * Shopify (`orderEditBegin`/`orderEditSetQuantity`/`orderEditCommit`) takes none and reads `currentQuantity`
   * first. Setting every line to 0 is allowed, but CONTRACT §10.4 cancels such an order instead (`cancelOrder`).
   * A cancelled order, or a shipment racing the edit twice in a row, throws the platform's 422.
   */
  editOrderQuantities(
    shop: ShopConnection,
    orderId: string,
    lines: QuantityTarget[],
    idempotencyKey: string,
  ): Promise<OrderEditResult>;
  /**
   * Opens a return, already approved (status `open`), on the supplier's order for units it has shipped: each
   * line's quantity split over the supplier's fulfillments of that line (Shopify: `returnableFulfillments`, then
   * `returnCreate`). `request.marker` goes into each line's note (Shopify `returnReasonNote`, REST `note`) and is
   * what `findReturn` looks for. Units not shipped (or already returned) are refused with a 422 permanent error,
   * as the platform refuses them. storeplatform_a and custom take the key; Shopify takes none: with
   * `options.resend` (an earlier attempt's outcome is unknown) the adapter looks for the marker first and
   * answers the return found instead of opening a second one.
   */
  createReturn(
    shop: ShopConnection,
    orderId: string,
    request: ReturnRequest,
    idempotencyKey: string,
    options?: { resend?: boolean },
  ): Promise<PlatformReturn>;
  /**
   * The return of the supplier's order whose lines carry `marker`, not `canceled` or `declined`; null when
   * there is none. `unsupported` on custom (its writes take keys: nothing needs finding).
   */
  findReturn(shop: ShopConnection, orderId: string, marker: string): Promise<PlatformReturn | null | 'unsupported'>;
  /**
   * Cancels a return on the supplier's order while nothing of it was received or refunded; one already
   * `canceled` is success. A refusal (work done on it) throws the platform's 422, permanent. `returnId` as
   * `PlatformReturn.id` (Shopify's GID or its number). `unsupported` on custom.
   */
  cancelReturn(
    shop: ShopConnection,
    orderId: string,
    returnId: string,
    idempotencyKey: string,
  ): Promise<PlatformReturn | 'unsupported'>;
  /**
   * The supplier's order as it stands after the sale, in the shape "Orders changed since" answers (its lines'
   * `current_quantity`, its fulfillments, `refunds` and `returns`); null when the shop has no such order.
   * What a `returns/close`, `returns/cancel` or `refunds/create` webhook is checked against, and what the
   * service reads before deciding an edit. `unsupported` on custom (no read: its webhooks and the poll only).
   */
  readOrderAfterSale(shop: ShopConnection, orderId: string): Promise<ChangedOrder | null | 'unsupported'>;
}

/** A line of a supplier order and the units it should keep (absolute, shipped units included). */
export interface QuantityTarget {
  /** The supplier's line item id (the job line's `sourceLineItemId`). */
  id: string;
  quantity: number;
}

/** What an edit left: every line of the order as it now stands. */
export interface OrderEditResult {
  /** Whether a change was sent (false: every line was already at or below its target, e.g. a lost answer's retry). */
  edited: boolean;
  lines: SupplierLineState[];
}

/** One line of a supplier order after the sale. */
export interface SupplierLineState {
  id: string;
  /** As placed: never goes down (Shopify's `quantity`). */
  quantity: number;
  /** What the order still holds: `quantity` less units removed by edits or refunded with restock type cancel. */
  currentQuantity: number;
  /** Units shipped in fulfillments not cancelled. */
  fulfilledQuantity: number;
}

/** A return to open on the supplier's order (CONTRACT §15.2). */
export interface ReturnRequest {
  /**
   * Names the reseller return and the job (e.g. `reseller return 555 (shop.example #1001) sj_…`), at most 200
   * characters: written into each line's note so that `findReturn` finds it again. Carries no personal data.
   */
  marker: string;
  lines: Array<{
    /** The supplier's line item id. */
    lineItemId: string;
    quantity: number;
    /** The reseller's `return_reason`, lower-case (`unwanted`, `defective`…); null when none. */
    reason: string | null;
  }>;
}

/** A return as the supplier's platform answers it. */
export interface PlatformReturn {
  /** The platform's id as a string: digits (storeplatform_a, custom) or Shopify's `gid://shopify/Return/<n>`. */
  id: string;
  /** Lower-case as the platform spells it: `open`, `closed`, `canceled` (one l), `requested`, `declined`. */
  status: string;
  lines: Array<{
    lineItemId: string;
    /** The supplier's fulfillment line item the units came from (Shopify), null where the platform has none. */
    fulfillmentLineItemId: string | null;
    quantity: number;
    reason: string | null;
  }>;
}

/**
 * A refund as a `refunds/create` webhook carries it (Shopify's REST shape, ids as digit strings): `id`,
 * `order_id`, `created_at`, `note`, `return` (`{"id"}` or null), `refund_line_items` (`[{id, line_item_id,
 * quantity, restock_type, subtotal_set: {shop_money: {amount, currency_code}}}]`, possibly empty: money only),
 * `refund_shipping_lines` (`[{subtotal_amount_set: {shop_money}}]`), `order_adjustments`, `transactions`.
 */
export type RefundPayload = Record<string, unknown>;

/**
 * A return as the poll carries it: `id` (digits), `admin_graphql_api_id` (Shopify's GID, when on Shopify),
 * `order_id`, `status` (`open`, `closed`, `canceled`, `requested`, `declined`), `return_line_items`
 * (`[{id, line_item_id, fulfillment_line_item_id, quantity, return_reason, return_reason_note}]`).
 */
export type ReturnPayload = Record<string, unknown>;

/** Whether two spellings of a return id name the same return: `gid://shopify/Return/77` and `77` do. */
export const sameReturnId = (a: string, b: string) => bareId(a) === bareId(b);
const bareId = (id: string) => /^gid:\/\/[^/]+\/[^/]+\/(.+)$/.exec(id)?.[1] ?? id;

/** The adapter of a platform kind: what use cases are handed as `Deps.platforms`. */
export type AdapterFor = (platform: Platform) => PlatformAdapter;

// ---------- order ids

const GID = /^gid:\/\/[^/]+\/Order\/(.+)$/;

/** The bare id of an order (REST paths, webhooks): a GraphQL gid `gid://platform/Order/7002` becomes `7002`. */
export function restOrderId(orderId: string): string {
  const gid = GID.exec(orderId);
  return gid ? gid[1] : orderId;
}

/** The GraphQL id of an order; a bare number (a REST-style id) is turned into Shopify's gid. */
export function orderGid(orderId: string): string {
  return /^\d+$/.test(orderId) ? `gid://shopify/Order/${orderId}` : orderId;
}

/**
 * Shopify answers `orderCreate` with `gid://shopify/Order/7002` while its webhooks name the order
 * `7002`. The adapter records the number, the canonical form; jobs recorded by older code keep a gid
 * (`gid://platform/Order/7002`), so a lookup tries every spelling and either finds the job.
 */
export const canonicalOrderId = restOrderId;
export const orderIdSpellings = (orderId: string) => {
  const number = canonicalOrderId(orderId);
  const legacyGid = /^\d+$/.test(number) ? `gid://platform/Order/${number}` : number;
  return [...new Set([orderId, number, orderGid(number), legacyGid])];
};

/**
 * The id of the order of `orders` (a lookup's answer) that carries `sourceIdentifier`; an order
 * that does not say which it carries is trusted to be the filter's. Null when none matches,
 * undefined when the answer is not a list of orders with ids.
 */
export function lookedUpOrderId(orders: unknown, sourceIdentifier: string): string | null | undefined {
  if (!Array.isArray(orders)) return undefined;
  const order = orders.find((entry) => {
    const carried = (entry as { source_identifier?: unknown } | null)?.source_identifier;
    return carried === undefined || carried === sourceIdentifier;
  }) as { id?: unknown } | undefined;
  if (!order) return null;
  return typeof order.id === 'string' || typeof order.id === 'number' ? String(order.id) : undefined;
}

/**
 * The one failure policy of both workers (sync jobs and fulfillments): what a failed platform
 * call means for the work it was doing.
 *
 * - `throttled`: the platform asked to wait (429). The work is put off for `delaySeconds`
 *   (`deferralSeconds`) in a fresh message, so throttling never uses up a receive.
 * - `permanent`: 401, 404, 422, GraphQL userErrors. No retry can heal it: the work ends (a sync job
 *   is looked up first when an earlier attempt may have placed its order: order-flow/placing.ts).
 * - `unknown_outcome`: the request left but no usable answer came back (a timeout, a connection
 *   lost mid-call, a 2xx without the created id). The platform may have acted; the workers retry
 *   it like a transient failure, and the idempotency key makes a retry answer with what exists.
 * - `transient`: anything else (5xx, 408, 409, unreachable, or a fault of ours): SQS retries it.
 *
 * `reason` is safe to store and show: a platform's own reason (redacted), or, for an error that is
 * not the platform's, the caller's generic text (`internal` is then true, and the error goes to
 * the log only).
 */
export type Failure =
  | { kind: 'throttled'; reason: string; delaySeconds: number }
  | { kind: 'permanent'; reason: string; status: number }
  | { kind: 'unknown_outcome'; reason: string }
  | { kind: 'transient'; reason: string; internal: boolean };

/** The longest one SQS message can be delayed: a longer wait is made of several such delays. */
export const MAX_DEFERRAL_SECONDS = 900;

/** The longest a 429 is waited for at once (the default throttling budget): a day. */
export const MAX_THROTTLE_WAIT_SECONDS = 86_400;

/**
 * How long a throttled call waits: `Retry-After` (1 s when absent), plus up to a quarter more (and up
 * to a second) of jitter, so throttled work does not come back in step. Never less than the platform
 * asked for: a supplier asking for an hour is called again after an hour, not after 15 minutes (the
 * wait is made of message delays of at most `MAX_DEFERRAL_SECONDS`, `notBefore` on the message).
 */
export const deferralSeconds = (retryAfterSeconds: number | undefined, random: () => number = Math.random) => {
  const wait = Math.min(MAX_THROTTLE_WAIT_SECONDS, Math.max(1, Math.ceil(retryAfterSeconds ?? 1)));
  return Math.min(MAX_THROTTLE_WAIT_SECONDS, wait + Math.floor(random() * (wait / 4 + 1)));
};

/**
 * A message that must not be handled before `notBefore` (epoch ms) and came early (a wait longer than
 * one message delay): how many more seconds it waits, or 0 when its time has come.
 */
export const secondsUntil = (notBefore: number | undefined, now = Date.now()) =>
  notBefore === undefined || notBefore - now <= 1000 ? 0 : Math.ceil((notBefore - now) / 1000);

/** The platform's HTTP status of a failed call, or null when there was none (not reached, no answer). */
export const platformStatusOf = (error: unknown) =>
  error instanceof PlatformError && error.status > 0 ? error.status : null;

/**
 * The status class of a failed platform call, for the platform-error metric: `network` when no
 * answer came (status 0); undefined for an error that is not the platform's.
 */
export const platformStatusClass = (error: unknown): '4xx' | '5xx' | 'network' | undefined => {
  if (!(error instanceof PlatformError)) return undefined;
  if (error.status === 0) return 'network';
  return error.status >= 500 ? '5xx' : '4xx';
};

export const classify = (error: unknown, internalReason: string): Failure => {
  if (!(error instanceof PlatformError)) return { kind: 'transient', reason: internalReason, internal: true };
  const reason = error.message;
  if (error.status === 429) {
    return { kind: 'throttled', reason, delaySeconds: deferralSeconds(error.retryAfterSeconds) };
  }
  if (!error.retryable) return { kind: 'permanent', reason, status: error.status };
  if (error.outcomeUnknown) return { kind: 'unknown_outcome', reason };
  return { kind: 'transient', reason, internal: false };
};

/**
 * What a 429 tells a supplier's pace: `Retry-After` (1 s when absent) and the calls a second the
 * platform states, when it does; undefined for any other failure.
 */
export const throttleOf = (error: unknown) =>
  error instanceof PlatformError && error.status === 429
    ? { retryAfterSeconds: error.retryAfterSeconds ?? 1, ratePerSecond: error.ratePerSecond }
    : undefined;
