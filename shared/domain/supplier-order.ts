/** The order the service places on a supplier store for the items routed to it. */
import type { JsonText } from './json-text.js';
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
  /** The order's `note` and `note_attributes`, exactly as sent; absent when the reseller order has none. */
  note?: JsonText | string | null;
  note_attributes?: JsonText | Array<{ name: string; value: string }>;
  tags: 'reseller-order';
}

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
  order: ResellerOrder;
  /** The items of `order.lineItems` routed to this supplier. */
  lineItems: ResellerLineItem[];
  pricing: PricingConfig;
}

/**
 * How a supplier order names its reseller order (PLATFORM-API.md): unique on one supplier's shop,
 * so the order can be looked up by it when the answer to its creation was lost.
 */
export const sourceIdentifier = (resellerShopDomain: string, externalOrderId: string) =>
  `${resellerShopDomain}:${externalOrderId}`;

export function buildSupplierOrder(input: BuildSupplierOrderInput): SupplierOrder {
  const { order, pricing } = input;
  const currency = order.currency;
  return {
    source_identifier: sourceIdentifier(input.resellerShopDomain, order.externalOrderId),
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
    note_attributes: order.noteAttributes ?? undefined,
    tags: 'reseller-order',
  };
}
