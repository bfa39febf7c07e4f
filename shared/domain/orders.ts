import { type PricingConfig, supplierShippingPrice, supplierUnitPrice } from './money.js';

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

/**
 * Reading JSON exactly: values are found in the source text and kept as that text, so numbers keep
 * every digit (`9007199254740993`, `1e400`) and any depth is fine.
 *
 * Why not `JSON.parse` with a reviver (Node 24 hands it `context.source`)? The reviver walks every
 * value recursively: on Node 24 it overflows the stack between 1,000 and 5,000 levels of nesting,
 * and so does `JSON.stringify`, while a 1 MiB body can nest 500,000 levels. Plain `JSON.parse` is
 * iterative, so it checks the syntax at any depth; this module then walks only the few levels the
 * service reads, skipping everything else as text without recursion.
 */

/** A JSON value kept as its source text, written back verbatim by `stringifyExact`. */
export class JsonText {
  constructor(readonly text: string) {}
}

export type JsonKind = 'object' | 'array' | 'string' | 'number' | 'literal';

/** One value of a document: `source.slice(start, end)` is its text. */
export interface JsonSpan {
  source: string;
  start: number;
  end: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

const skipSpace = (s: string, i: number) => {
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  return i;
};

/** From an opening quote to just after its closing quote. */
const skipString = (s: string, i: number) => {
  let at = i;
  for (;;) {
    at = s.indexOf('"', at + 1);
    let backslashes = 0;
    while (s.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at + 1;
  }
};

/** From a value's first character to just after it, at any depth, without recursion. */
const skipValue = (s: string, i: number) => {
  let depth = 0;
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) i = skipString(s, i);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      i++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      i++;
    } else if (isSpace(c) || c === COMMA || c === COLON) {
      i++;
      continue;
    } else {
      // A number or a literal runs to the next delimiter.
      while (i < s.length) {
        const d = s.charCodeAt(i);
        if (isSpace(d) || d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || d === COLON) break;
        i++;
      }
    }
    if (depth === 0) return i;
  }
};

/**
 * The document's root value. Throws a SyntaxError when `text` is not JSON (the check is `JSON.parse`
 * itself, which has no depth limit), so every later walk may assume well-formed text.
 */
export const parseDocument = (text: string): JsonSpan => {
  JSON.parse(text);
  const start = skipSpace(text, 0);
  return { source: text, start, end: skipValue(text, start) };
};

export const kindOf = (span: JsonSpan): JsonKind => {
  const c = span.source.charCodeAt(span.start);
  if (c === OPEN_BRACE) return 'object';
  if (c === OPEN_BRACKET) return 'array';
  if (c === QUOTE) return 'string';
  return c === 0x2d || (c >= 0x30 && c <= 0x39) ? 'number' : 'literal';
};

export const textOf = (span: JsonSpan) => span.source.slice(span.start, span.end);

/** A string value, decoded. */
export const stringOf = (span: JsonSpan): string => JSON.parse(textOf(span));

/** An object's members by key; a key sent twice keeps its last value, as `JSON.parse` does. */
export const membersOf = (span: JsonSpan): Map<string, JsonSpan> => {
  const { source: s } = span;
  const members = new Map<string, JsonSpan>();
  let i = skipSpace(s, span.start + 1);
  if (s.charCodeAt(i) === CLOSE_BRACE) return members;
  for (;;) {
    const keyEnd = skipString(s, i);
    const key: string = JSON.parse(s.slice(i, keyEnd));
    const start = skipSpace(s, skipSpace(s, keyEnd) + 1);
    const end = skipValue(s, start);
    members.set(key, { source: s, start, end });
    i = skipSpace(s, end);
    if (s.charCodeAt(i) !== COMMA) return members;
    i = skipSpace(s, i + 1);
  }
};

export const elementsOf = (span: JsonSpan): JsonSpan[] => {
  const { source: s } = span;
  const elements: JsonSpan[] = [];
  let i = skipSpace(s, span.start + 1);
  if (s.charCodeAt(i) === CLOSE_BRACKET) return elements;
  for (;;) {
    const end = skipValue(s, i);
    elements.push({ source: s, start: i, end });
    i = skipSpace(s, end);
    if (s.charCodeAt(i) !== COMMA) return elements;
    i = skipSpace(s, i + 1);
  }
};

const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * The whole number a JSON number's text stands for, in plain digits without leading zeros, when it
 * is one, is not negative and has at most `maxDigits` digits: `"9007199254740993"` stays itself,
 * `"1e3"` and `"1000.0"` are `"1000"`. Undefined otherwise (`"1.5"`, `"-1"`, `"1e400"` past the
 * limit), without ever expanding a huge exponent.
 */
export const wholeNumber = (source: string, maxDigits: number): string | undefined => {
  const match = NUMBER.exec(source);
  if (!match) return undefined;
  const [, sign, integer, fraction = '', exponentText = '0'] = match;
  let digits = (integer + fraction).replace(/^0+/, '');
  let exponent = Number(exponentText) - fraction.length;
  if (digits === '') return '0';
  if (sign === '-') return undefined;
  const trailing = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailing);
  exponent += trailing;
  if (exponent < 0 || digits.length + exponent > maxDigits) return undefined;
  return digits + '0'.repeat(exponent);
};

