import type { Deps } from '../aws/deps.js';
import { config } from '../core/config.js';
import { now } from '../core/ids.js';
import { logger } from '../core/logger.js';
import { BUSINESS_METRICS } from '../core/metric-names.js';
import { countMetric } from '../core/metrics.js';
import { isOpen } from '../domain/sync-job-status.js';
import { inFlight } from '../dynamo/keys.js';
import { batchGet, type Item, queryKeys, type ReadMeter } from '../dynamo/table.js';
import { type PropagationReport, reconcilePropagations } from '../fulfillments/reconcile.js';
import type { AttemptEnd } from '../order/attempt.js';
import { jobLogContext, type SyncJob, syncJobFrom, updatePending } from '../order/sync-job.js';
import { isStalled, onItsOwn, resendOrEnd, type StalledKind } from '../work/reconcile.js';
import { resendCancellation } from './cancel.js';
import { resendUpdate } from './edit.js';
import { endJob, mayHaveBeenPlaced } from './end.js';
import { type JobMessage, jobMessage } from './message.js';
import { resendJob } from './moves.js';

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

const emptyReport = (): ReconcileReport => ({
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
});

/** One run: what it needs, when it began (every lease is measured against that), and its report. */
interface Run {
  deps: Deps;
  leaseSeconds: number;
  at: number;
  report: ReconcileReport;
}

export const reconcile = async (deps: Deps, leaseSeconds = config.leaseSeconds()): Promise<ReconcileReport> => {
  const run: Run = { deps, leaseSeconds, at: Date.now(), report: emptyReport() };
  const open = [...inFlight.open.allPartitions(), ...inFlight.failed.allPartitions()];
  await Promise.all([
    ...open.map((partition) => eachJob(partition, run.report, (jobs) => reconcileOpen(run, jobs))),
    ...inFlight.propagating
      .allPartitions()
      .map((partition) => eachJob(partition, run.report, (jobs) => reconcilePlaced(run, jobs))),
  ]);
  const { report } = run;
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
const eachJob = async (partition: string, meter: ReadMeter, visit: (jobs: SyncJob[]) => Promise<unknown>) => {
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

/** A page of open jobs: the stalled ones re-sent or ended. */
const reconcileOpen = async (run: Run, jobs: SyncJob[]) => {
  // The index lags the table: a job that has ended since is skipped.
  const open = jobs.filter((job) => isOpen(job.status));
  run.report.inFlight += open.length;
  const stalled = open.filter((job) => isStalled(job, run.leaseSeconds, run.at));
  await Promise.all(stalled.map((job) => onItsOwn(run.report, jobLogContext(job), () => resendOrEndStalled(run, job))));
};

/** A page of placed jobs with work on its way: each one's lost changes and stalled propagations. */
const reconcilePlaced = (run: Run, jobs: SyncJob[]) =>
  Promise.all(jobs.map((job) => onItsOwn(run.report, jobLogContext(job), () => watchPlaced(run, job))));

/** A lost cancellation or update of the supplier order sent again (or given to a person); then its propagations. */
const watchPlaced = async ({ leaseSeconds, at, report }: Run, job: SyncJob) => {
  if (job.cancellation?.status === 'requested' && isStalled(job, leaseSeconds, at)) {
    if (await resendCancellation(job)) report.cancellationsResent++;
  }
  const keptAt = job.orderEdits?.keptAt;
  if (keptAt && updatePending(job) && isStalled({ updatedAt: keptAt }, leaseSeconds, at)) {
    if (await resendUpdate(job)) report.updatesResent++;
  }
  await reconcilePropagations(job, leaseSeconds, at, report);
};

/** Open jobs as stalled work items: the adapters over their moves (moves.ts, end.ts). */
const stalledJobs = (deps: Deps): StalledKind<SyncJob, JobMessage> => ({
  queueUrl: config.syncQueueUrl,
  resends: (job) => job.resends,
  lastError: (job) => job.errorMessage,
  resend: async (job) => {
    const moved = await resendJob(job);
    return moved ? jobMessage(moved, 'reconciler') : undefined;
  },
  end: (job, reason) => {
    const attempt: AttemptEnd = {
      trigger: 'reconciler',
      outcome: 'dead',
      platformStatus: null,
      errorMessage: reason,
      startedAt: now(),
    };
    // Dead, unless the supplier has the order; `unknown` when it could not say: the next run asks again.
    return endJob(deps, job, reason, attempt, { lookUp: mayHaveBeenPlaced(job) });
  },
});

const resendOrEndStalled = async (run: Run, job: SyncJob) => {
  const outcome = await resendOrEnd(stalledJobs(run.deps), job);
  if (outcome === 'dead') run.report.killed++;
  if (outcome === 'found') run.report.found++;
  if (outcome !== 'resent') return;
  run.report.resent++;
  countMetric(BUSINESS_METRICS.reconcilerResends);
  logger.warn('stalled job sent a new message', { status: job.status, resends: job.resends + 1 });
};
