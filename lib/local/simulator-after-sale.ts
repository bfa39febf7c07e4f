/**
 * The platform simulator after the sale (CONTRACT §15, PLATFORM-API.md "Refunds and returns" and "The
 * simulator"): a shop's refunds (its lines' `current_quantity` drop for restock type `cancel`), returns
 * opened on the units it shipped (split over its fulfillment line items), closed and cancelled, and edits to
 * absolute quantities. Kept on the orders of simulator-store.ts, in the shapes the webhooks carry
 * (`refunds/create`; the poll's returns), so REST, custom, Shopify's GraphQL and the `/_sim` controls refuse
 * the same things: a return of units not fulfilled, an edit below what has shipped, a refund of more than the
 * line holds, cancelling a return once a refund went through it.
 */
import {
  currentOf,
  type Json,
  remaining,
  type SimFulfillment,
  type SimLineItem,
  type SimOrder,
  SimRefusalError,
  type SimShop,
  textOf,
  tick,
} from './simulator-store.js';

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const objects = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObject) : []);
const countOf = (v: unknown): number => (typeof v === 'number' ? v : Number(textOf(v)));
const sameId = (a: unknown, b: unknown) => a !== undefined && a !== null && textOf(a) === textOf(b);
const wholeCount = (v: unknown, what: string, min = 1): number => {
  const n = countOf(v);
  if (!Number.isInteger(n) || n < min) throw new SimRefusalError('quantity', `${what} ${textOf(v)} is not valid`);
  return n;
};

/** Return statuses that no longer hold units (Shopify spells `canceled` with one l). */
const GONE = new Set(['canceled', 'declined']);

export const refundsOf = (order: SimOrder): Json[] => (order.refunds ??= []);
export const returnsOf = (order: SimOrder): Json[] => (order.returns ??= []);

const lineOf = (order: SimOrder, id: unknown): SimLineItem => {
  const line = order.line_items.find((l) => sameId(l.id, id));
  if (!line) throw new SimRefusalError('line_item_id', `Line item ${textOf(id)} does not exist on this order`);
  return line;
};

// ---------------------------------------------------------------- fulfillment line items

/** A fulfillment's line as Shopify names it: `<fulfillment id × 1000 + its index>`, on every platform. */
export const fulfillmentLineItemId = (fulfillment: SimFulfillment, index: number) => fulfillment.id * 1000 + index;

export interface SimFulfillmentLine {
  id: number;
  fulfillment: SimFulfillment;
  lineItemId: unknown;
  quantity: number;
  /** Units of it in returns not canceled or declined. */
  returned: number;
}

/** The order's fulfillment line items, of fulfillments not cancelled, with what is already in a return. */
export const fulfillmentLines = (order: SimOrder): SimFulfillmentLine[] => {
  const returned = new Map<number, number>();
  for (const entry of returnsOf(order).filter((r) => !GONE.has(String(r.status)))) {
    for (const line of objects(entry.return_line_items)) {
      const id = countOf(line.fulfillment_line_item_id);
      returned.set(id, (returned.get(id) ?? 0) + countOf(line.quantity));
    }
  }
  return order.fulfillments
    .filter((fulfillment) => fulfillment.status !== 'cancelled')
    .flatMap((fulfillment) =>
      fulfillment.line_items.map((shipped, index) => {
        const id = fulfillmentLineItemId(fulfillment, index);
        return { id, fulfillment, lineItemId: shipped.id, quantity: shipped.quantity, returned: returned.get(id) ?? 0 };
      }),
    );
};

// ---------------------------------------------------------------- returns

export interface ReturnLineInput {
  /** The order's line: its units are taken from its fulfillment line items in turn. */
  line_item_id?: unknown;
  /** Or one fulfillment line item (Shopify's `returnCreate`). */
  fulfillment_line_item_id?: unknown;
  quantity: unknown;
  return_reason?: unknown;
  return_reason_note?: unknown;
}

const notFulfilled = (asked: number, left: number, what: string) =>
  new SimRefusalError(
    'return_line_items',
    `Quantity ${asked} of ${what} is more than the ${left} fulfilled and not yet returned`,
  );

/** The fulfillment line items a requested line takes its units from; refused past what was shipped. */
function splitOverFulfillments(order: SimOrder, lines: SimFulfillmentLine[], input: ReturnLineInput) {
  const quantity = wholeCount(input.quantity, 'Quantity');
  const byFli = input.fulfillment_line_item_id !== undefined && input.fulfillment_line_item_id !== null;
  const candidates = byFli
    ? lines.filter((l) => sameId(l.id, input.fulfillment_line_item_id))
    : lines.filter((l) => sameId(l.lineItemId, lineOf(order, input.line_item_id).id));
  if (byFli && candidates.length === 0) {
    throw new SimRefusalError(
      'return_line_items',
      `Fulfillment line item ${textOf(input.fulfillment_line_item_id)} does not exist`,
    );
  }
  let left = quantity;
  const taken: Array<{ fli: SimFulfillmentLine; quantity: number }> = [];
  for (const fli of candidates) {
    const take = Math.min(left, fli.quantity - fli.returned);
    if (take <= 0) continue;
    taken.push({ fli, quantity: take });
    fli.returned += take;
    left -= take;
  }
  if (left > 0) {
    const what = byFli
      ? `fulfillment line item ${textOf(input.fulfillment_line_item_id)}`
      : `line item ${textOf(input.line_item_id)}`;
    throw notFulfilled(quantity, quantity - left, what);
  }
  return taken;
}

