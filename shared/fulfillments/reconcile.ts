import { MAX_DELAY_SECONDS } from '../aws/sqs.js';
import { logger } from '../core/logger.js';
import { leaseEnd, MAX_RESENDS, noProgressReason } from '../core/work-policy.js';
import { type FulfillmentEntry, isPropagating } from '../order/fulfillment-entry.js';
import { type SyncJob, supplierChangePending } from '../order/sync-job.js';
import { leavePropagating, moveEntry, resendEntry, trackingOf } from './entries.js';
import { sendFulfillmentMessage } from './queue.js';

/**
 * The reconciler's part of reverse sync (CONTRACT.md §6, docs/reverse-sync.md): a fulfillment
 * entry that stayed `pending` or `failed` past its lease is sent a fresh message, like a job, and
 * after MAX_RESENDS of them without progress it is `dead`. A `failed` entry's lease also
 * allows for the 15 minutes its message waits after a trip through the dead-letter queue.
 */

export interface PropagationReport {
  /** Entries on their way, as read. */
  propagating: number;
  propagationsResent: number;
  propagationsDead: number;
}

/** When the entry's lease ends: its last move or announced wait, plus the lease (and a redrive's delay). */
export const entryLeaseEnd = (entry: FulfillmentEntry, leaseSeconds: number) =>
  leaseEnd(entry, leaseSeconds, entry.status === 'failed' ? MAX_DELAY_SECONDS : 0);

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
    // too (sync-jobs/cancel.ts, edit.ts).
    if (job.status === 'completed' && !supplierChangePending(job)) await leavePropagating(job);
    return;
  }
  report.propagating += open.length;
  for (const entry of open.filter((e) => entryLeaseEnd(e, leaseSeconds) <= at)) {
    const context = { jobId: job.id, sourceFulfillmentId: entry.sourceFulfillmentId };
    if ((entry.resends ?? 0) >= MAX_RESENDS) {
      const errorMessage = noProgressReason(entry.errorMessage);
      const outcome = { status: 'dead', errorMessage, attempted: false } as const;
      if (await moveEntry(job.id, entry.sourceFulfillmentId, outcome, job)) report.propagationsDead++;
      continue;
    }
    if (!(await resendEntry(job, entry))) continue; // it moved meanwhile: its message got through
    await sendFulfillmentMessage({
      jobId: job.id,
      sourceFulfillmentId: entry.sourceFulfillmentId,
      tracking: trackingOf(entry),
    });
    report.propagationsResent++;
    logger.warn('stalled fulfillment sent a new message', { ...context, resends: (entry.resends ?? 0) + 1 });
  }
};
