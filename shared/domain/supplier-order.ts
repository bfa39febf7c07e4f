/** The order the service places on a supplier store for the items routed to it. */
import { supplierShippingPrice, supplierUnitPrice, type PricingConfig } from './pricing.js';

/**
 * The supplier order in the platforms' own body format (PLATFORM-API.md, the storeplatform_a body;
 * storeplatform_b's OrderInput and the custom push take the same fields): every adapter sends it as is.
 */
export interface SupplierOrder {
  source_identifier: string;
  currency: string;
  email: string | null;
  line_items: OrderLineItem[];
  shipping_lines: ShippingLine[];
  shipping_address: Record<string, unknown> | null;
  tags: 'reseller-order';
}

export interface OrderLineItem {
  title: string;
  sku: string | null;
  variant_id: string | number | null;
  quantity: number;
  price: string;
  vendor: string;
}

export interface ShippingLine {
  title: string;
  price: string;
}

/** A line item of the reseller's `orders/create` payload; fields not listed are ignored. */
export interface ResellerLineItem {
  title?: string | null;
  sku?: string | null;
  variant_id?: string | number | null;
  quantity: number;
  price: string;
  vendor: string;
}

export interface ResellerShippingLine {
  title?: string | null;
  price: string;
}

/** The reseller's order as the webhook carried it (CONTRACT §5). */
export interface ResellerOrder {
  currency: string;
  email?: string | null;
  line_items: ResellerLineItem[];
  shipping_lines?: ResellerShippingLine[] | null;
  shipping_address?: object | null;
}

export interface BuildSupplierOrderInput {
  resellerShopDomain: string;
  externalOrderId: string;
  order: ResellerOrder;
  /** The subset of `order.line_items` routed to this supplier. */
  lineItems: ResellerLineItem[];
  pricing: PricingConfig;
}

export function buildSupplierOrder(input: BuildSupplierOrderInput): SupplierOrder {
  const { order, pricing } = input;
  const currency = order.currency;
  return {
    source_identifier: `${input.resellerShopDomain}:${input.externalOrderId}`,
    currency,
    email: order.email ?? null,
    line_items: input.lineItems.map(
      (item): OrderLineItem => ({
        title: item.title ?? '',
        sku: item.sku ?? null,
        variant_id: item.variant_id ?? null,
        quantity: item.quantity,
        price: supplierUnitPrice(item.price, currency, pricing),
        vendor: item.vendor,
      }),
    ),
    shipping_lines: (order.shipping_lines ?? []).map(
      (line): ShippingLine => ({
        title: line.title ?? '',
        price: supplierShippingPrice(line.price, currency, pricing),
      }),
    ),
    shipping_address: isRecord(order.shipping_address) ? { ...order.shipping_address } : null,
    tags: 'reseller-order',
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