/**
 * JSON text of a value built by the service around kept text: plain objects, arrays and primitives
 * are written as `JSON.stringify` writes them, a `JsonText` verbatim. The service's own structure is
 * shallow; the deep parts are kept text, so nothing here recurses deeply.
 */
export const stringifyExact = (value: unknown): string => {
  if (value instanceof JsonText) return value.text;
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : stringifyExact(v))).join(',')}]`;
  if (value !== null && typeof value === 'object' && !hasToJson(value)) {
    const members = Object.entries(value)
      .filter(([, v]) => v !== undefined && typeof v !== 'function')
      .map(([k, v]) => `${JSON.stringify(k)}:${stringifyExact(v)}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
};

const hasToJson = (value: object) => typeof (value as { toJSON?: unknown }).toJSON === 'function';

const INTEGER = /^-?\d+$/;

/** An integer past 2^53 as its digits (a string), so no id is ever rounded into another. */
const exactInteger = (value: unknown, source: string | undefined) =>
  typeof value === 'number' && source !== undefined && !Number.isSafeInteger(value) && INTEGER.test(source)
    ? source
    : value;

/**
 * `JSON.parse` for a payload read as objects (a fulfillment): integers past 2^53 become the string
 * of their digits (Node 24's reviver hands over each number's source text). Past the reviver's
 * recursion limit, the top-level members are read exactly and deeper values as `JSON.parse` reads
 * them: the ids a payload is matched by are top-level.
 */
export const parseWithExactIntegers = (text: string): unknown => {
  try {
    return JSON.parse(text, (_key, value, context?: { source?: string }) => exactInteger(value, context?.source));
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
  }
  const root = parseDocument(text);
  if (kindOf(root) !== 'object') return JSON.parse(text);
  return Object.fromEntries(
    [...membersOf(root)].map(([key, span]) => {
      const source = textOf(span);
      return [key, kindOf(span) === 'number' ? exactInteger(JSON.parse(source), source) : JSON.parse(source)];
    }),
  );
};

/**
 * The supplier order in the platforms' own body format (PLATFORM-API.md, the storeplatform_a body;
 * the custom push takes the same fields, storeplatform_b maps them onto its input): sent through
 * `stringifyExact`. The values the service does not compute (`email`, `title`, `sku`, `variant_id`,
 * `variant_title`, `properties`, `shipping_address`, `note`, `note_attributes`) are the reseller
 * order's own text, written back verbatim: a 21-digit `variant_id` arrives with all its digits.
 */
export interface SupplierOrder {
  source_identifier: string;
  currency: string;
  email: JsonText | string | null;
  line_items: OrderLineItem[];
  shipping_lines: ShippingLine[];
  shipping_address: JsonText | Record<string, unknown> | null;
  /**
   * The order's `note` as sent (absent when the reseller order has none), and its `note_attributes`
   * as sent with `reseller_order` (the reseller order's name) appended (CONTRACT.md §12.5).
   */
  note?: JsonText | string | null;
  note_attributes?: JsonText | Array<{ name: string; value: string }>;
  tags: 'reseller-order';
}

/** The note attribute that names, on the supplier order, the reseller order it comes from (CONTRACT.md §12.5). */
export const RESELLER_ORDER_ATTRIBUTE = 'reseller_order';

/**
 * The reseller order as the merchant and the supplier know it: its `name` (`#1001`), or its id when
 * it has none (a custom platform's order may not).
 */
export const resellerOrderName = (order: Pick<ResellerOrder, 'name' | 'externalOrderId'>) =>
  order.name ?? order.externalOrderId;

/**
 * The reseller's note attributes (an array's text, kept as sent, or values) with `reseller_order`
 * appended: its own elements untouched, so a value of any kind passes on exactly as it came.
 */
export const withResellerOrder = (
  attributes: JsonText | Array<{ name: string; value: string }> | null | undefined,
  name: string,
): JsonText => {
  const entry = JSON.stringify({ name: RESELLER_ORDER_ATTRIBUTE, value: name });
  const text = attributes instanceof JsonText ? attributes.text : JSON.stringify(attributes ?? []);
  const inner = text.trim().slice(1, -1);
  return new JsonText(`[${inner.trim() ? `${inner},` : ''}${entry}]`);
};

export interface OrderLineItem {
  title: JsonText | string;
  sku: JsonText | string | null;
  variant_id: JsonText | string | number | null;
  quantity: number;
  price: string;
  vendor: string;
  /** `variant_title` and `properties` (name/value pairs: an engraving), exactly as sent; absent when not sent. */
  variant_title?: JsonText | string | null;
  properties?: JsonText | Array<{ name: string; value: string }>;
}

export interface ShippingLine {
  title: JsonText | string;
  price: string;
}

