/**
 * The platform simulator's shops, kept as a platform keeps them (PLATFORM-API.md, "After the order"
 * and "The simulator"): orders in storeplatform_a's REST shape whatever the shop's platform, their
 * lines with ids and fulfilled quantities, fulfillments with the lines they ship, their tracking and
 * status, and when each last changed. REST, custom, Shopify's GraphQL and the `/_sim` controls all
 * go through these functions, so a refusal is the same refusal everywhere; each platform words it
 * its own way (422, userErrors).
 */

export type Json = Record<string, unknown>;

export interface SimLineItem extends Json {
  id: unknown;
  /** As placed: never goes down, as Shopify's `quantity` (CONTRACT §15). */
  quantity: unknown;
  /** What the order still holds: `quantity` less units edited away or refunded with restock type cancel. */
  current_quantity?: unknown;
  fulfilled_quantity: number;
}

/** A line a fulfillment ships: the order line's id as the order has it, and how many. */
export interface SimShippedLine {
  id: unknown;
  quantity: number;
}

export interface SimFulfillment extends Json {
  id: number;
  order_id: number;
  status: 'success' | 'cancelled';
  tracking_company: unknown;
  tracking_number: unknown;
  tracking_numbers: unknown[];
  tracking_url: unknown;
  tracking_urls: unknown[];
  line_items: SimShippedLine[];
  created_at: string;
  updated_at: string;
  /** The carrier's progress (`PATCH /_sim/fulfillments/{id}`); absent: never reported. */
  shipment_status?: string;
  /** When it first went into transit (Shopify's `inTransitAt`). */
  in_transit_at?: string;
}

export interface SimOrder extends Json {
  id: number;
  line_items: SimLineItem[];
  created_at: string;
  updated_at: string;
  cancelled_at: unknown;
  cancel_reason: unknown;
  fulfillments: SimFulfillment[];
  /** CONTRACT §15 (simulator-after-sale.ts): refunds as `refunds/create` carries them, returns as the poll does. */
  refunds?: Json[];
  returns?: Json[];
  /** An order the simulator never saw, made when a fulfillment named it: it takes any lines. */
  stub?: true;
}

/** Ids and the clock, shared by every shop of one simulator. */
export interface SimLedger {
  // Ids keep increasing across resets, so an id held from before a reset never matches a new entity.
  nextOrderId: number;
  nextFulfillmentId: number;
  nextLineItemId: number;
  /** CONTRACT §15: refund, return and return line ids, unique across shops. */
  nextRefundId?: number;
  nextReturnId?: number;
  nextReturnLineId?: number;
  /** The last change's time (ms): every change is later than the one before, so "oldest first" is an order. */
  lastChange: number;
}

export interface SimShop {
  ledger: SimLedger;
  orders: Map<number, SimOrder>;
}

/** What a platform refuses (422, userErrors): the field it names and why. */
export class SimRefusalError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export const newLedger = (): SimLedger => ({
  nextOrderId: 7001,
  nextFulfillmentId: 9001,
  nextLineItemId: 1_071_823_001,
  lastChange: 0,
});

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const objects = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObject) : []);

/** A value's text: numbers kept exactly as sent are `JSON.rawJSON` objects, whose text is their `rawJSON`. */
export const textOf = (v: unknown): string =>
  isObject(v) && typeof v.rawJSON === 'string' ? v.rawJSON : typeof v === 'string' ? v : JSON.stringify(v);
const countOf = (v: unknown): number => (typeof v === 'number' ? v : Number(textOf(v)));
const sameId = (a: unknown, b: unknown) => textOf(a) === textOf(b);

/** The time of a change: now, or just after the last change when the clock has not moved on. */
/** Shopify's GraphQL reading of a value: an object (else empty), a list of objects, a global id and its number. */
export const asObject = (v: unknown): Json =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
export const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(asObject) : []);
export const gid = (type: string, id: unknown) => `gid://shopify/${type}/${textOf(id)}`;
export const idOf = (value: unknown, type: string): number | null => {
  const match = new RegExp(`^gid://shopify/${type}/(\\d+)$`).exec(String(value ?? ''));
  return match ? Number(match[1]) : null;
};

