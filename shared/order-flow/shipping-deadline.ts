import type { Deps } from '../aws/deps.js';
import { BUSINESS_METRICS, countMetric, logger } from '../core/telemetry.js';
import type { ShopConnection } from '../platforms/port.js';
import type { SyncJob } from './order-sync-job.js';

/**
 * The due time shown in the supplier's own admin (CONTRACT.md §16.1): on a platform that has a
 * deadline (Shopify's `fulfillBy`), the supplier order's open fulfillment orders get the job's
 * `dueAt`. Idempotent by value, so a redelivered completion sets it again harmlessly. A failure is
 * logged and counted, never the job's: the promise stands without it.
 */
export const setSupplierDeadline = async (deps: Pick<Deps, 'platforms'>, shop: ShopConnection, job: SyncJob) => {
  const adapter = deps.platforms(shop.platform);
  if (!job.dueAt || !job.sourceOrderId || !adapter.setFulfillmentDeadline) return;
  try {
    const outcome = await adapter.setFulfillmentDeadline(shop, job.sourceOrderId, job.dueAt);
    logger.info('supplier deadline set', { dueAt: job.dueAt, outcome });
  } catch (error) {
    countMetric(BUSINESS_METRICS.deadlineFailures);
    logger.warn('the supplier deadline could not be set', { error: (error as Error).message });
  }
};
