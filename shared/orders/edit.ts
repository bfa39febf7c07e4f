import * as v from 'valibot';
import { parseInput } from '../core/validation.js';
import type { StoreOnShop } from '../entities/store.js';
import { editResellerOrder } from '../sync-jobs/edit.js';

/** The part of `orders/updated` read besides the order itself (CONTRACT.md §10.6). */
export const OrderUpdatedPayload = v.looseObject({
  id: v.union([v.pipe(v.number(), v.integer(), v.minValue(0)), v.pipe(v.string(), v.minLength(1), v.maxLength(100))]),
  updated_at: v.optional(v.nullable(v.pipe(v.string(), v.isoTimestamp('must be an ISO 8601 time')))),
});

/**
 * A verified `orders/updated` (CONTRACT.md §10.6): the order as it is now, from a reseller's shop.
 * Its versions apply in the order of `updated_at` (compared as instants; one without is the
 * latest). A supplier's own edits of its orders are not the service's to apply: nothing is done.
 */
export const acceptEdit = async (
  resellerStores: StoreOnShop[],
  payload: unknown,
  rawBody: Buffer,
  requestId?: string,
): Promise<string[]> => {
  const { updated_at } = parseInput(OrderUpdatedPayload, payload);
  const updatedAt = new Date(updated_at ?? Date.now()).toISOString();
  for (const reseller of resellerStores) {
    const ids = await editResellerOrder(reseller, rawBody, updatedAt, requestId);
    if (ids.length) return ids;
  }
  return [];
};