export function tick(ledger: SimLedger): string {
  ledger.lastChange = Math.max(Date.now(), ledger.lastChange + 1);
  return new Date(ledger.lastChange).toISOString();
}

/** The units the order still holds of a line: its current quantity (CONTRACT §15), else as placed. */
export const currentOf = (line: SimLineItem): number =>
  countOf(
    line.current_quantity === undefined || line.current_quantity === null ? line.quantity : line.current_quantity,
  );
export const remaining = (line: SimLineItem): number => Math.max(0, currentOf(line) - line.fulfilled_quantity);
/** Something of the order has shipped: a fulfillment of it is not cancelled. */
export const hasShipped = (order: SimOrder): boolean => order.fulfillments.some((f) => f.status !== 'cancelled');

export interface PlaceOptions {
  /** The order's id (`/_sim/orders`, stubs); assigned when absent. */
  id?: number;
  /** Keep the ids, times and cancellation given in the input (`/_sim/orders`): a platform assigns its own. */
  keepGiven?: boolean;
  stub?: true;
}

/** Stores a new order: every line gets an id and a fulfilled quantity of 0. */
export function placeOrder(shop: SimShop, input: Json, options: PlaceOptions = {}): SimOrder {
  const { ledger } = shop;
  const id = options.id ?? ledger.nextOrderId;
  ledger.nextOrderId = Math.max(ledger.nextOrderId, id + 1); // later orders must not reuse a given id
  const given = (field: string) => (options.keepGiven ? input[field] : undefined);
  const lines = objects(input.line_items).map((line): SimLineItem => {
    const kept = options.keepGiven && line.id !== undefined && line.id !== null;
    if (kept && /^\d+$/.test(textOf(line.id))) {
      ledger.nextLineItemId = Math.max(ledger.nextLineItemId, Number(textOf(line.id)) + 1);
    }
    const id = kept ? line.id : ledger.nextLineItemId++;
    const current = line.current_quantity ?? line.quantity;
    return { ...line, id, quantity: line.quantity, current_quantity: current, fulfilled_quantity: 0 };
  });
  const at = tick(ledger);
  const order: SimOrder = {
    ...(options.stub ? { stub: true } : {}),
    ...input,
    id,
    line_items: lines,
    created_at: textOrNull(given('created_at')) ?? at,
    updated_at: textOrNull(given('updated_at')) ?? at,
    cancelled_at: given('cancelled_at') ?? null,
    cancel_reason: given('cancel_reason') ?? null,
    fulfillments: [],
    refunds: [],
    returns: [],
  };
  shop.orders.set(id, order);
  return order;
}

const textOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The order a fulfillment names; a stub when the simulator has never seen it (PLATFORM-API.md). */
export const orderOrStub = (shop: SimShop, id: number): SimOrder =>
  shop.orders.get(id) ?? placeOrder(shop, { line_items: [] }, { id, stub: true });

/** What a fulfillment asks to ship, checked against what remains; a stub takes any line and quantity. */
function linesToShip(order: SimOrder, asked: Json[]): SimShippedLine[] {
  if (asked.length === 0) {
    const open = order.line_items.filter((line) => remaining(line) > 0);
    if (order.line_items.length > 0 && open.length === 0) {
      throw new SimRefusalError('line_items', 'Nothing left to fulfill');
    }
    return open.map((line) => ({ id: line.id, quantity: remaining(line) }));
  }
  const shipped: SimShippedLine[] = [];
  for (const item of asked) {
    const quantity = countOf(item.quantity);
    if (order.stub) {
      if (!(Number.isInteger(quantity) && quantity > 0)) {
        throw new SimRefusalError('line_items', `Quantity ${textOf(item.quantity)} is not a positive whole number`);
      }
      shipped.push({ id: item.id, quantity });
      continue;
    }
    const line = order.line_items.find((l) => sameId(l.id, item.id));
    if (!line) throw new SimRefusalError('line_items', `Line item ${textOf(item.id)} does not exist on this order`);
    // The same line named twice in one fulfillment counts once against what remains.
    const left = remaining(line) - shipped.filter((s) => sameId(s.id, line.id)).reduce((n, s) => n + s.quantity, 0);
    if (!(Number.isInteger(quantity) && quantity > 0) || quantity > left) {
      throw new SimRefusalError(
        'line_items',
        `Quantity ${textOf(item.quantity)} is more than the ${left} left to fulfill`,
      );
    }
    shipped.push({ id: line.id, quantity });
  }
  return shipped;
}

