/** Which line items go to which source store (CONTRACT.md §5): `vendor` equals `vendorTag`, case-sensitively. */
export interface RoutedGroup<T> {
  sourceStoreId: string;
  /** The tag the group's items carry as `vendor`: how the worker finds them again in the stored order. */
  vendorTag: string;
  lineItems: T[];
}

export interface RoutableItem {
  vendor?: string | null;
  giftCard?: boolean;
}

/** A gift card is issued by the reseller's own shop: it never goes to a supplier (CONTRACT.md §10.1). */
export const isRoutable = (item: RoutableItem) => item.giftCard !== true;

/**
 * The items a job with this vendor tag carries, in the order's order: what `routeLineItems` put in
 * its group. A job written before jobs kept their tag (`null`) carries every routable item.
 */
export const itemsOfVendorTag = <T extends RoutableItem>(lineItems: T[], vendorTag: string | null): T[] =>
  lineItems.filter((item) => isRoutable(item) && (vendorTag === null || item.vendor === vendorTag));

/** Why a line item goes to no supplier (CONTRACT.md §10.8). */
export const UNROUTED_REASONS = ['no_source_store', 'no_vendor', 'gift_card', 'test_order'] as const;
export type UnroutedReason = (typeof UNROUTED_REASONS)[number];

/** Every item of a test order a store skips (CONTRACT.md §11, `testOrders: skip`): unrouted, reason `test_order`. */
export const testOrderLines = (count: number): UnroutedLine[] =>
  Array.from({ length: count }, (_, position) => ({ position, reason: 'test_order' as const }));

/**
 * Why the item stays with the reseller, or null when it routes to the active source store whose tag
 * is its `vendor`: a gift card never routes; an item without a vendor (absent, null, or blank) names
 * no store; a vendor that no active store's tag equals names none. `routeLineItems` routes exactly
 * the items this answers null for.
 */
export const unroutedReason = (item: RoutableItem, storeByVendorTag: Map<string, string>): UnroutedReason | null => {
  if (!isRoutable(item)) return 'gift_card';
  if (typeof item.vendor !== 'string' || item.vendor.trim() === '') return 'no_vendor';
  return storeByVendorTag.has(item.vendor) ? null : 'no_source_store';
};

/** An item that stays with the reseller: its position among the order's line items, and why. */
export interface UnroutedLine {
  position: number;
  reason: UnroutedReason;
}

/** The order's items that route nowhere, in the order's order. */
export const unroutedLines = (lineItems: RoutableItem[], storeByVendorTag: Map<string, string>): UnroutedLine[] =>
  classifyLineItems(lineItems, storeByVendorTag).unrouted;

/**
 * Groups line items by the vendor tag of an active source store; items of no active store stay
 * with the reseller (`unroutedLines` says which, and why). Groups are ordered by source store id
 * (then tag) so that a redelivered order yields the same positions, and therefore the same job ids.
 */
export const routeLineItems = <T extends RoutableItem>(
  lineItems: T[],
  storeByVendorTag: Map<string, string>,
): RoutedGroup<T>[] => classifyLineItems(lineItems, storeByVendorTag).groups;

/**
 * The one classifier of an order's lines: each line, looked at once, goes to the group of the active
 * source store whose tag is its `vendor`, or stays with the reseller with why (`unroutedReason`).
 */
export const classifyLineItems = <T extends RoutableItem>(
  lineItems: T[],
  storeByVendorTag: Map<string, string>,
): { groups: RoutedGroup<T>[]; unrouted: UnroutedLine[] } => {
  const groups = new Map<string, RoutedGroup<T>>();
  const unrouted: UnroutedLine[] = [];
  lineItems.forEach((item, position) => {
    const reason = unroutedReason(item, storeByVendorTag);
    const vendorTag = item.vendor;
    const sourceStoreId = typeof vendorTag === 'string' ? storeByVendorTag.get(vendorTag) : undefined;
    if (reason !== null || !sourceStoreId || typeof vendorTag !== 'string') {
      if (reason !== null) unrouted.push({ position, reason });
      return;
    }
    const group = groups.get(vendorTag) ?? { sourceStoreId, vendorTag, lineItems: [] };
    group.lineItems.push(item);
    groups.set(vendorTag, group);
  });
  const order = (a: RoutedGroup<T>, b: RoutedGroup<T>) =>
    compare(a.sourceStoreId, b.sourceStoreId) || compare(a.vendorTag, b.vendorTag);
  return { groups: [...groups.values()].sort(order), unrouted };
};

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * When an order may go to its suppliers (CONTRACT.md §11): a reseller store's routing policy and the
 * judgement of an order against it. Pure: the caller says what it knows of the order (its webhook,
 * or the platform's answer when it was read again) and gets the reasons it is held for.
 */

export const PAYMENT_POLICIES = ['any', 'paid_or_authorized', 'paid'] as const;
export const RISK_POLICIES = ['off', 'hold_cancel', 'hold_investigate'] as const;
export const TEST_ORDER_POLICIES = ['route', 'hold', 'skip'] as const;
/** The longest `holdSeconds`: a week. */
export const MAX_HOLD_DELAY_SECONDS = 604_800;

export interface RoutingPolicy {
  holdSeconds: number;
  payment: (typeof PAYMENT_POLICIES)[number];
  risk: (typeof RISK_POLICIES)[number];
  testOrders: (typeof TEST_ORDER_POLICIES)[number];
}

export const DEFAULT_ROUTING_POLICY: RoutingPolicy = Object.freeze({
  holdSeconds: 0,
  payment: 'paid_or_authorized',
  risk: 'off',
  testOrders: 'hold',
});

/** Why a job is held, in CONTRACT §11's words and order. */
export const HOLD_REASONS = ['delay', 'payment', 'risk', 'test_order', 'manual'] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];

