/**
 * What the adapters share to read an order before it goes (CONTRACT §11): the platform's words turned
 * into CONTRACT's (lower case, an unknown risk as `none`) and a REST order read into an `OrderRead`.
 */
import type { OrderRead, RiskRecommendation, WebhookSubscription } from './port.js';
import { changedOrderOf, idText, isObject, objects } from './rest.js';

const RISKS = new Set<RiskRecommendation>(['accept', 'investigate', 'cancel', 'none']);

/** A risk recommendation in CONTRACT's words; absent or unknown (Shopify's `PENDING`…) reads `none`. */
export const riskOf = (value: unknown): RiskRecommendation => {
  const word = typeof value === 'string' ? value.toLowerCase() : 'none';
  return RISKS.has(word as RiskRecommendation) ? (word as RiskRecommendation) : 'none';
};

/** A financial status lower-cased (`PAID` → `paid`); null when the platform said none. */
export const financialStatusOf = (value: unknown): string | null =>
  typeof value === 'string' && value !== '' ? value.toLowerCase() : null;

const stringOrNull = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);

/**
 * A REST order (`GET /orders/{id}.json`'s `order`) as an `OrderRead`: the webhook's shape with numeric-string
 * ids, its fulfillments left out; undefined without an id or `updated_at`.
 */
export function restOrderRead(order: unknown): OrderRead | undefined {
  const changed = changedOrderOf(order);
  if (!changed || !isObject(order)) return undefined;
  return {
    financialStatus: financialStatusOf(order.financial_status),
    riskRecommendation: riskOf(order.risk_recommendation),
    test: order.test === true,
    cancelledAt: stringOrNull(order.cancelled_at),
    updatedAt: changed.updatedAt,
    payload: changed.payload,
  };
}

/** A REST subscription list (`{"webhooks": [...]}`); undefined when it is not one. */
export function restWebhooksOf(list: unknown): WebhookSubscription[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const subscriptions = objects(list).flatMap((entry) => restWebhookOf(entry) ?? []);
  return subscriptions.length === list.length ? subscriptions : undefined;
}

export function restWebhookOf(entry: unknown): WebhookSubscription | undefined {
  if (!isObject(entry)) return undefined;
  const id = idText(entry.id);
  if (id === undefined || typeof entry.topic !== 'string' || typeof entry.address !== 'string') return undefined;
  return { id, topic: entry.topic, address: entry.address };
}
