/**
 * The reseller's order as the platform's `orders/create` carries it (CONTRACT.md §5), read from the
 * raw JSON text. Only the fields the service reads are checked; every other value is kept as the
 * text it came as (`JsonText`), so numbers keep all their digits and any nesting passes through.
 */
import {
  elementsOf,
  type JsonSpan,
  JsonText,
  kindOf,
  membersOf,
  parseDocument,
  stringOf,
  textOf,
  wholeNumber,
} from './json-text.js';

export interface ResellerLineItem {
  /**
   * The line item's id as the payload spells it (a number's exact digits, a string as sent); null
   * when absent or of another kind. The reseller fulfillment names the item by it (CONTRACT.md §10.1).
   */
  id: string | null;
  /** Null when absent or null: such an item goes to no supplier. */
  vendor: string | null;
  /** A whole number from 1 to 1,000,000. */
  quantity: number;
  /** A non-negative decimal string. */
  price: string;
  /** Passed on as sent; null when absent. */
  title: JsonText | null;
  sku: JsonText | null;
  variantId: JsonText | null;
  variantTitle: JsonText | null;
  /** The item's name/value pairs (an engraving, say), passed on to the supplier exactly as sent. */
  properties: JsonText | null;
  /** `"gift_card": true`: issued by the reseller's own shop, never routed to a supplier. */
  giftCard: boolean;
}

export interface ResellerShippingLine {
  title: JsonText | null;
  price: string;
}

export interface ResellerOrder {
  /** The order id's string form: a string as sent, a number as its exact digits. */
  externalOrderId: string;
  /**
   * The order's `name` as the merchant's admin shows it (`#1001`), when a string of 1 to
   * MAX_ORDER_NAME_LENGTH characters; null otherwise. The supplier order carries it (CONTRACT.md §12.5).
   */
  name: string | null;
  currency: string;
  email: JsonText | null;
  lineItems: ResellerLineItem[];
  shippingLines: ResellerShippingLine[];
  shippingAddress: JsonText | null;
  note: JsonText | null;
  noteAttributes: JsonText | null;
  /**
   * `financial_status` lower-cased (CONTRACT.md §11: Shopify sends `paid`, `pending`…); null when absent or not a
   * string: the platform did not say, and the order counts as paid.
   */
  financialStatus: string | null;
  /** `test: true`: a test order (§11). */
  test: boolean;
}

/** Why a payload is refused: the contract's `param` (a dotted path) and what its value must be. */
export interface OrderIssue {
  param?: string;
  message: string;
}

export type OrderReading = { ok: true; order: ResellerOrder } | ({ ok: false } & OrderIssue);

export const MAX_QUANTITY = 1_000_000;
/** The longest order id, as a string or as a number's digits. */
export const MAX_ORDER_ID_LENGTH = 100;
/** The longest order `name` passed on; a longer one (never a platform's) is treated as absent. */
export const MAX_ORDER_NAME_LENGTH = 255;
/** The longest price string: far past any real amount, short enough that exact arithmetic stays instant. */
export const MAX_PRICE_LENGTH = 64;

const DECIMAL = /^\d+(\.\d+)?$/;

