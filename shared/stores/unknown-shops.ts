import type { StoreKind } from '../entities/store.js';

/**
 * Shop domains with no store of a kind, remembered per container, so a flood of deliveries naming
 * one costs no table read (docs/design.md, "An abusive unsigned caller"). Short, because a store
 * registered meanwhile on such a domain has its deliveries refused by this container until then;
 * bounded, because an abuser can name any number of domains.
 */
export const UNKNOWN_SHOP_TTL_MS = 60_000;
export const UNKNOWN_SHOP_MAX = 1_000;

// Insertion order is expiry order (one TTL for all), so the first entry is the one to drop when full.
const expiries = new Map<string, number>();
const keyOf = (kind: StoreKind, shopDomain: string) => `${kind}|${shopDomain}`;

/** Whether `shopDomain` was found without a store of `kind` in the last UNKNOWN_SHOP_TTL_MS. */
export const isUnknownShop = (kind: StoreKind, shopDomain: string, at = Date.now()) => {
  const key = keyOf(kind, shopDomain);
  const until = expiries.get(key);
  if (until === undefined) return false;
  if (until > at) return true;
  expiries.delete(key);
  return false;
};

/** Remembers that `shopDomain` has no store of `kind`, dropping the oldest entry when full. */
export const rememberUnknownShop = (kind: StoreKind, shopDomain: string, at = Date.now()) => {
  const key = keyOf(kind, shopDomain);
  expiries.delete(key);
  if (expiries.size >= UNKNOWN_SHOP_MAX) expiries.delete(expiries.keys().next().value!);
  expiries.set(key, at + UNKNOWN_SHOP_TTL_MS);
};
