import { BUSINESS_METRICS, countMetric } from '../core/telemetry.js';
import { auditPut, SYSTEM } from '../entities/audit-entry.js';
import type { AttemptEnd } from './order-attempt.js';
import { attentionUpdate, killRequest } from './order-job-moves.js';
import { moveItem, updateJobWith } from './order-repository.js';
import type { SyncJob } from './order-sync-job.js';

/**
 * The moves of a sync job that its machinery writes with their audit entry (the others are the
 * order aggregate's, order-job-moves.ts).
 */

/**
 * → dead, with the reason, and a `sync_job.dead` audit entry in the same transaction. From the
 * state the caller read (the worker's `processing`, or what the DLQ handler or the reconciler
 * found); false when the job moved meanwhile.
 */
export const killJob = async (job: SyncJob, reason: string, attempt: AttemptEnd) => {
  const killed = await updateJobWith(moveItem(killRequest(job, reason, attempt)), [
    auditPut({
      action: 'sync_job.dead',
      job,
      actor: SYSTEM,
      metadata: { previousStatus: job.status, reason, attempts: job.attempts },
    }),
  ]);
  if (killed !== true) return false;
  countMetric(BUSINESS_METRICS.jobsDead);
  return true;
};

/**
 * What needs a person (CONTRACT.md §10.6): `attention` on the job with why, and its
 * `sync_job.attention_required` audit entry, in one transaction conditional on the generation read.
 * False when the job moved meanwhile. Not a move: the job stays in its state.
 */
export const needsAttention = async (job: SyncJob, reason: string) =>
  (await updateJobWith(attentionUpdate(job, reason), [
    auditPut({ action: 'sync_job.attention_required', job, actor: SYSTEM, metadata: { reason } }),
  ])) === true;
