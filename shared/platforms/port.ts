/**
 * What the rest of the service knows of the hosting platforms: their kinds, a connection to one
 * shop, the adapter interface and the spellings of a platform's order ids. The adapters
 * themselves (`adapters.ts` and the files it lists) are reached only through `Deps.platforms`.
 */
import type { SupplierOrder } from '../domain/supplier-order.js';

/** The three hosting-platform kinds a store can live on (SPEC 2.2). */
export const PLATFORMS = ['storeplatform_a', 'storeplatform_b', 'custom'] as const;
export type Platform = (typeof PLATFORMS)[number];

/**
 * What an adapter needs to call one shop: its platform, its domain and its decrypted secrets.
 * `accessToken` and `webhookSecret` are plaintext here and must never be logged.
 */
export interface ShopConnection {
  platform: Platform;
  shopDomain: string;
  accessToken: string;
  webhookSecret: string;
}

export interface Tracking {
  company: string | null;
  number: string | null;
  numbers: string[];
  url: string | null;
  urls: string[];
}

export interface PlatformAdapter {
  /** Places the order; the same idempotency key never creates a second order. `status`: the HTTP status answered. */
  createOrder(
    shop: ShopConnection,
    order: SupplierOrder,
    idempotencyKey: string,
  ): Promise<{ orderId: string; status?: number }>;
  /**
   * The shop's order with this `source_identifier` (PLATFORM-API.md, "Lookups"), or null when it has
   * none: what settles a creation whose answer was lost. A read: it never creates anything.
   */
  findOrder(shop: ShopConnection, sourceIdentifier: string): Promise<{ orderId: string } | null>;
  /** Creates a fulfillment with tracking on an order of the shop; the same key never creates a second one. */
  createFulfillment(
    shop: ShopConnection,
    orderId: string,
    tracking: Tracking,
    idempotencyKey: string,
  ): Promise<{ fulfillmentId: string }>;
}

/** The adapter of a platform kind: what use cases are handed as `Deps.platforms`. */
export type AdapterFor = (platform: Platform) => PlatformAdapter;

// ---------- order ids

const GID = /^gid:\/\/[^/]+\/Order\/(.+)$/;

/** The bare id of an order (REST paths, webhooks): a GraphQL gid `gid://platform/Order/7002` becomes `7002`. */
export function restOrderId(orderId: string): string {
  const gid = GID.exec(orderId);
  return gid ? gid[1] : orderId;
}

/** The GraphQL id of an order; a bare number (a REST-style id) is turned into a gid. */
export function orderGid(orderId: string): string {
  return /^\d+$/.test(orderId) ? `gid://platform/Order/${orderId}` : orderId;
}

/**
 * A GraphQL platform answers `orderCreate` with `gid://platform/Order/7002` (a sync job records
 * that), while its webhooks name the order `7002`. The bare form is the canonical one; a lookup
 * tries every spelling, so either finds the job.
 */
export const canonicalOrderId = restOrderId;
export const orderIdSpellings = (orderId: string) => [
  ...new Set([orderId, canonicalOrderId(orderId), orderGid(canonicalOrderId(orderId))]),
];

/**
 * The id of the order of `orders` (a lookup's answer) that carries `sourceIdentifier`; an order
 * that does not say which it carries is trusted to be the filter's. Null when none matches,
 * undefined when the answer is not a list of orders with ids.
 */
export function lookedUpOrderId(orders: unknown, sourceIdentifier: string): string | null | undefined {
  if (!Array.isArray(orders)) return undefined;
  const order = orders.find((entry) => {
    const carried = (entry as { source_identifier?: unknown } | null)?.source_identifier;
    return carried === undefined || carried === sourceIdentifier;
  }) as { id?: unknown } | undefined;
  if (!order) return null;
  return typeof order.id === 'string' || typeof order.id === 'number' ? String(order.id) : undefined;
}
