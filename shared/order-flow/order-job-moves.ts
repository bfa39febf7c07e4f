import { Met } from '../core/concurrency.js';
import { now } from '../core/ids.js';
import { BUSINESS_METRICS, countMetric, latencyMetric } from '../core/telemetry.js';
import type { Hold } from '../domain/routing.js';
import { dueAtOf, type ServiceLevel } from '../domain/shipping.js';
import { dueAttributes } from './order-entries.js';
import { isLost, JobUpdate, type MoveName, type MoveRequest, moveJob } from './order-repository.js';
import {
  type AttemptEnd,
  appendAttempt,
  CANCEL_CALL,
  type Cancellation,
  heldEntries,
  isPropagating,
  type JobAttribute,
  lookupEntry,
  propagationIndex,
  type SourceLine,
  type SyncJob,
  sourceLinesAttribute,
  storedAttempts,
  TAGGED_ATTRIBUTE,
  updatePending,
  WAIT_ATTRIBUTES,
} from './order-sync-job.js';

/**
 * The moves of a sync job, with what each writes besides its state (order-repository.ts builds it,
 * order-repository.ts runs it): the machinery's (worker, DLQ handler, reconciler), the manual retry's, the
 * cancellations'. A move that ends an attempt records it in the job's history (order-sync-job.ts) in the
 * same write. The features call these; the attributes they write are named here only.
 */

/** The job's history with the attempt this move ends, as attributes to set. */
export const withAttempt = (job: SyncJob, at: string, attempt: AttemptEnd | undefined) =>
  attempt
    ? {
        attemptLog: storedAttempts(
          appendAttempt(job.attemptLog, { ...attempt, generation: job.generation, endedAt: at }),
        ),
      }
    : {};

/**
 * Runs one move; the job as it is after the move, or undefined when its condition failed (another
 * writer moved the job first, or the message is stale: an older generation, or a job that has ended).
 */
const move = async (request: MoveRequest): Promise<SyncJob | undefined> => {
  const moved = await moveJob(request);
  return isLost(moved) ? undefined : moved;
};

const secondsFrom = (at: string, seconds: number) => new Date(Date.parse(at) + seconds * 1000).toISOString();

/**
 * pending/processing/failed → processing, attempts + 1. Returns undefined when the message is
 * stale. Two workers holding the same job is harmless: the platform call carries the job id as
 * idempotency key.
 */
export const claimJob = (message: { jobId: string; generation: number }) =>
  move({ move: 'claim', job: { id: message.jobId, generation: message.generation }, at: now(), add: { attempts: 1 } });

/**
 * `claimJob`, and for a stale message the job as the failed claim met it (the write answers it: no
 * read), undefined when none came back or the job is gone.
 */
export const claimJobOrMet = async (message: {
  jobId: string;
  generation: number;
}): Promise<{ claimed: SyncJob } | { met: SyncJob | undefined }> => {
  const moved = await moveJob({
    move: 'claim',
    job: { id: message.jobId, generation: message.generation },
    at: now(),
    add: { attempts: 1 },
  });
  if (moved === 'again' || moved === undefined) return { met: undefined };
  return moved instanceof Met ? { met: moved.current } : { claimed: moved };
};

/** The supplier order as the completion records it: its id and, per line the job carries, its id and price. */
export interface PlacedOrder {
  orderId: string;
  lines: SourceLine[];
  /** The supplier's promise when the order was placed (CONTRACT.md §16.1): the job's due time follows from it. */
  promise?: ServiceLevel | null;
  /**
   * The reseller order's tag, tried just before (placing.ts): recorded by the completion's own
   * write (true, or false for a refusal), not by a second one; absent, `tagged` stays null.
   */
  tagged?: boolean;
}

/**
 * The attributes of a completion, however the order was known: the job becomes findable by its supplier
 * order. No `completedAt`: the completion's time is the job's `updatedAt` until a later move, which copies
 * it (order-repository.ts, `COMPLETED_AT`), so the completed item keeps its 35 bytes for its `expiresAt`
 * and stays within one write unit (docs/performance.md, "Ended jobs expire").
 */
