import type { Deps } from '../aws/deps.js';
import { inPool, limiter } from '../core/concurrency.js';
import { config } from '../core/config.js';
import { now } from '../core/ids.js';
import { BUSINESS_METRICS, countMetric, logger } from '../core/telemetry.js';
import { isOpen } from '../domain/orders.js';
import {
  keepReconcilePass,
  newReconcilePass,
  type ReconcilePass,
  readReconcilePass,
} from '../entities/reconcile-pass.js';
import { isStalled, onItsOwn, resendOrEnd, type StalledKind } from '../work/reconcile.js';
import { resendCancellation, resendUpdate } from './changing.js';
import { watchHeld } from './holding.js';
import { findInFlightPage, findJobsAt, inFlightShards } from './order.js';
import { resendJob } from './order-job-moves.js';
import { type AttemptEnd, jobLogContext, type SyncJob, updatePending } from './order-sync-job.js';
import { endJob, type JobMessage, jobMessage, mayHaveBeenPlaced } from './placing.js';
import { type PropagationReport, reconcilePropagations } from './propagating-reconcile.js';

/**
 * The reconciler (CONTRACT.md §6, docs/design.md "Every job ends"), in the manner of BullMQ's
 * stalled-job check and a transactional outbox's sweeper: every job that has not ended and has not
 * moved for longer than its lease (counted from the end of any wait it announced: a deferral's due
 * time, a backoff) is presumed to have lost its message, and is sent a fresh one under a new
 * generation, so an older message that turns up after all is stale. After MAX_RESENDS such
 * messages without the job making progress, it ends: `dead`, with a reason that says so, unless
 * the supplier has its order (placing.ts).
 *
 * It reads only GSI3 (every shard of its three sets, keys only: the open jobs, pending or processing
 * in OPEN# and failed apart in FAILED#; and the completed jobs with a fulfillment on its way, whose
 * stalled entries it re-sends the same way: order-flow/propagating-reconcile.ts) and BatchGets those jobs: its
 * reads grow with the work in flight, never with the jobs ever made.
 * It decides on the jobs' own attributes (a lease, a wait), so it needs no index key of its own for
 * them. One job it cannot handle (its store's secrets unreadable, say) is logged and counted, and the
 * run goes on with the others; the run then fails, so the function's error alarm tells on-call.
 *
 * Its partitions are read at once, and a run stops taking on pages and jobs near the end of its
 * invocation's time: the pass item (entities/reconcile-pass.ts) keeps where each partition stands, so
 * the next run goes on from there and 100,000 jobs in flight are all reached within a few runs
 * (shared/order-flow/README.md, "The reconciler"; `npm run bench:reconcile`).
 */

export interface ReconcileReport extends PropagationReport {
  /** Jobs not ended, as read in the pages the run got through (a page left for the next run counts there). */
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
  /** Jobs the run could not handle (logged each); the next pass tries them again. */
  errors: number;
  /** Pages of index keys the run read (up to PAGE_KEYS each). */
  pages: number;
  /** Whether the run ended the pass: every partition read to its end since the pass began. */
  passComplete: boolean;
  /** Runs the pass has taken so far, this one included. */
  passRuns: number;
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
  pages: 0,
  passComplete: false,
  passRuns: 0,
});

/**
 * What bounds a run. On AWS the handler passes the invocation's remaining time; without it (a
 * test, a run by hand) a run reads every partition to its end.
 */
export interface RunBudget {
  /** The invocation's remaining time (the Lambda context's `getRemainingTimeInMillis`). */
  remainingMs?: () => number;
  /** Under this remaining time the run reads no new page and takes on no new job: its last jobs' time. */
  marginMs?: number;
  /** Keys a page reads (PAGE_KEYS); smaller in the tests, so a few hundred jobs make several pages. */
  pageKeys?: number;
}

/**
 * Room for the jobs a run has taken on when the budget ends it: one job may ask its supplier for
 * the order (a 10 s platform timeout at most) before it is made dead; then the pass item is kept.
 */
export const RECONCILE_MARGIN_MS = 15_000;
/** Keys a Query reads at once: keys only, about 150 bytes each, so a page is one Query and five BatchGets. */
const PAGE_KEYS = 500;
/** Partitions read at once: with IN_FLIGHT_SHARDS = 4, all twelve of the three sets. */
const PARTITIONS_AT_ONCE = 12;
/** Jobs handled at once (re-sent, ended, watched), over every partition. */
const JOBS_AT_ONCE = 32;

/** One run: what it needs, when it began (every lease is measured against that), its pass and its report. */
interface Run {
  deps: Deps;
  leaseSeconds: number;
  at: number;
  report: ReconcileReport;
  pass: ReconcilePass;
  /** Whether there is time left to read a page or take on a job. */
  hasTime: () => boolean;
  /** The gate every job's handling goes through. */
  gate: <T>(task: () => Promise<T>) => Promise<T>;
  pageKeys: number;
}

/**
 * What became of a part of a page: its jobs in flight, and whether each one was handled, or some
 * were left for want of time (then the whole page is the next run's, and counted there).
 */
interface Visited {
  inFlight: number;
  handled: boolean;
}

/** A GSI3 partition and what a page of its jobs gets. */
interface Partition {
  name: string;
  visit: (run: Run, jobs: SyncJob[]) => Promise<Visited>;
}