class Refused extends Error {
  constructor(
    readonly param: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

const refuse = (param: string | undefined, message: string): never => {
  throw new Refused(param, message);
};

const kept = (span: JsonSpan | undefined) => (span ? new JsonText(textOf(span)) : null);

/**
 * A value passed on to the supplier only when it has the platform's type (`note` a string,
 * `properties` an array…): a value of another kind is no such field on any platform, and goes nowhere.
 */
const keptAs = (span: JsonSpan | undefined, kind: 'string' | 'array') =>
  span && kindOf(span) === kind ? new JsonText(textOf(span)) : null;

const orderId = (span: JsonSpan | undefined): string => {
  const rule = `must be a whole number ≥ 0 or a string of 1 to ${MAX_ORDER_ID_LENGTH} characters`;
  if (!span) return refuse('id', `is required: it ${rule}`);
  if (kindOf(span) === 'number') return wholeNumber(textOf(span), MAX_ORDER_ID_LENGTH) ?? refuse('id', rule);
  if (kindOf(span) !== 'string') return refuse('id', rule);
  const id = stringOf(span);
  return id.length >= 1 && id.length <= MAX_ORDER_ID_LENGTH ? id : refuse('id', rule);
};

const price = (span: JsonSpan | undefined, param: string): string => {
  const rule = `must be a non-negative decimal string of at most ${MAX_PRICE_LENGTH} characters, like "13.00"`;
  if (!span || kindOf(span) !== 'string') return refuse(param, rule);
  const value = stringOf(span);
  return value.length <= MAX_PRICE_LENGTH && DECIMAL.test(value) ? value : refuse(param, rule);
};

const quantity = (span: JsonSpan | undefined, param: string): number => {
  const rule = `must be a whole number from 1 to ${MAX_QUANTITY.toLocaleString('en-US')}`;
  if (!span || kindOf(span) !== 'number') return refuse(param, rule);
  const digits = wholeNumber(textOf(span), String(MAX_QUANTITY).length);
  const value = digits === undefined ? 0 : Number(digits);
  return value >= 1 && value <= MAX_QUANTITY ? value : refuse(param, rule);
};

/** A member that must be an array of objects when present (`line_items`, `shipping_lines`). */
const objects = (span: JsonSpan, param: string) => {
  if (kindOf(span) !== 'array') return refuse(param, 'must be an array of objects');
  return elementsOf(span).map((element, index) =>
    kindOf(element) === 'object' ? membersOf(element) : refuse(`${param}.${index}`, 'must be an object'),
  );
};

const isNull = (span: JsonSpan | undefined) =>
  span === undefined || (kindOf(span) === 'literal' && textOf(span) === 'null');

/** The longest line item id kept: longer ones (never seen on a platform) are treated as absent. */
const MAX_LINE_ITEM_ID_LENGTH = 100;

/** A line item's id, unchecked (CONTRACT.md §5 reads it but does not require it). */
const lineItemId = (span: JsonSpan | undefined): string | null => {
  if (!span) return null;
  if (kindOf(span) === 'number') return wholeNumber(textOf(span), MAX_LINE_ITEM_ID_LENGTH) ?? null;
  if (kindOf(span) !== 'string') return null;
  const id = stringOf(span);
  return id.length >= 1 && id.length <= MAX_LINE_ITEM_ID_LENGTH ? id : null;
};

/** The order's `name`, unchecked (read, never required: a custom platform may have none). */
const orderName = (span: JsonSpan | undefined): string | null => {
  if (!span || kindOf(span) !== 'string') return null;
  const name = stringOf(span);
  return name.length >= 1 && name.length <= MAX_ORDER_NAME_LENGTH ? name : null;
};

const isTrue = (span: JsonSpan | undefined) =>
  span !== undefined && kindOf(span) === 'literal' && textOf(span) === 'true';

const lineItem = (members: Map<string, JsonSpan>, index: number): ResellerLineItem => {
  const at = `line_items.${index}`;
  const vendor = members.get('vendor');
  if (!isNull(vendor) && kindOf(vendor!) !== 'string') refuse(`${at}.vendor`, 'must be a string or null');
  return {
    id: lineItemId(members.get('id')),
    vendor: isNull(vendor) ? null : stringOf(vendor!),
    quantity: quantity(members.get('quantity'), `${at}.quantity`),
    price: price(members.get('price'), `${at}.price`),
    title: kept(members.get('title')),
    sku: kept(members.get('sku')),
    variantId: kept(members.get('variant_id')),
    variantTitle: keptAs(members.get('variant_title'), 'string'),
    properties: keptAs(members.get('properties'), 'array'),
    giftCard: isTrue(members.get('gift_card')),
  };
};

const read = (text: string): ResellerOrder => {
  let root: JsonSpan;
  try {
    root = parseDocument(text);
  } catch {
    return refuse(undefined, 'The webhook body is not valid JSON.');
  }
  if (kindOf(root) !== 'object') return refuse(undefined, 'The webhook body must be a JSON object (the order).');
  const members = membersOf(root);

  const externalOrderId = orderId(members.get('id'));
  const currencySpan = members.get('currency');
  const currency = currencySpan && kindOf(currencySpan) === 'string' ? stringOf(currencySpan) : undefined;
  if (currency === undefined || !/^[A-Z]{3}$/.test(currency)) {
    refuse('currency', 'must be an ISO 4217 code: three capital letters');
  }
  const items = members.get('line_items');
  if (!items) refuse('line_items', 'is required: an array of objects');
  const lineItems = objects(items!, 'line_items').map(lineItem);
  const shipping = members.get('shipping_lines');
  const shippingLines = isNull(shipping)
    ? []
    : objects(shipping!, 'shipping_lines').map((line, index) => ({
        title: kept(line.get('title')),
        price: price(line.get('price'), `shipping_lines.${index}.price`),
      }));
  return {
    externalOrderId,
    name: orderName(members.get('name')),
    currency: currency!,
    email: kept(members.get('email')),
    lineItems,
    shippingLines,
    shippingAddress: kept(members.get('shipping_address')),
    note: keptAs(members.get('note'), 'string'),
    noteAttributes: keptAs(members.get('note_attributes'), 'array'),
    financialStatus: financialStatusOf(members.get('financial_status')),
    test: isTrue(members.get('test')),
  };
};

const financialStatusOf = (span: JsonSpan | undefined) => {
  const status = span && kindOf(span) === 'string' ? stringOf(span).toLowerCase() : '';
  return status === '' ? null : status;
};

/**
 * Reads an order from the raw webhook body. Deterministic, so the worker reads the stored body
 * exactly as the webhook did; the first field that breaks a rule is the issue.
 */
export const readResellerOrder = (text: string): OrderReading => {
  try {
    return { ok: true, order: read(text) };
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    return { ok: false, message: error.message, ...(error.param ? { param: error.param } : {}) };
  }
};
