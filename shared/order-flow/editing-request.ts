import * as v from 'valibot';
import { parseInput } from '../core/errors.js';
import { type ResellerOrder, readResellerOrder } from '../domain/orders.js';
import type { OrderFacts } from '../domain/routing.js';
import type { StoreOnShop } from '../entities/store.js';
import { editResellerOrder } from './editing.js';
import { judgeHeldAgain } from './holding.js';

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
    if (!ids.length) continue;
    // Its held jobs judged again on the order as it is now (CONTRACT.md §11): paid, they go on.
    const reading = readResellerOrder(rawBody.toString('utf8'));
    if (reading.ok) await judgeHeldAgain(reseller.id, reading.order.externalOrderId, factsOf(reading.order, payload));
    return ids;
  }
  return [];
};

/** What an update says of the order's payment, risk (a REST poll's `risk_recommendation`) and test. */
const factsOf = (order: ResellerOrder, payload: unknown): OrderFacts => {
  const risk = (payload as { risk_recommendation?: unknown } | null)?.risk_recommendation;
  return {
    financialStatus: order.financialStatus,
    riskRecommendation: typeof risk === 'string' ? risk.toLowerCase() : null,
    test: order.test,
  };
};
