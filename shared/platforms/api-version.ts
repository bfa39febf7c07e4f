/**
 * The API version each platform is called with, in one place (CONTRACT §12.4), and what an answer says
 * of it: Shopify names the version it served in `X-Shopify-API-Version` and warns of a call it will
 * stop serving in `X-Shopify-API-Deprecated-Reason`. Moving to the next version is a one-line change
 * here; its test is the schema check of the documents (test/unit/shopify-documents.test.ts).
 */
import type { ApiVersionNotice, Platform, ShopConnection } from './port.js';

/**
 * Shopify's Admin API version (storeplatform_b), in one place: the path, and the schema the tests load
 * to validate the documents (storeplatform-b-documents.ts).
 */
export const SHOPIFY_API_VERSION = '2026-10';

/** storeplatform_a's REST Admin API version (its paths: `/admin/api/<version>/…`). */
export const STOREPLATFORM_A_API_VERSION = '2025-07';

/** The version each platform is asked for; custom is the supplier's own endpoint and names none. */
export const PLATFORM_API_VERSIONS: Record<Platform, string | null> = {
  storeplatform_a: STOREPLATFORM_A_API_VERSION,
  storeplatform_b: SHOPIFY_API_VERSION,
  custom: null,
};

const VERSIONED_PATH = /^\/admin\/api\/([^/]+)\//;

interface Headers {
  get(name: string): string | null;
}

/**
 * What one answer said of the API version; null when it said nothing (no version header, no
 * deprecation), so a platform that sends neither is never reported.
 */
export function apiVersionNotice(
  platform: Platform,
  shopDomain: string,
  path: string,
  headers: Headers,
): ApiVersionNotice | null {
  const served = headers.get('x-shopify-api-version');
  const deprecatedReason = headers.get('x-shopify-api-deprecated-reason');
  if (served === null && deprecatedReason === null) return null;
  const requested = VERSIONED_PATH.exec(path)?.[1] ?? null;
  const deprecated = deprecatedReason !== null || (served !== null && requested !== null && served !== requested);
  return { platform, shopDomain, requested, served, deprecatedReason, deprecated };
}

/**
 * Hands the notice of an answer to the caller's `onApiVersion`, if any. An observer that throws must not
 * turn a call the platform answered into a failure: its error is dropped.
 */
export function reportApiVersion(platform: Platform, shop: ShopConnection, path: string, headers: Headers): void {
  if (!shop.onApiVersion) return;
  const notice = apiVersionNotice(platform, shop.shopDomain, path, headers);
  if (notice === null) return;
  try {
    shop.onApiVersion(notice);
  } catch {
    // the caller's counting failed; the call itself did not
  }
}