const completion = (job: SyncJob, placed: PlacedOrder, at: string) => ({
  set: {
    sourceOrderId: placed.orderId,
    ...(placed.lines.length ? { sourceLines: sourceLinesAttribute(placed.lines) } : {}),
  },
  entries: {
    ...lookupEntry(job, placed.orderId),
    // The clock starts when the supplier order is created: now (CONTRACT.md §16.1).
    ...(placed.promise ? dueAttributes(job.id, dueAtOf(placed.promise, new Date(at))) : {}),
    ...(placed.tagged === undefined ? {} : { [TAGGED_ATTRIBUTE]: placed.tagged }),
  },
});

/** What a completion clears: an absent attribute reads as null (dynamo/table.ts), and costs no bytes. */
const COMPLETED_CLEARS: JobAttribute[] = [...WAIT_ATTRIBUTES, 'errorMessage', 'failedAt'];
/**
 * What only placing reads (the supplier order's `source_identifier`, for a lookup of an unknown
 * outcome): a completion with a promise clears it, making room for the due time and its due-hour
 * key (CONTRACT.md §16), so the completed item stays within one write unit (docs/performance.md).
 */
const PLACED_ONLY: JobAttribute[] = ['resellerShopDomain'];

/** A job that reached `completed`, counted once, with its time from the webhook to the supplier order. */
const counted = (completed: SyncJob | undefined) => {
  if (completed) {
    countMetric(BUSINESS_METRICS.jobsCompleted);
    latencyMetric(
      BUSINESS_METRICS.webhookToCompletedLatency,
      Date.parse(completed.completedAt ?? '') - Date.parse(completed.createdAt),
    );
  }
  return completed;
};

/**
 * → completed with the supplier order: `complete` when the supplier answered the create (from
 * processing), `found` when an outcome that was unknown was looked up and the supplier has the order
 * (from the state the caller read). One write for both; only the move differs.
 */
const completeWith = (name: 'complete' | 'found') => async (job: SyncJob, placed: PlacedOrder, attempt: AttemptEnd) => {
  const at = now();
  const { set, entries } = completion(job, placed, at);
  return counted(
    await move({
      move: name,
      job,
      at,
      set: { ...set, ...withAttempt(job, at, attempt) },
      entries,
      remove: placed.promise ? [...COMPLETED_CLEARS, ...PLACED_ONLY] : COMPLETED_CLEARS,
    }),
  );
};

/** processing → completed: the supplier answered with its order. */
export const completeJob = completeWith('complete');

/** → completed: the supplier has the order a lookup found. */
export const foundJob = completeWith('found');

/** processing → failed; SQS brings the message back after `waitSeconds`. */
export const failJob = (job: SyncJob, errorMessage: string, waitSeconds: number, attempt: AttemptEnd) => {
  const at = now();
  return move({
    move: 'fail',
    job,
    at,
    set: { errorMessage, failedAt: at, waitUntil: secondsFrom(at, waitSeconds), ...withAttempt(job, at, attempt) },
    remove: ['resends', 'throttledSince'],
  });
};

/**
 * processing → pending without counting as a failure: the platform asked us to wait (429). The
 * job takes a new generation, so the message that brought it here (and any other) is stale; the
 * caller sends the one fresh message, delayed by `delaySeconds`. The first throttled attempt of a
 * run starts the throttling budget (`throttledSince`). Answers the job after the move.
 */
export const deferJob = (job: SyncJob, delaySeconds: number, attempt: AttemptEnd) => {
  const at = now();
  return move({
    move: 'defer',
    job,
    at,
    set: {
      waitUntil: secondsFrom(at, delaySeconds),
      throttledSince: job.throttledSince ?? attempt.startedAt,
      ...withAttempt(job, at, attempt),
    },
    remove: ['resends'],
  });
};

/**
 * → pending under a new generation, before its call: the source store's pace
 * (placing-worker.ts) gives it a slot in `waitSeconds`, which its next message keeps.
 * The move of a deferral, but not a try: the claim's
 * `attempts` + 1 is taken back, and neither the history nor the throttled run (`throttledSince`)
 * hears of it. `waitUntil` keeps the reconciler away until the slot.
 */
export const waitJobForSlot = (job: SyncJob, waitSeconds: number) => {
  const at = now();
  return move({ move: 'defer', job, at, set: { waitUntil: secondsFrom(at, waitSeconds) }, add: { attempts: -1 } });
};