/**
 * Opens a return, approved (`open`), on units the shop shipped; refused (422) for units not fulfilled or
 * already in a return, on a stub or an unknown line. Undefined when the order is unknown.
 */
export function openReturn(shop: SimShop, orderId: number, inputs: ReturnLineInput[]): Json | undefined {
  const order = shop.orders.get(orderId);
  if (!order) return undefined;
  if (inputs.length === 0) throw new SimRefusalError('return_line_items', "Return line items can't be blank");
  const lines = fulfillmentLines(order);
  const taken = inputs.flatMap((input) => splitOverFulfillments(order, lines, input).map((t) => ({ ...t, input })));
  const { ledger } = shop;
  ledger.nextReturnId ??= 5001;
  ledger.nextReturnLineId ??= 60001;
  const id = ledger.nextReturnId++;
  const at = tick(ledger);
  const made: Json = {
    id,
    admin_graphql_api_id: `gid://shopify/Return/${id}`,
    name: `#${order.id}-R${returnsOf(order).length + 1}`,
    order_id: order.id,
    status: 'open',
    created_at: at,
    closed_at: null,
    return_line_items: taken.map(({ fli, quantity, input }) => {
      const lineId = ledger.nextReturnLineId!++;
      return {
        id: lineId,
        admin_graphql_api_id: `gid://shopify/ReturnLineItem/${lineId}`,
        line_item_id: fli.lineItemId,
        fulfillment_line_item_id: fli.id,
        quantity,
        return_reason: typeof input.return_reason === 'string' ? input.return_reason.toLowerCase() : 'unknown',
        return_reason_note: typeof input.return_reason_note === 'string' ? input.return_reason_note : '',
      };
    }),
  };
  returnsOf(order).push(made);
  order.updated_at = at;
  return made;
}

/** A return by its id (digits, or Shopify's GID's number) on any order of the shop. */
export function findReturn(shop: SimShop, id: number): { order: SimOrder; entry: Json } | undefined {
  for (const order of shop.orders.values()) {
    const entry = returnsOf(order).find((r) => r.id === id);
    if (entry) return { order, entry };
  }
  return undefined;
}

/** The supplier closes a return; one closed stays as it was, a canceled one is refused. */
export function closeReturn(shop: SimShop, id: number): Json | undefined {
  const found = findReturn(shop, id);
  if (!found || found.entry.status === 'closed') return found?.entry;
  if (found.entry.status !== 'open')
    throw new SimRefusalError('id', `A ${String(found.entry.status)} return cannot be closed`);
  const at = tick(shop.ledger);
  Object.assign(found.entry, { status: 'closed', closed_at: at });
  found.order.updated_at = at;
  return found.entry;
}

/**
 * Cancels a return while nothing was done on it; one canceled stays as it was. Refused once it is closed or a
 * refund went through it (Shopify: "only available before any work has been done on the return").
 */
export function cancelReturn(shop: SimShop, id: number): Json | undefined {
  const found = findReturn(shop, id);
  if (!found || found.entry.status === 'canceled') return found?.entry;
  const refunded = refundsOf(found.order).some((refund) => isObject(refund.return) && refund.return.id === id);
  if (found.entry.status !== 'open' || refunded) {
    throw new SimRefusalError('id', 'The return cannot be canceled: work has been done on it');
  }
  Object.assign(found.entry, { status: 'canceled' });
  found.order.updated_at = tick(shop.ledger);
  return found.entry;
}

// ---------------------------------------------------------------- refunds

const moneySet = (amount: string, currency: string) => ({
  shop_money: { amount, currency_code: currency },
  presentment_money: { amount, currency_code: currency },
});
const times = (price: unknown, quantity: number) => (Number(textOf(price ?? '0')) * quantity).toFixed(2);
const currencyOf = (order: SimOrder) => (typeof order.currency === 'string' ? order.currency : 'USD');

/** Units of a line already refunded with a restock type other than cancel (those stay in `current_quantity`). */
const refundedKept = (order: SimOrder, line: SimLineItem) =>
  refundsOf(order)
    .flatMap((refund) => objects(refund.refund_line_items))
    .filter((item) => sameId(item.line_item_id, line.id) && item.restock_type !== 'cancel')
    .reduce((n, item) => n + countOf(item.quantity), 0);

