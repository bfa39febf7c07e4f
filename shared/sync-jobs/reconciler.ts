import { config } from '../core/config.js';
import { logger } from '../core/logger.js';
import { isOpen } from '../domain/sync-job-status.js';
import { INDEX, inFlight } from '../dynamo/keys.js';
import { batchGet, queryKeys, type Item, type ReadMeter } from '../dynamo/table.js';
import { enqueueJobs } from './queue.js';
import { syncJobFrom, type SyncJob } from './record.js';
import { killJob, resendJob } from './sync-jobs.js';

/**
 * The reconciler (CONTRACT.md §6, docs/design.md "Every job ends"), in the manner of BullMQ's
 * stalled-job check and a transactional outbox's sweeper: every job that has not ended and has not
 * moved for longer than its lease (counted from the end of any wait it announced: a deferral's due
 * time, a backoff) is presumed to have lost its message, and is sent a fresh one under a new
 * generation, so an older message that turns up after all is stale. After MAX_RESENDS such
 * messages without the job making progress, it is `dead`, with a reason that says so.
 *
 * It reads only GSI3's open jobs (every shard of both sets: pending or processing, and failed; keys
 * only) and BatchGets them: its reads grow with the jobs in flight, never with the jobs ever made.
 * It decides on the jobs' own attributes, so claims and deferrals never rewrite the index.
 */

export const MAX_RESENDS = 3;

export interface ReconcileReport {
  /** Jobs not ended, as read. */
  inFlight: number;
  resent: number;
  killed: number;
  /** Read units the run consumed, as DynamoDB reported them. */
  readUnits: number;
}

/** When the job's lease ends: its last move or the end of its announced wait, whichever is later, plus the lease. */
export const leaseEnd = (job: Pick<SyncJob, 'updatedAt' | 'waitUntil'>, leaseSeconds: number) =>
  Math.max(Date.parse(job.updatedAt), job.waitUntil ? Date.parse(job.waitUntil) : 0) + leaseSeconds * 1000;

export const reconcile = async (leaseSeconds = config.leaseSeconds()): Promise<ReconcileReport> => {
  const report: ReconcileReport = { inFlight: 0, resent: 0, killed: 0, readUnits: 0 };
  const at = Date.now();
  await Promise.all(
    [...inFlight.open.allPartitions(), ...inFlight.failed.allPartitions()].map(async (partition) => {
      let startKey: Item | undefined;
      do {
        const page = await queryKeys({
          index: INDEX.inFlight,
          pkName: 'GSI3PK',
          skName: 'GSI3SK',
          pk: partition,
          limit: 100,
          forward: true,
          exclusiveStartKey: startKey,
          meter: report,
        });
        // The index lags the table: a job that has ended since is skipped.
        const jobs = (await batchGet(page.keys, syncJobFrom, report satisfies ReadMeter)).filter((job) =>
          isOpen(job.status),
        );
        report.inFlight += jobs.length;
        await Promise.all(
          jobs.filter((job) => leaseEnd(job, leaseSeconds) <= at).map((job) => settleStalled(job, report)),
        );
        startKey = page.lastKey;
      } while (startKey);
    }),
  );
  if (report.resent || report.killed) logger.warn('reconciler acted on stalled jobs', { ...report });
  return report;
};

const settleStalled = async (job: SyncJob, report: ReconcileReport) => {
  if (job.resends >= MAX_RESENDS) {
    const reason = [job.errorMessage, `no progress after ${MAX_RESENDS} messages re-sent by the reconciler`]
      .filter(Boolean)
      .join('; ');
    if (await killJob(job, reason)) report.killed++;
    return;
  }
  const moved = await resendJob(job);
  if (!moved) return; // it moved meanwhile: its message did get through
  await enqueueJobs([{ jobId: moved.id, generation: moved.generation }]);
  report.resent++;
  logger.warn('stalled job sent a new message', { jobId: job.id, status: job.status, resends: moved.resends });
};