/**
 * → pending under a new generation, because the job stayed past its lease with no move: the
 * reconciler sends the fresh message. Conditional on the state the reconciler read, so a job that
 * moved meanwhile is left alone.
 */
export const resendJob = (job: SyncJob) =>
  move({ move: 'resend', job, at: now(), add: { resends: 1 }, remove: ['waitUntil'] });

/**
 * → dead, with the reason (the caller writes its audit entry in the same transaction:
 * order-repository.ts `updateJobWith`).
 */
export const killRequest = (job: SyncJob, reason: string, attempt: AttemptEnd): MoveRequest => {
  const at = now();
  return {
    move: 'kill',
    job,
    at,
    set: { deadAt: at, errorMessage: reason, ...withAttempt(job, at, attempt) },
    remove: WAIT_ATTRIBUTES,
  };
};

/**
 * What needs a person (CONTRACT.md §10.6): `attention` on the job with why, conditional on the
 * generation read. Not a move: the job stays in its state.
 */
export const attentionUpdate = (job: SyncJob, reason: string) => {
  const update = new JobUpdate().setAttributes({ attention: { reason, since: now() } });
  update.when(`${update.name('generation')} = ${update.value('generation', job.generation)}`);
  return update.inTransaction(job.id);
};

/** failed/dead → pending (SPEC 4.4): the error fields cleared, `attempts` kept, under a new generation. */
export const retryRequest = (job: SyncJob, at: string): MoveRequest => ({
  move: 'retry',
  job,
  at,
  remove: [...WAIT_ATTRIBUTES, 'errorMessage', 'failedAt', 'deadAt'],
});

/**
 * A move of a cancellation (CONTRACT.md §10.4–10.5) with its fields. A completed job whose supplier
 * order is being cancelled is among the jobs with work in flight (GSI3's propagating set), where the
 * reconciler finds a cancellation whose message was lost; the move that ends the cancellation takes
 * it out, unless a fulfillment of it, or an update of its supplier order, is still on its way.
 */
export const cancellationRequest = (
  job: SyncJob,
  move: MoveName,
  cancellation: Cancellation,
  add?: Record<string, number>,
): MoveRequest => {
  const ended = move === 'cancel' || move === 'cancelPlaced';
  const watched = move === 'requestCancel';
  const unwatched =
    (move === 'cancelPlaced' || move === 'declineCancel') &&
    !Object.values(job.fulfillments).some(isPropagating) &&
    !updatePending(job);
  const at = now();
  return {
    move,
    job,
    at,
    set: { cancellation, ...(ended ? { cancelledAt: at } : {}) },
    ...(watched ? { entries: propagationIndex(job, true).set } : {}),
    ...(add ? { add } : {}),
    remove: [
      ...(ended ? WAIT_ATTRIBUTES : []),
      ...(unwatched ? propagationIndex(job, false).remove : []),
      ...(move === 'cancelPlaced' || move === 'declineCancel' ? [CANCEL_CALL as JobAttribute] : []),
    ],
  };
};

/**
 * pending → pending, held (CONTRACT.md §11): an operator's hold, or a held job judged again with reasons
 * left. The job joins its owner's and store's lists of held jobs. No new generation: a held job has no
 * message that would place it, since the claim refuses a job with a hold.
 */
export const holdRequest = (job: SyncJob, hold: Hold): MoveRequest => ({
  move: 'hold',
  job,
  at: now(),
  set: { hold },
  entries: heldEntries(job),
});

/**
 * pending → pending, released: the hold and its lists dropped (the move's rule), under a new generation
 * whose message the caller sends; an `attention` the hold itself raised (`hold_expired`) ends with it.
 */
export const releaseRequest = (job: SyncJob): MoveRequest => ({
  move: 'release',
  job,
  at: now(),
  remove: ['resends', 'waitUntil', ...(job.attention?.reason === HOLD_EXPIRED ? (['attention'] as const) : [])],
});

/** The `attention` reason of a job held past MAX_HOLD_SECONDS (CONTRACT.md §11). */
export const HOLD_EXPIRED = 'hold_expired';
