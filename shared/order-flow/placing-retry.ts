import { SyncJobNotRetryableError } from '../core/errors.js';
import { now } from '../core/ids.js';
import { logger } from '../core/telemetry.js';
import type { Owner } from '../domain/owner.js';
import { type Actor, auditPut } from '../entities/audit-entry.js';
import { retryRequest } from './order-job-moves.js';
import { loadJob, moveItem, moveUpdate, updateJobWith } from './order-repository.js';
import type { SyncJob } from './order-sync-job.js';
import { enqueueJobs, jobMessage } from './placing.js';
import { findSyncJob } from './reading.js';

/**
 * The manual retry (SPEC 4.4), apart from the reads of reading.ts: it alone sends a message, so
 * only its route bundles the SQS client.
 */

/**
 * failed/dead → pending (SPEC 4.4): clears the error fields, keeps `attempts`, bumps the
 * generation and writes the `sync_job.retried` audit entry in the same transaction, conditional
 * on the status read, so of two concurrent retries exactly one succeeds; then enqueues the job's
 * fresh message, as `acceptOrder` enqueues an order's jobs. The job is open again, so the
 * reconciler watches it: a failed send delays it but never loses it.
 */
export const retryJob = async (owner: Owner, id: string, actor: Actor, requestId?: string) => {
  const job = await findSyncJob(owner, id);
  if (job.status !== 'failed' && job.status !== 'dead') throw new SyncJobNotRetryableError(job.status);
  const at = now();
  const request = retryRequest(job, at);
  const retried = await updateJobWith(moveItem(request), [
    auditPut({ action: 'sync_job.retried', job, actor, metadata: { previousStatus: job.status } }),
  ]);
  if (retried !== true) {
    // Someone else moved it first (a concurrent retry): answer with what it is now, as the write met it.
    const current = retried.met ?? (await loadJob(job.id, true));
    throw new SyncJobNotRetryableError(current?.status ?? 'unknown');
  }
  const updated: SyncJob = {
    ...job,
    status: 'pending',
    generation: moveUpdate(request).generation,
    errorMessage: null,
    failedAt: null,
    deadAt: null,
    updatedAt: at,
    resends: 0,
    waitUntil: null,
    throttledSince: null,
  };
  await enqueueJobs([jobMessage(updated, 'retry', requestId)]).catch((error: Error) =>
    logger.error('enqueue after retry failed; the reconciler will send it', { jobId: job.id, error: error.name }),
  );
  return updated;
};