/** The reasons the platform's word on the order can lift: judged again on each re-read, update and poll. */
export const JUDGED_REASONS: readonly HoldReason[] = ['payment', 'risk', 'test_order'];

/** A held job's hold: why, since when, and the end of its `delay` (null without one). */
export interface Hold {
  reasons: HoldReason[];
  since: string;
  until: string | null;
}

/** What is known of an order when it is judged. */
export interface OrderFacts {
  /** `financial_status` lower-cased; null when the platform did not say (counts as paid). */
  financialStatus: string | null;
  /** The platform's recommendation; null when not known yet (a webhook carries none): not held for risk. */
  riskRecommendation: string | null;
  test: boolean;
}

const PAID = new Set(['paid', 'partially_refunded']);

/** Whether the order's payment holds it under the policy's `payment`. */
export const unpaid = (policy: RoutingPolicy, financialStatus: string | null) => {
  if (policy.payment === 'any' || financialStatus === null) return false;
  if (PAID.has(financialStatus)) return false;
  return !(policy.payment === 'paid_or_authorized' && financialStatus === 'authorized');
};

/** Whether the platform's recommendation holds it under the policy's `risk`. */
export const risky = (policy: RoutingPolicy, recommendation: string | null) =>
  (policy.risk !== 'off' && recommendation === 'cancel') ||
  (policy.risk === 'hold_investigate' && recommendation === 'investigate');

/** The reasons the facts give (never `delay` nor `manual`), in CONTRACT's order. */
export const judgedReasons = (policy: RoutingPolicy, facts: OrderFacts): HoldReason[] => [
  ...(unpaid(policy, facts.financialStatus) ? (['payment'] as const) : []),
  ...(risky(policy, facts.riskRecommendation) ? (['risk'] as const) : []),
  ...(facts.test && policy.testOrders === 'hold' ? (['test_order'] as const) : []),
];

/** Whether a test order is never routed (`testOrders: skip`): it is recorded as unrouted, reason `test_order`. */
export const skipsTestOrder = (policy: RoutingPolicy, facts: Pick<OrderFacts, 'test'>) =>
  facts.test && policy.testOrders === 'skip';

/**
 * The hold of an order as it arrives at `at` (ISO): the reasons its facts give and, with a
 * `holdSeconds`, the delay; null when nothing holds it (it goes on at once, as before).
 */
export const holdOnArrival = (policy: RoutingPolicy, facts: OrderFacts, at: string): Hold | null => {
  const reasons: HoldReason[] = [
    ...(policy.holdSeconds > 0 ? (['delay'] as const) : []),
    ...judgedReasons(policy, facts),
  ];
  if (!reasons.length) return null;
  const until = policy.holdSeconds > 0 ? new Date(Date.parse(at) + policy.holdSeconds * 1000).toISOString() : null;
  return { reasons, since: at, until };
};

/**
 * A hold judged again on new facts (a re-read, an update, a poll): the reasons the facts no longer give
 * are dropped, those they give now are added; `delay` is dropped once `at` is past its end; `manual`
 * stays (only an operator ends it). Null when nothing holds the job any more.
 */
export const judgeAgain = (policy: RoutingPolicy, hold: Hold, facts: OrderFacts, at: string): Hold | null => {
  const judged = new Set(judgedReasons(policy, facts));
  const delayed = hold.reasons.includes('delay') && hold.until !== null && Date.parse(hold.until) > Date.parse(at);
  const reasons = HOLD_REASONS.filter(
    (reason) =>
      (reason === 'delay' && delayed) || (reason === 'manual' && hold.reasons.includes('manual')) || judged.has(reason),
  );
  if (!reasons.length) return null;
  return { reasons, since: hold.since, until: delayed ? hold.until : null };
};
