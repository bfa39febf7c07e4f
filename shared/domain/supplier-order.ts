/** The supplier order: what the service places on a source store for the items routed to it. */
import { JsonText } from './json-text.js';
import { type PricingConfig, supplierShippingPrice, supplierUnitPrice } from './pricing.js';
import type { ResellerLineItem, ResellerOrder } from './reseller-order.js';

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