export interface BuildSupplierOrderInput {
  resellerShopDomain: string;
  /** The job that places it: the last part of its `source_identifier`. */
  syncJobId: string;
  order: ResellerOrder;
  /** The items of `order.lineItems` routed to this supplier. */
  lineItems: ResellerLineItem[];
  pricing: PricingConfig;
}

/**
 * How a supplier order names the job that placed it (PLATFORM-API.md, "Lookups"): unique on one
 * supplier's shop, so the order can be looked up by it when the answer to its creation was lost. The
 * job id keeps apart the jobs of one reseller order sent to two source stores on the same shop.
 */
export const sourceIdentifier = (resellerShopDomain: string, externalOrderId: string, syncJobId: string) =>
  `${resellerShopDomain}:${externalOrderId}:${syncJobId}`;

/**
 * The identifier orders placed before it named the job: the reseller order only. Every job of that
 * order on one shop shares it, so an order found by it is the job's only when its lines are (`sameLines`).
 */
export const legacySourceIdentifier = (resellerShopDomain: string, externalOrderId: string) =>
  `${resellerShopDomain}:${externalOrderId}`;

/** What tells the lines of one supplier order from another's: each line's sku, quantity and vendor. */
export interface LineSummary {
  sku: string | null;
  quantity: number;
  vendor: string | null;
}

/** A text field as a summary compares it: a string as it is, a number's digits; empty or anything else null. */
export const summaryText = (value: JsonText | string | number | null | undefined): string | null => {
  if (value instanceof JsonText) return summaryText(parsedText(value.text));
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : null;
  return typeof value === 'string' && value !== '' ? value : null;
};

/** A kept value's text: a string's, a number's as a platform answers it back (an integer's exact digits). */
const parsedText = (text: string): string | number | null => {
  if (/^-?\d+$/.test(text)) return text;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'string' || typeof parsed === 'number' ? parsed : null;
  } catch {
    return null;
  }
};

/**
 * Whether a found order's lines are the ones a job places: as many, and in order each with the same
 * sku, quantity and vendor (the jobs of one reseller order differ by vendor tag, so two of them never
 * match each other). Lines the platform did not answer compare as unknown: false.
 */
export const sameLines = (expected: readonly LineSummary[], found: readonly LineSummary[] | undefined): boolean =>
  found !== undefined &&
  expected.length > 0 &&
  found.length === expected.length &&
  expected.every(
    (line, i) =>
      summaryText(line.sku) === summaryText(found[i].sku) &&
      line.quantity === found[i].quantity &&
      summaryText(line.vendor) === summaryText(found[i].vendor),
  );

export function buildSupplierOrder(input: BuildSupplierOrderInput): SupplierOrder {
  const { order, pricing } = input;
  const currency = order.currency;
  return {
    source_identifier: sourceIdentifier(input.resellerShopDomain, order.externalOrderId, input.syncJobId),
    currency,
    email: order.email,
    line_items: input.lineItems.map(
      (item): OrderLineItem => ({
        title: item.title ?? '',
        sku: item.sku,
        variant_id: item.variantId,
        quantity: item.quantity,
        price: supplierUnitPrice(item.price, currency, pricing),
        vendor: item.vendor ?? '',
        variant_title: item.variantTitle ?? undefined,
        properties: item.properties ?? undefined,
      }),
    ),
    shipping_lines: order.shippingLines.map(
      (line): ShippingLine => ({
        title: line.title ?? '',
        price: supplierShippingPrice(line.price, currency, pricing),
      }),
    ),
    shipping_address: order.shippingAddress,
    note: order.note ?? undefined,
    note_attributes: withResellerOrder(order.noteAttributes, resellerOrderName(order)),
    tags: 'reseller-order',
  };
}

/** The states of a sync job (SPEC 3.1, CONTRACT.md §6); shared/order-flow/order-repository.ts holds the moves. */
/** `cancelled` (CONTRACT.md §10.4): final; no supplier order exists for the job any more, or none ever will. */
export const SYNC_JOB_STATUSES = ['pending', 'processing', 'completed', 'failed', 'dead', 'cancelled'] as const;
export type SyncJobStatus = (typeof SYNC_JOB_STATUSES)[number];

/** The states of a job that has not ended: the reconciler watches these (CONTRACT.md §6). */
export const OPEN_STATUSES = ['pending', 'processing', 'failed'] as const satisfies readonly SyncJobStatus[];
export const isOpen = (status: SyncJobStatus) => (OPEN_STATUSES as readonly SyncJobStatus[]).includes(status);

/**
 * The states a job has ended in: only a manual retry (of a dead job) leaves one. A job in one of them
 * carries `expiresAt`, the table's TTL (docs/design.md, "Day one").
 */
export const ENDED_STATUSES = ['completed', 'dead', 'cancelled'] as const satisfies readonly SyncJobStatus[];
export const isEnded = (status: SyncJobStatus) => (ENDED_STATUSES as readonly SyncJobStatus[]).includes(status);