const listOr = (many: unknown, one: unknown): unknown[] =>
  Array.isArray(many) ? many : one === undefined || one === null ? [] : [one];

/**
 * Ships on an order (a stub when it is unknown): the lines named, or every line not yet fulfilled
 * when none is named. Refused when the order is cancelled or a quantity is more than remains.
 */
export function fulfil(shop: SimShop, orderId: number, input: Json): SimFulfillment {
  const order = orderOrStub(shop, orderId);
  if (order.cancelled_at) throw new SimRefusalError('base', 'The order is cancelled');
  const shipped = linesToShip(order, objects(input.line_items));
  const numbers = listOr(input.tracking_numbers, input.tracking_number);
  const urls = listOr(input.tracking_urls, input.tracking_url);
  const at = tick(shop.ledger);
  const fulfillment: SimFulfillment = {
    ...input,
    id: shop.ledger.nextFulfillmentId++,
    order_id: order.id,
    status: 'success',
    tracking_company: input.tracking_company ?? null,
    tracking_number: input.tracking_number ?? numbers[0] ?? null,
    tracking_numbers: numbers,
    tracking_url: input.tracking_url ?? urls[0] ?? null,
    tracking_urls: urls,
    line_items: shipped,
    created_at: at,
    updated_at: at,
  };
  for (const { id, quantity } of shipped) {
    const line = order.line_items.find((l) => sameId(l.id, id));
    if (line) line.fulfilled_quantity += quantity;
  }
  order.fulfillments.push(fulfillment);
  order.updated_at = at;
  return fulfillment;
}

/**
 * Cancels an order; one already cancelled stays as it was. Refused when anything of it has shipped,
 * unless the shop itself cancels (`/_sim`, `evenIfShipped`). Undefined when the order is unknown.
 */
export function cancelOrder(shop: SimShop, id: number, reason: unknown, evenIfShipped = false): SimOrder | undefined {
  const order = shop.orders.get(id);
  if (!order || order.cancelled_at) return order;
  if (!evenIfShipped && hasShipped(order)) {
    throw new SimRefusalError('base', 'The order cannot be cancelled: some of it has shipped');
  }
  const at = tick(shop.ledger);
  order.cancelled_at = at;
  order.cancel_reason = reason ?? 'other';
  order.updated_at = at;
  return order;
}

/** What an order update may change (PLATFORM-API.md, "After the order"). */
export const EDITABLE_ORDER_FIELDS = ['shipping_address', 'email', 'note', 'note_attributes'] as const;

/** Applies the editable fields present; refused once anything has shipped or the order is cancelled. */
export function updateOrder(shop: SimShop, id: number, changes: Json): SimOrder | undefined {
  const order = shop.orders.get(id);
  if (!order) return undefined;
  if (order.cancelled_at) throw new SimRefusalError('base', 'The order is cancelled');
  if (hasShipped(order)) throw new SimRefusalError('base', 'The order cannot be changed: some of it has shipped');
  const present = EDITABLE_ORDER_FIELDS.filter((field) => field in changes);
  if (present.length === 0) return order;
  for (const field of present) order[field] = changes[field];
  order.updated_at = tick(shop.ledger);
  return order;
}

