import { JsonText, type LineSummary, summaryText } from '../domain/orders.js';
import {
  type ChangedOrder,
  type FoundOrder,
  lookedUpOrderId,
  type OrderChanges,
  type OrderRead,
  type RiskRecommendation,
  type Tracking,
  type WebhookSubscription,
} from './port.js';

type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const objects = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isObject) : []);

/** An id as its text: a number's digits, a non-empty string as it is; undefined for anything else. */
export const idText = (value: unknown): string | undefined => {
  if (typeof value === 'string') return value === '' ? undefined : value;
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
};

/** An id a REST body carries: digits as a JSON number written exactly (any length), anything else a string. */
export const restId = (id: string): JsonText | string => (/^\d+$/.test(id) ? new JsonText(id) : id);

/** The supplier's line ids of an order as answered, in order; undefined unless every line carries one. */
export const lineItemIdsOf = (order: unknown): string[] | undefined => {
  const lines = isObject(order) ? order.line_items : undefined;
  if (!Array.isArray(lines) || lines.length === 0) return undefined;
  const ids = lines.map((line) => (isObject(line) ? idText(line.id) : undefined));
  return ids.every((id): id is string => id !== undefined) ? ids : undefined;
};

/**
 * The lines of an order as answered (sku, quantity, vendor), in order; undefined unless it shows its
 * lines, each with a whole quantity (custom's lookup answers ids only).
 */
export const lineSummariesOf = (order: unknown): LineSummary[] | undefined => {
  const lines = isObject(order) ? order.line_items : undefined;
  if (!Array.isArray(lines) || lines.length === 0) return undefined;
  const summaries = objects(lines).flatMap((line) => lineSummaryOf(line) ?? []);
  return summaries.length === lines.length ? summaries : undefined;
};

/** One line as a lookup compares it (REST `sku`/`vendor`, Shopify's `sku`/`vendor`); undefined without a quantity. */
export const lineSummaryOf = (line: Json): LineSummary | undefined =>
  typeof line.quantity === 'number' && Number.isInteger(line.quantity)
    ? { sku: summaryText(textField(line.sku)), quantity: line.quantity, vendor: summaryText(textField(line.vendor)) }
    : undefined;

const textField = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? value : null);

/**
 * A lookup's answer (`{"orders": [...]}`) read as `findOrder` answers it: the order that carries the
 * identifier, with its line ids and lines when the answer shows them; null for none, undefined when unreadable.
 */
export const lookedUpOrder = (orders: unknown, sourceIdentifier: string): FoundOrder | null | undefined => {
  const orderId = lookedUpOrderId(orders, sourceIdentifier);
  if (orderId === undefined || orderId === null) return orderId;
  const found = objects(orders).find((order) => idText(order.id) === orderId);
  const lineItemIds = lineItemIdsOf(found);
  const lines = lineSummariesOf(found);
  return { orderId, ...(lineItemIds ? { lineItemIds } : {}), ...(lines ? { lines } : {}) };
};

/** The lines a fulfillment ships, as REST `line_items`. */
export const restLineItems = (lines: Array<{ id: string; quantity: number }>) =>
  lines.map((line) => ({ id: restId(line.id), quantity: line.quantity }));

/** `update_tracking`'s fulfillment: the company ("Unknown" when none), every number and URL, the customer told. */
export const restTrackingUpdate = (tracking: Tracking) => {
  const numbers = tracking.numbers.length > 0 ? tracking.numbers : tracking.number ? [tracking.number] : [];
  const urls = tracking.urls.length > 0 ? tracking.urls : tracking.url ? [tracking.url] : [];
  return {
    tracking_company: tracking.company ?? 'Unknown',
    tracking_numbers: [...numbers],
    tracking_urls: [...urls],
    notify_customer: true,
  };
};

/** An order update's REST body: the fields present, snake_case; null when nothing is present. */
export const restOrderChanges = (changes: OrderChanges): Json | null => {
  const body: Json = {};
  if (changes.shippingAddress !== undefined) body.shipping_address = changes.shippingAddress;
  if (changes.email !== undefined) body.email = changes.email;
  if (changes.note !== undefined) body.note = changes.note;
  if (changes.noteAttributes !== undefined) body.note_attributes = changes.noteAttributes;
  return Object.keys(body).length > 0 ? body : null;
};

