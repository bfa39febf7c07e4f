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
  /** Places the order; the same idempotency key never creates a second order. */
  createOrder(shop: ShopConnection, order: SupplierOrder, idempotencyKey: string): Promise<{ orderId: string }>;
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