/** Checks one refund line; a `cancel` one takes unfulfilled units only. */
function refundLine(order: SimOrder, input: Json) {
  const line = lineOf(order, input.line_item_id);
  const quantity = wholeCount(input.quantity, 'Quantity');
  const restockType = typeof input.restock_type === 'string' ? input.restock_type : 'no_restock';
  const left = restockType === 'cancel' ? remaining(line) : currentOf(line) - refundedKept(order, line);
  if (quantity > left) {
    const what = restockType === 'cancel' ? 'unfulfilled' : 'refundable';
    throw new SimRefusalError('refund_line_items', `Quantity ${quantity} is more than the ${left} ${what}`);
  }
  return { line, quantity, restockType };
}

/**
 * The shop refunds (`POST /_sim/orders/{id}/refunds`; on a supplier's order, the supplier's refund): its
 * lines' `current_quantity` drop for restock type `cancel`, the refund kept as `refunds/create` carries it,
 * `shipping` `{amount}` as a refunded shipping line, `return` `{id}` naming a return of the order. A refund
 * without lines is money only. Undefined when the order is unknown.
 */
export function refundOrder(shop: SimShop, orderId: number, input: Json): Json | undefined {
  const order = shop.orders.get(orderId);
  if (!order) return undefined;
  const lines = objects(input.refund_line_items).map((item) => refundLine(order, item));
  const returnId = isObject(input.return) ? countOf(input.return.id) : null;
  if (returnId !== null && !returnsOf(order).some((r) => r.id === returnId)) {
    throw new SimRefusalError('return', `Return ${returnId} is not a return of this order`);
  }
  const currency = currencyOf(order);
  const { ledger } = shop;
  ledger.nextRefundId ??= 8_900_001;
  const id = ledger.nextRefundId++;
  const shipping = isObject(input.shipping) ? textOf(input.shipping.amount ?? '0.00') : null;
  const at = tick(ledger);
  const refund: Json = {
    id,
    admin_graphql_api_id: `gid://shopify/Refund/${id}`,
    order_id: order.id,
    created_at: at,
    processed_at: at,
    note: typeof input.note === 'string' ? input.note : null,
    restock: lines.some((l) => l.restockType !== 'no_restock'),
    return: returnId === null ? null : { id: returnId, admin_graphql_api_id: `gid://shopify/Return/${returnId}` },
    refund_line_items: lines.map(({ line, quantity, restockType }, index) => ({
      id: id * 100 + index,
      line_item_id: line.id,
      quantity,
      restock_type: restockType,
      location_id: null,
      subtotal_set: moneySet(times(line.price, quantity), currency),
      total_tax_set: moneySet('0.00', currency),
    })),
    refund_shipping_lines:
      shipping === null
        ? []
        : [{ id: id * 100 + 99, subtotal_amount_set: moneySet(Number(shipping).toFixed(2), currency) }],
    order_adjustments: [],
    transactions: [],
    duties: [],
  };
  for (const { line, quantity, restockType } of lines) {
    if (restockType === 'cancel') line.current_quantity = currentOf(line) - quantity;
  }
  refundsOf(order).push(refund);
  order.updated_at = at;
  return refund;
}

// ---------------------------------------------------------------- edits

/**
 * Sets lines to absolute quantities (`current_quantity`), all or none: refused for a line not on the order, a
 * quantity past what was placed, below what has shipped ("units already fulfilled"), or a cancelled order.
 * A line already at its quantity is left as it is; `updated_at` moves only when one changed.
 */
export function editQuantities(shop: SimShop, orderId: number, inputs: Json[]): SimOrder | undefined {
  const order = shop.orders.get(orderId);
  if (!order) return undefined;
  if (order.cancelled_at) throw new SimRefusalError('base', 'The order is cancelled');
  if (inputs.length === 0) throw new SimRefusalError('line_items', "Line items can't be blank");
  const changes = inputs.map((input) => {
    const line = lineOf(order, input.id);
    const quantity = wholeCount(input.quantity, 'Quantity', 0);
    if (quantity > countOf(line.quantity)) {
      throw new SimRefusalError('line_items', `Quantity ${quantity} is more than the ${textOf(line.quantity)} ordered`);
    }
    if (quantity < line.fulfilled_quantity) {
      throw new SimRefusalError(
        'line_items',
        `Line item ${textOf(line.id)}: ${line.fulfilled_quantity} units are already fulfilled and cannot be removed`,
      );
    }
    return { line, quantity };
  });
  const changed = changes.filter(({ line, quantity }) => currentOf(line) !== quantity);
  if (changed.length === 0) return order;
  for (const { line, quantity } of changed) line.current_quantity = quantity;
  order.updated_at = tick(shop.ledger);
  return order;
}