export function findFulfillment(shop: SimShop, id: number) {
  for (const order of shop.orders.values()) {
    const fulfillment = order.fulfillments.find((f) => f.id === id);
    if (fulfillment) return { order, fulfillment };
  }
  return undefined;
}

/** New tracking on a fulfillment: the company, numbers and URLs present replace the old ones. */
export function updateTracking(shop: SimShop, id: number, input: Json): SimFulfillment | undefined {
  const found = findFulfillment(shop, id);
  if (!found) return undefined;
  const { order, fulfillment } = found;
  if (fulfillment.status === 'cancelled') throw new SimRefusalError('base', 'The fulfillment is cancelled');
  if ('tracking_company' in input) fulfillment.tracking_company = input.tracking_company ?? null;
  if ('tracking_numbers' in input || 'tracking_number' in input) {
    fulfillment.tracking_numbers = listOr(input.tracking_numbers, input.tracking_number);
    fulfillment.tracking_number = fulfillment.tracking_numbers[0] ?? null;
  }
  if ('tracking_urls' in input || 'tracking_url' in input) {
    fulfillment.tracking_urls = listOr(input.tracking_urls, input.tracking_url);
    fulfillment.tracking_url = fulfillment.tracking_urls[0] ?? null;
  }
  if ('notify_customer' in input) fulfillment.notify_customer = input.notify_customer;
  fulfillment.updated_at = tick(shop.ledger);
  order.updated_at = fulfillment.updated_at;
  return fulfillment;
}

/** Statuses past which the carrier has the parcel (Shopify's `inTransitAt` is set at the first). */
const MOVING = ['in_transit', 'out_for_delivery', 'attempted_delivery', 'ready_for_pickup', 'delivered'];
let nextEventId = 1;

/**
 * The carrier moves a parcel (CONTRACT.md §16.2): its `shipment_status`, as Shopify keeps it on the
 * fulfillment (the order's `updated_at` moves, so a poll sees it), and the `fulfillment_events/create`
 * payload that stands for it, `happened_at` the carrier's time (given, else now).
 */
export function moveParcel(shop: SimShop, id: number, status: string, happenedAt?: string) {
  const found = findFulfillment(shop, id);
  if (!found) return undefined;
  const { order, fulfillment } = found;
  const at = tick(shop.ledger);
  fulfillment.shipment_status = status;
  if (MOVING.includes(status) && !fulfillment.in_transit_at) fulfillment.in_transit_at = happenedAt ?? at;
  fulfillment.updated_at = at;
  order.updated_at = at;
  const event = {
    id: nextEventId++,
    fulfillment_id: fulfillment.id,
    order_id: order.id,
    status,
    happened_at: happenedAt ?? at,
    created_at: at,
    updated_at: at,
  };
  return { fulfillment, event };
}

/** Cancels a fulfillment: its quantities are unfulfilled again. One already cancelled stays as it was. */
export function cancelFulfillment(shop: SimShop, id: number): SimFulfillment | undefined {
  const found = findFulfillment(shop, id);
  if (!found || found.fulfillment.status === 'cancelled') return found?.fulfillment;
  const { order, fulfillment } = found;
  for (const { id: lineId, quantity } of fulfillment.line_items) {
    const line = order.line_items.find((l) => sameId(l.id, lineId));
    if (line) line.fulfilled_quantity = Math.max(0, line.fulfilled_quantity - quantity);
  }
  fulfillment.status = 'cancelled';
  fulfillment.updated_at = tick(shop.ledger);
  order.updated_at = fulfillment.updated_at;
  return fulfillment;
}

// ---------------------------------------------------------------- orders changed since

/** An order's tags (a comma-separated string, or a list), compared as platforms do: case aside. */
export const hasTag = (order: SimOrder, tag: string): boolean => {
  const tags = Array.isArray(order.tags) ? order.tags.map(String) : String(order.tags ?? '').split(',');
  return tags.some((t) => t.trim().toLowerCase() === tag.trim().toLowerCase());
};

