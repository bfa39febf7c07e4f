import { now } from '../core/ids.js';
import { BUSINESS_METRICS, countMetric, logger } from '../core/telemetry.js';
import { recordApiVersion, type StoreApiVersion, type StoreKind } from '../entities/store.js';
import type { ApiVersionNotice } from '../platforms/port.js';

/** What this environment last recorded per store, so an unchanged answer writes nothing. */
const recorded = new Map<string, string>();
/** At most this many stores remembered; past it the oldest is forgotten (it is written again, once). */
const REMEMBERED = 10_000;

/**
 * The `onApiVersion` of a store's connection (CONTRACT.md §12.4): every answer's version headers,
 * counted when deprecated (`PlatformApiDeprecated`) and shown on the store as `apiVersion`, written
 * only when they change (not once per call). A write that fails is logged: it never fails the call.
 * `written` is told each version it writes, for an answer that shows the store (withSubscriptions).
 */
export const watchApiVersion = (
  kind: StoreKind,
  storeId: string,
  stored?: StoreApiVersion | null,
  written?: (version: StoreApiVersion) => void,
) => {
  // What the store's item already says counts as recorded: an environment's first answer that says the
  // same writes nothing (issue 44: each environment's first write cost every store a write unit).
  if (stored && !recorded.has(`${kind}#${storeId}`))
    recorded.set(
      `${kind}#${storeId}`,
      JSON.stringify([stored.requested, stored.served, stored.deprecations[0] ?? null]),
    );
  return (notice: ApiVersionNotice): Promise<void> | undefined => {
    if (notice.deprecated) {
      countMetric(BUSINESS_METRICS.platformApiDeprecated);
      logger.warn('the platform answered another API version or a deprecation', {
        storeId,
        requested: notice.requested,
        served: notice.served,
        deprecatedReason: notice.deprecatedReason,
      });
    }
    if (notice.requested === null) return undefined;
    const key = `${kind}#${storeId}`;
    const seen = JSON.stringify([notice.requested, notice.served, notice.deprecatedReason]);
    if (recorded.get(key) === seen) return undefined;
    recorded.delete(key);
    recorded.set(key, seen);
    const oldest = recorded.keys().next();
    if (recorded.size > REMEMBERED && !oldest.done) recorded.delete(oldest.value);
    const version = {
      requested: notice.requested,
      served: notice.served,
      deprecations: notice.deprecatedReason ? [notice.deprecatedReason] : [],
      checkedAt: now(),
    };
    written?.(version);
    return recordApiVersion(kind, storeId, version).catch((error: Error) => {
      recorded.delete(key);
      logger.error("the store's API version could not be recorded", error);
    });
  };
};
