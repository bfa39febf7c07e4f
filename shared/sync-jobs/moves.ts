import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { auditPut, SYSTEM } from '../audit-log/audit-log.js';
import { now } from '../core/ids.js';
import { BUSINESS_METRICS } from '../core/metric-names.js';
import { countMetric, latencyMetric } from '../core/metrics.js';
import { dynamo } from '../dynamo/client.js';
import { isConditionFailure, TABLE, transactWrite } from '../dynamo/table.js';
import { UpdateBuilder } from '../dynamo/update.js';
import { type AttemptEnd, appendAttempt, storedAttempts } from '../entities/attempt.js';
import {
  lookupEntry,
  type SourceLine,
  type SyncJob,
  sourceLinesAttribute,
  syncJobFrom,
  syncJobKey,
} from '../entities/sync-job.js';
import type { JobMessage } from './message.js';
import { type MoveRequest, moveUpdate } from './state-machine.js';

/**
 * The moves of a sync job that its machinery makes (worker, DLQ handler, reconciler), each one
 * conditional UpdateItem built by state-machine.ts. A move that ends an attempt records it in the
 * job's history (attempts.ts) in the same write.
 */

/** A wait's or a stall's attributes (re-sends, its end, a throttled run): dropped when the job ends or starts over. */
export const WAIT_ATTRIBUTES = ['resends', 'waitUntil', 'throttledSince'];

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
 * Runs one move as a conditional UpdateItem; the job as it is after the move, or undefined when
 * its condition failed (another writer moved the job first, or the message is stale: an older
 * generation, or a job that has ended).
 */
const move = async (request: MoveRequest): Promise<SyncJob | undefined> => {
  const { generation: _next, ...update } = moveUpdate(request);
  try {
    const out = await dynamo.send(new UpdateCommand({ TableName: TABLE(), ...update, ReturnValues: 'ALL_NEW' }));
    return out.Attributes && syncJobFrom(out.Attributes);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
};

/** A move as one item of a transaction (with its audit entry). */
export const moveItem = (request: MoveRequest) => {
  const { generation: _next, ...update } = moveUpdate(request);
  return { Update: { TableName: TABLE(), ...update } };
};

const secondsFrom = (at: string, seconds: number) => new Date(Date.parse(at) + seconds * 1000).toISOString();

/**
 * pending/processing/failed → processing, attempts + 1. Returns undefined when the message is
 * stale. Two workers holding the same job is harmless: the platform call carries the job id as
 * idempotency key.
 */
export const claimJob = (message: JobMessage) =>
  move({ move: 'claim', job: { id: message.jobId, generation: message.generation }, at: now(), add: { attempts: 1 } });

/** The supplier's order as the completion records it: its id and, per line the job carries, its id and price. */
export interface PlacedOrder {
  orderId: string;
  lines: SourceLine[];
}

/** The attributes of a completion, however the order was known: the job becomes findable by its source order. */
const completion = (job: SyncJob, placed: PlacedOrder, at: string) => ({
  sourceOrderId: placed.orderId,
  completedAt: at,
  ...(placed.lines.length ? { sourceLines: sourceLinesAttribute(placed.lines) } : {}),
  ...lookupEntry(job, placed.orderId),
});

/** What a completion clears: an absent attribute reads as null (record.ts), and costs no bytes. */
const COMPLETED_CLEARS = [...WAIT_ATTRIBUTES, 'errorMessage', 'failedAt'];

/** A job that reached `completed`, counted once, with its time from the webhook to the supplier's order. */
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
 * → completed with the supplier's order: `complete` when the supplier answered the create (from
 * processing), `found` when an outcome that was unknown was looked up and the supplier has the order
 * (from the state the caller read). One write for both; only the move differs.
 */
const completeWith = (name: 'complete' | 'found') => async (job: SyncJob, placed: PlacedOrder, attempt: AttemptEnd) => {
  const at = now();
  return counted(
    await move({
      move: name,
      job,
      at,
      set: { ...completion(job, placed, at), ...withAttempt(job, at, attempt) },
      remove: COMPLETED_CLEARS,
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
 * → pending under a new generation, before its call: the supplier's pace (pace.ts) gives it a slot in
 * `waitSeconds`, which its next message holds. The move of a deferral, but not a try: the claim's
 * `attempts` + 1 is taken back, and neither the history nor the throttled run (`throttledSince`)
 * hears of it. `waitUntil` keeps the reconciler away until the slot.
 */
export const holdJob = (job: SyncJob, waitSeconds: number) => {
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
 * → dead, with the reason, and a `sync_job.dead` audit entry in the same transaction. From the
 * state the caller read (the worker's `processing`, or what the DLQ handler or the reconciler
 * found); false when the job moved meanwhile.
 */
export const killJob = async (job: SyncJob, reason: string, attempt: AttemptEnd) => {
  const at = now();
  try {
    await transactWrite([
      moveItem({
        move: 'kill',
        job,
        at,
        set: { deadAt: at, errorMessage: reason, ...withAttempt(job, at, attempt) },
        remove: WAIT_ATTRIBUTES,
      }),
      auditPut({
        action: 'sync_job.dead',
        job,
        actor: SYSTEM,
        metadata: { previousStatus: job.status, reason, attempts: job.attempts },
      }),
    ]);
    countMetric(BUSINESS_METRICS.jobsDead);
    return true;
  } catch (error) {
    if (error instanceof TransactionCanceledException) return false;
    throw error;
  }
};

/**
 * What needs a person (CONTRACT.md §10.6): `attention` on the job with why, and its
 * `sync_job.attention_required` audit entry, in one transaction conditional on the generation read.
 * False when the job moved meanwhile. Not a move: the job stays in its state.
 */
export const needsAttention = async (job: SyncJob, reason: string) => {
  const update = new UpdateBuilder().setAttributes({ attention: { reason, since: now() } });
  update.when(`${update.name('generation')} = ${update.value('generation', job.generation)}`);
  try {
    await transactWrite([
      { Update: { TableName: TABLE(), ...update.build(syncJobKey(job.id)) } },
      auditPut({ action: 'sync_job.attention_required', job, actor: SYSTEM, metadata: { reason } }),
    ]);
    return true;
  } catch (error) {
    if (error instanceof TransactionCanceledException) return false;
    throw error;
  }
};