/** Where an order stands in "oldest change first": its last change, then its id. */
export type ChangePosition = [number, number];
export const changePosition = (order: SimOrder): ChangePosition => [Date.parse(order.updated_at), order.id];
export const comparePositions = (a: ChangePosition, b: ChangePosition): number => a[0] - b[0] || a[1] - b[1];

export interface ChangesQuery {
  /** Orders changed at or after this time (ms); null for all. */
  since: number | null;
  tag: string | null;
  /** The position of the last order of the previous page. */
  after: ChangePosition | null;
}

/**
 * One page of the orders changed since a time, oldest change first, and the position to go on from
 * (null on the last page). Stubs are left out: the simulator knows nothing of their orders but a
 * fulfillment, and a platform's list never shows an order it does not have.
 */
export function changedOrders(shop: SimShop, query: ChangesQuery, limit: number) {
  const matching = [...shop.orders.values()]
    .filter((order) => !order.stub)
    .filter((order) => query.since === null || Date.parse(order.updated_at) >= query.since)
    .filter((order) => query.tag === null || hasTag(order, query.tag))
    .filter((order) => query.after === null || comparePositions(changePosition(order), query.after) > 0)
    .sort((a, b) => comparePositions(changePosition(a), changePosition(b)));
  const orders = matching.slice(0, limit);
  const last = orders.at(-1);
  return { orders, next: matching.length > orders.length && last ? changePosition(last) : null };
}

/** Cursors are opaque to callers: base64url of JSON. Undefined for one that does not decode. */
export const encodeCursor = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
export const decodeCursor = (cursor: string): unknown => {
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
};
export const isPosition = (v: unknown): v is ChangePosition =>
  Array.isArray(v) && v.length === 2 && v.every((n) => typeof n === 'number' && Number.isFinite(n));

// ---------------------------------------------------------------- staying connected (CONTRACT §11–§12)

/** An order's tags as a list (a comma-separated string, or a list), empty ones left out. */
export const tagsOf = (order: SimOrder): string[] =>
  (Array.isArray(order.tags) ? order.tags.map(String) : String(order.tags ?? '').split(','))
    .map((tag) => tag.trim())
    .filter(Boolean);

/**
 * Adds tags to an order, as platforms do: never removes one, a tag already there (case aside) changes
 * nothing, and only a tag actually added moves `updated_at`. Kept as REST writes them, comma-separated.
 * Undefined when the order is unknown.
 */
export function addTags(shop: SimShop, id: number, tags: string[]): SimOrder | undefined {
  const order = shop.orders.get(id);
  if (!order) return undefined;
  const current = tagsOf(order);
  const added: string[] = [];
  for (const tag of tags.map((t) => t.trim()).filter(Boolean)) {
    const known = [...current, ...added].some((t) => t.toLowerCase() === tag.toLowerCase());
    if (!known) added.push(tag);
  }
  if (added.length === 0) return order;
  order.tags = [...current, ...added].join(', ');
  order.updated_at = tick(shop.ledger);
  return order;
}

/** What the shop itself may change on an order in a test (`PATCH /_sim/orders/{id}`). */
export const SHOP_CHANGES = ['financial_status', 'risk_recommendation', 'test', 'shipping_address', 'email'] as const;

/**
 * The shop changes an order without a webhook (a payment captured, a risk assessed, an address edited):
 * the fields present are set, cancelled or shipped alike, and `updated_at` moves so a poll sees it.
 */
export function changeOrderAsShop(shop: SimShop, id: number, changes: Json): SimOrder | undefined {
  const order = shop.orders.get(id);
  if (!order) return undefined;
  const present = SHOP_CHANGES.filter((field) => field in changes);
  if (present.length === 0) return order;
  for (const field of present) order[field] = changes[field];
  order.updated_at = tick(shop.ledger);
  return order;
}
