import * as v from 'valibot';
import { parseInput } from '../core/errors.js';
import type { StoreOnShop } from '../entities/store.js';
import { cancelBySourceStore, cancelResellerOrder } from './cancelling.js';

const Id = v.union(
  [v.pipe(v.number(), v.integer(), v.minValue(0)), v.pipe(v.string(), v.minLength(1), v.maxLength(100))],
  'must be an id, a number or a string',
);

/** The part of `orders/cancelled` the service reads (CONTRACT.md §10.4–10.5); the rest is ignored. */
export const OrderCancelledPayload = v.pipe(
  v.looseObject({
    id: Id,
    cancel_reason: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2000)))),
    cancelled_at: v.optional(v.nullable(v.string())),
  }),
  v.transform((payload) => ({ orderId: String(payload.id), reason: payload.cancel_reason ?? null })),
);

/**
 * A verified `orders/cancelled`. The shop may be a reseller's (its order's jobs stop or are
 * cancelled) or a supplier's (the job that placed that order is cancelled): the stores whose secret
 * verified are asked in that order, and the first that has the order takes it. A shop that is both
 * finds the one that matches the order id. Answers the ids of the jobs it concerns.
 */
export const acceptCancellation = async (
  stores: { resellerStores: StoreOnShop[]; sourceStores: StoreOnShop[] },
  payload: unknown,
  requestId?: string,
): Promise<string[]> => {
  const { orderId, reason } = parseInput(OrderCancelledPayload, payload);
  for (const reseller of stores.resellerStores) {
    const ids = await cancelResellerOrder(reseller, orderId, reason, requestId);
    if (ids.length) return ids;
  }
  return stores.sourceStores.length ? cancelBySourceStore(stores.sourceStores, orderId, reason) : [];
};
