import { MAX_DELAY_SECONDS } from '../aws/batch.js';
import { config } from '../core/config.js';
import { logger } from '../core/telemetry.js';
import { isStalled, resendOrEnd, type StalledKind } from '../work/reconcile.js';
import { leavePropagating, moveEntry, resendEntry, trackingOf } from './order-entries.js';
import { type FulfillmentEntry, isPropagating, type SyncJob, supplierOrderChangePending } from './order-sync-job.js';
import type { FulfillmentMessage } from './propagating.js';

/**
 * The reconciler's part of propagation (CONTRACT.md §6, docs/propagation.md), through the runner's
 * (shared/work/reconcile.ts): a fulfillment entry that stayed `pending` or `failed` past its lease is
 * sent a fresh message, like a job, and after MAX_RESENDS of them without progress it is `dead`. A
 * `failed` entry's lease also allows for the 15 minutes its message waits after a trip through the
 * dead-letter queue.
 */

export interface PropagationReport {
  /** Entries on their way, as read. */
  propagating: number;
  propagationsResent: number;
  propagationsDead: number;
}

/** What a `failed` entry may still be waiting for beyond its lease: a redrive's delay. */
const redriveAllowance = (entry: FulfillmentEntry) => (entry.status === 'failed' ? MAX_DELAY_SECONDS : 0);

/** The entries of one job as stalled work items: the adapters over their moves (order-entries.ts). */
const stalledEntries = (job: SyncJob): StalledKind<FulfillmentEntry, FulfillmentMessage> => ({
  queueUrl: config.fulfillmentQueueUrl,
  resends: (entry) => entry.resends ?? 0,
  lastError: (entry) => entry.errorMessage,
  resend: async (entry) =>
    (await resendEntry(job, entry))
      ? { jobId: job.id, sourceFulfillmentId: entry.sourceFulfillmentId, tracking: trackingOf(entry) }
      : undefined,
  end: async (entry, errorMessage) =>
    (await moveEntry(job.id, entry.sourceFulfillmentId, { status: 'dead', errorMessage, attempted: false }, job))
      ? 'dead'
      : 'moved',
});

/** One propagating job: its stalled entries re-sent or ended; none left on its way, it leaves the index. */
export const reconcilePropagations = async (
  job: SyncJob,
  leaseSeconds: number,
  at: number,
  report: PropagationReport,
) => {
  const open = Object.values(job.fulfillments).filter(isPropagating);
  if (!open.length) {
    // A job whose supplier order is being cancelled or updated stays: the reconciler watches those
    // too (order-flow/changing.ts).
    if (job.status === 'completed' && !supplierOrderChangePending(job)) await leavePropagating(job);
    return;
  }
  report.propagating += open.length;
  const kind = stalledEntries(job);
  // One at a time: every move is a conditional write of the same job item.
  for (const entry of open.filter((e) => isStalled(e, leaseSeconds, at, redriveAllowance(e)))) {
    const outcome = await resendOrEnd(kind, entry);
    if (outcome === 'dead') report.propagationsDead++;
    if (outcome !== 'resent') continue;
    report.propagationsResent++;
    const context = { jobId: job.id, sourceFulfillmentId: entry.sourceFulfillmentId };
    logger.warn('stalled fulfillment sent a new message', { ...context, resends: (entry.resends ?? 0) + 1 });
  }
};
