/** The three hosting-platform kinds a store can live on (SPEC 2.2). */
export const PLATFORMS = ['storeplatform_a', 'storeplatform_b', 'custom'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** What an adapter needs to talk to one store; `accessToken` and `webhookSecret` are plaintext here and must never be logged. */
export interface PlatformStore {
  platform: Platform;
  shopDomain: string;
  accessToken: string;
  webhookSecret: string;
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

/** The order the service places on a supplier store (PLATFORM-API.md, storeplatform_a body). */
export interface SupplierOrder {
  source_identifier: string;
  currency: string;
  email: string | null;
  line_items: OrderLineItem[];
  shipping_lines: ShippingLine[];
  shipping_address: Record<string, unknown> | null;
  tags: 'reseller-order';
}

export interface Tracking {
  company: string | null;
  number: string | null;
  numbers: string[];
  url: string | null;
  urls: string[];
}

export interface PlatformAdapter {
  /** Places the order; the same idempotency key never creates a second order. */
  createOrder(store: PlatformStore, order: SupplierOrder, idempotencyKey: string): Promise<{ orderId: string }>;
  /** Creates a fulfillment with tracking on an order of the store; the same key never creates a second one. */
  createFulfillment(
    store: PlatformStore,
    orderId: string,
    tracking: Tracking,
    idempotencyKey: string,
  ): Promise<{ fulfillmentId: string }>;
}
