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
