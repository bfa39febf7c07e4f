/** Which line items go to which source store (CONTRACT.md §5): `vendor` equals `vendorTag`, case-sensitively. */
export interface RoutedGroup<T> {
  sourceStoreId: string;
  lineItems: T[];
}

/**
 * Groups line items by the source store whose tag equals their vendor; items of no active store
 * stay with the reseller. Groups are ordered by source store id so that a redelivered order
 * yields the same positions, and therefore the same job ids.
 */
export const routeLineItems = <T extends { vendor?: string | null }>(
  lineItems: T[],
  storeByVendorTag: Map<string, string>,
): RoutedGroup<T>[] => {
  const groups = new Map<string, T[]>();
  for (const item of lineItems) {
    const storeId = typeof item.vendor === 'string' ? storeByVendorTag.get(item.vendor) : undefined;
    if (!storeId) continue;
    groups.set(storeId, [...(groups.get(storeId) ?? []), item]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([sourceStoreId, items]) => ({ sourceStoreId, lineItems: items }));
};