/** The query of an "orders changed since" page; the cursor carries on from the previous page. */
export const changesQuery = (since: string, options: { tag?: string; cursor?: string; limit?: number } = {}) => {
  const params = new URLSearchParams({ updated_at_min: since });
  if (options.limit !== undefined) params.set('limit', String(options.limit));
  if (options.tag !== undefined) params.set('tag', options.tag);
  if (options.cursor !== undefined) params.set('page_info', options.cursor);
  return params.toString();
};

const withIdText = (entry: Json, key = 'id'): Json =>
  entry[key] === undefined ? entry : { ...entry, [key]: idText(entry[key]) ?? entry[key] };

/** A REST order (storeplatform_a, custom) as a `ChangedOrder`; undefined without an id or `updated_at`. */
export const changedOrderOf = (order: unknown): ChangedOrder | undefined => {
  if (!isObject(order)) return undefined;
  const id = idText(order.id);
  const updatedAt = order.updated_at;
  // A time the watermark cannot be moved past is no answer to "orders changed since" (a malformed page).
  if (id === undefined || typeof updatedAt !== 'string' || Number.isNaN(Date.parse(updatedAt))) return undefined;
  const { fulfillments, refunds, returns, ...rest } = order;
  const payload: Json = { ...rest, id };
  if (Array.isArray(rest.line_items)) payload.line_items = objects(rest.line_items).map(lineWithCurrentQuantity);
  return {
    payload,
    fulfillments: objects(fulfillments).map((fulfillment) => ({
      ...withIdText(fulfillment),
      order_id: idText(fulfillment.order_id) ?? id,
      ...(Array.isArray(fulfillment.line_items)
        ? { line_items: objects(fulfillment.line_items).map((line) => withIdText(line)) }
        : {}),
    })),
    refunds: objects(refunds).map((refund) => restRefundOf(refund, id)),
    returns: objects(returns).map((entry) => restReturnOf(entry, id)),
    updatedAt,
  };
};

/** A line as the poll carries it: ids as text, `current_quantity` the placed quantity when the platform says none. */
const lineWithCurrentQuantity = (line: Json): Json => ({
  ...withIdText(line),
  current_quantity: line.current_quantity ?? line.quantity,
});

/** A refund as `refunds/create` carries it, its ids as text (CONTRACT §15). */
export const restRefundOf = (refund: Json, orderId: string): Json => ({
  ...withIdText(refund),
  order_id: idText(refund.order_id) ?? orderId,
  refund_line_items: objects(refund.refund_line_items).map((line) => withIdText(withIdText(line), 'line_item_id')),
  refund_shipping_lines: objects(refund.refund_shipping_lines),
  ...(isObject(refund.return) ? { return: withIdText(refund.return) } : {}),
});

/** A return as the poll carries it (`return_line_items`, REST's `line_items` read as those), its ids as text. */
export const restReturnOf = (entry: Json, orderId: string): Json => {
  const { line_items: lines, ...rest } = entry;
  return {
    ...withIdText(rest),
    order_id: idText(entry.order_id) ?? orderId,
    status: typeof entry.status === 'string' ? entry.status.toLowerCase() : entry.status,
    return_line_items: objects(entry.return_line_items ?? lines).map((line) => ({
      ...withIdText(withIdText(withIdText(line), 'line_item_id'), 'fulfillment_line_item_id'),
      return_reason: line.return_reason ?? line.reason ?? null,
      return_reason_note: line.return_reason_note ?? line.note ?? null,
    })),
  };
};

/**
 * A page of `{"orders": [...], "next_page_info"}` as `ordersChangedSince` answers it; undefined when
 * it is not one. `tag`, when given, also filters here: an order whose tags do not carry it is left out.
 */
export const changesPage = (body: unknown, tag?: string) => {
  const list = isObject(body) ? body.orders : undefined;
  if (!Array.isArray(list)) return undefined;
  const orders: ChangedOrder[] = [];
  for (const entry of list) {
    const changed = changedOrderOf(entry);
    if (!changed) return undefined;
    if (tag === undefined || carriesTag(changed.payload.tags, tag)) orders.push(changed);
  }
  const next = isObject(body) ? body.next_page_info : undefined;
  return { orders, nextCursor: typeof next === 'string' && next !== '' ? next : null };
};

/** Tags as REST writes them (a comma-separated string, or a list), compared case aside; absent tags pass. */
const carriesTag = (tags: unknown, tag: string): boolean => {
  if (tags === undefined || tags === null) return true;
  const list = Array.isArray(tags) ? tags.map(String) : String(tags).split(',');
  return list.some((entry) => entry.trim().toLowerCase() === tag.trim().toLowerCase());
};

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