const partitions = (): Partition[] => [
  ...inFlightShards().open.map((name) => ({ name, visit: reconcileOpen })),
  ...inFlightShards().propagating.map((name) => ({ name, visit: reconcilePlaced })),
];

export const reconcile = async (
  deps: Deps,
  leaseSeconds = config.leaseSeconds(),
  budget: RunBudget = {},
): Promise<ReconcileReport> => {
  const { remainingMs, marginMs = RECONCILE_MARGIN_MS, pageKeys = PAGE_KEYS } = budget;
  const at = Date.now();
  const run: Run = {
    deps,
    leaseSeconds,
    at,
    report: emptyReport(),
    pass: (await readReconcilePass()) ?? newReconcilePass(new Date(at).toISOString()),
    hasTime: () => !remainingMs || remainingMs() >= marginMs,
    gate: limiter(JOBS_AT_ONCE),
    pageKeys,
  };
  const left = partitions().filter(({ name }) => run.pass.partitions[name] !== 'done');
  await inPool(left, PARTITIONS_AT_ONCE, (partition) => readPartition(run, partition));
  await endRun(run);
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

/**
 * One partition's pages from its mark on, while the budget lasts; its mark moves past a page once
 * every job of it was handled. A page it could not read stops the partition: the next run goes on
 * from the same mark.
 */
const readPartition = async (run: Run, { name, visit }: Partition) => {
  let mark = run.pass.partitions[name];
  try {
    while (mark !== 'done' && run.hasTime()) {
      const page = await findInFlightPage(name, run.pageKeys, mark?.after, run.report);
      run.report.pages++;
      const visited = await visitPage(run, page.keys, visit);
      if (!visited.handled) return;
      run.report.inFlight += visited.inFlight;
      mark = page.lastKey ? { after: page.lastKey } : 'done';
      run.pass.partitions[name] = mark;
    }
  } catch (error) {
    run.report.errors++;
    logger.error('reconciler could not read a partition; the next run goes on from its mark', {
      partition: name,
      error,
    });
  }
};

/** A page's jobs, a BatchGet (100 keys) at a time, all at once. */
const visitPage = async (run: Run, keys: Parameters<typeof findJobsAt>[0], visit: Partition['visit']) => {
  const chunks = Array.from({ length: Math.ceil(keys.length / 100) }, (_, i) => keys.slice(i * 100, i * 100 + 100));
  const handled = await Promise.all(chunks.map(async (chunk) => visit(run, await findJobsAt(chunk, run.report))));
  return {
    inFlight: handled.reduce((n, part) => n + part.inFlight, 0),
    handled: handled.every((part) => part.handled),
  };
};

/**
 * The pass kept for the next run; a pass whose every partition is done ends here, and the next
 * run begins a new one from the head of each partition. A pass done in the run that began it (the
 * usual run: a handful of jobs in flight) leaves the item as it was, fresh: no write.
 */
const endRun = async (run: Run) => {
  const names = partitions().map(({ name }) => name);
  const complete = names.every((name) => run.pass.partitions[name] === 'done');
  const { runs, startedAt } = run.pass;
  run.report.passRuns = runs + 1;
  run.report.passComplete = complete;
  if (complete && runs === 0) return;
  // Marks of partitions that no longer exist (the shards were changed) are left behind.
  const marks = Object.fromEntries(
    names.flatMap((name) => (name in run.pass.partitions ? [[name, run.pass.partitions[name]]] : [])),
  );
  const began = runs ? startedAt : new Date(run.at).toISOString();
  await keepReconcilePass(
    complete ? newReconcilePass(new Date().toISOString()) : { startedAt: began, runs: runs + 1, partitions: marks },
  );
};

/**
 * A job's handling, through the run's gate, unless the budget has run out before its turn: then it
 * is left (false) for the next run, with its page.
 */
const handle = (run: Run, job: SyncJob, work: () => Promise<unknown>) =>
  run.gate(async () => {
    if (!run.hasTime()) return false;
    await onItsOwn(run.report, jobLogContext(job), work);
    return true;
  });

/** A page of open jobs: the stalled ones re-sent or ended. */
const reconcileOpen = async (run: Run, jobs: SyncJob[]): Promise<Visited> => {
  // The index lags the table: a job that has ended since is skipped.
  const open = jobs.filter((job) => isOpen(job.status));
  // A held job waits on purpose (CONTRACT.md §11): never re-sent nor ended, only watched (holding.ts).
  const held = open.filter((job) => job.hold !== null);
  const stalled = open.filter((job) => job.hold === null && isStalled(job, run.leaseSeconds, run.at));
  const handled = await Promise.all([
    ...stalled.map((job) => handle(run, job, () => resendOrEndStalled(run, job))),
    ...held.map((job) => handle(run, job, () => watchHeld(job, run.leaseSeconds, run.at))),
  ]);
  return { inFlight: open.length, handled: handled.every(Boolean) };
};

/** A page of placed jobs with work on its way: each one's lost changes and stalled propagations. */
const reconcilePlaced = async (run: Run, jobs: SyncJob[]): Promise<Visited> => {
  const handled = await Promise.all(jobs.map((job) => handle(run, job, () => watchPlaced(run, job))));
  return { inFlight: 0, handled: handled.every(Boolean) };
};

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

/** Open jobs as stalled work items: the adapters over their moves (placing.ts). */
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
