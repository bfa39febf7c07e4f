import type { Deps } from '../aws/deps.js';
import { config } from '../core/config.js';
import { now } from '../core/ids.js';
import { logger, withLogContext } from '../core/logger.js';
import { BUSINESS_METRICS } from '../core/metric-names.js';
import { countMetric } from '../core/metrics.js';
import { leaseEnd, MAX_RESENDS, noProgressReason } from '../core/work-policy.js';
import { isOpen } from '../domain/sync-job-status.js';
import { inFlight } from '../dynamo/keys.js';
import { batchGet, type Item, queryKeys, type ReadMeter } from '../dynamo/table.js';
import { type PropagationReport, reconcilePropagations } from '../fulfillments/reconcile.js';
import { jobLogContext, type SyncJob, syncJobFrom, updatePending } from '../order/sync-job.js';
import { resendCancellation } from './cancel.js';
import { resendUpdate } from './edit.js';
import { endJob, mayHaveBeenPlaced } from './end.js';
import { jobMessage } from './message.js';
import { resendJob } from './moves.js';
import { enqueueJobs } from './queue.js';

/**
 * The reconciler (CONTRACT.md §6, docs/design.md "Every job ends"), in the manner of BullMQ's
 * stalled-job check and a transactional outbox's sweeper: every job that has not ended and has not
 * moved for longer than its lease (counted from the end of any wait it announced: a deferral's due
 * time, a backoff) is presumed to have lost its message, and is sent a fresh one under a new
 * generation, so an older message that turns up after all is stale. After MAX_RESENDS such
 * messages without the job making progress, it ends: `dead`, with a reason that says so, unless
 * the supplier has its order (end.ts).
 *
 * It reads only GSI3 (every shard of its three sets, keys only: the open jobs, pending or processing
 * in OPEN# and failed apart in FAILED#; and the completed jobs with a fulfillment on its way, whose
 * stalled entries it re-sends the same way: fulfillments/reconcile.ts) and BatchGets those jobs: its
 * reads grow with the work in flight, never with the jobs ever made.
 * It decides on the jobs' own attributes (a lease, a wait), so it needs no index key of its own for
 * them. One job it cannot handle (its store's secrets unreadable, say) is logged and counted, and the
 * run goes on with the others; the run then fails, so the function's error alarm tells on-call.
 */

export interface ReconcileReport extends PropagationReport {
  /** Jobs not ended, as read. */
  inFlight: number;
  resent: number;
  killed: number;
  /** Stalled jobs found placed on the supplier, and completed. */
  found: number;
  /** Cancellations of placed orders whose message was lost, sent again (or given to a person). */
  cancellationsResent: number;
  /** Updates of placed orders (the reseller's edits) whose message was lost, sent again (or given to a person). */
  updatesResent: number;
  /** Read units the run consumed, as DynamoDB reported them. */
  readUnits: number;
  /** Jobs the run could not handle (logged each); the next run tries them again. */
  errors: number;
}

export const reconcile = async (deps: Deps, leaseSeconds = config.leaseSeconds()): Promise<ReconcileReport> => {
  const report: ReconcileReport = {
    inFlight: 0,
    resent: 0,
    killed: 0,
    found: 0,
    propagating: 0,
    propagationsResent: 0,
    propagationsDead: 0,
    cancellationsResent: 0,
    updatesResent: 0,
    readUnits: 0,
    errors: 0,
  };
  /** One job's work, in its log context; its failure is its own, not the run's. */
  const handle = (job: SyncJob, work: () => Promise<void>) =>
    withLogContext(jobLogContext(job), () =>
      work().catch((error: Error) => {
        report.errors++;
        logger.error('reconciler could not handle a job; the next run tries again', error);
      }),
    );
  const at = Date.now();
  await Promise.all([
    ...[...inFlight.open.allPartitions(), ...inFlight.failed.allPartitions()].map((partition) =>
      eachJob(partition, report, async (jobs) => {
        // The index lags the table: a job that has ended since is skipped.
        const open = jobs.filter((job) => isOpen(job.status));
        report.inFlight += open.length;
        const stalled = open.filter((job) => leaseEnd(job, leaseSeconds) <= at);
        await Promise.all(stalled.map((job) => handle(job, () => resendOrEndStalled(deps, job, report))));
      }),
    ),
    ...inFlight.propagating.allPartitions().map((partition) =>
      eachJob(partition, report, async (jobs) => {
        await Promise.all(
          jobs.map((job) =>
            handle(job, async () => {
              if (job.cancellation?.status === 'requested' && leaseEnd(job, leaseSeconds) <= at) {
                if (await resendCancellation(job)) report.cancellationsResent++;
              }
              const keptAt = job.orderEdits?.keptAt;
              if (keptAt && updatePending(job) && leaseEnd({ updatedAt: keptAt }, leaseSeconds) <= at) {
                if (await resendUpdate(job)) report.updatesResent++;
              }
              await reconcilePropagations(job, leaseSeconds, at, report);
            }),
          ),
        );
      }),
    ),
  ]);
  const acted =
    report.resent +
    report.killed +
    report.found +
    report.propagationsResent +
    report.propagationsDead +
    report.cancellationsResent +
    report.updatesResent;
  if (acted) logger.warn('reconciler acted on stalled work', { ...report });
  if (report.errors) throw new Error(`the reconciler could not handle ${report.errors} job(s); see the lines before`);
  return report;
};

/** Every job under one GSI3 partition, a page (100 keys, one BatchGet) at a time. */
const eachJob = async (partition: string, meter: ReadMeter, visit: (jobs: SyncJob[]) => Promise<void>) => {
  let startKey: Item | undefined;
  do {
    const page = await queryKeys({
      index: 'inFlight',
      pk: partition,
      limit: 100,
      forward: true,
      exclusiveStartKey: startKey,
      meter,
    });
    await visit(await batchGet(page.keys, syncJobFrom, meter));
    startKey = page.lastKey;
  } while (startKey);
};

const resendOrEndStalled = async (deps: Deps, job: SyncJob, report: ReconcileReport) => {
  if (job.resends >= MAX_RESENDS) {
    const reason = noProgressReason(job.errorMessage);
    const attempt = {
      trigger: 'reconciler',
      outcome: 'dead',
      platformStatus: null,
      errorMessage: reason,
      startedAt: now(),
    } as const;
    const ended = await endJob(deps, job, reason, attempt, { lookUp: mayHaveBeenPlaced(job) });
    if (ended === 'dead') report.killed++;
    if (ended === 'found') report.found++;
    // `unknown`: the supplier could not say whether it has the order; the next run asks again.
    return;
  }
  const moved = await resendJob(job);
  if (!moved) return; // it moved meanwhile: its message did get through
  await enqueueJobs([jobMessage(moved, 'reconciler')]);
  report.resent++;
  countMetric(BUSINESS_METRICS.reconcilerResends);
  logger.warn('stalled job sent a new message', { status: job.status, resends: moved.resends });
};
