import type { LogAttributes } from '@aws-lambda-powertools/logger/types';
import { leaseEnd, MAX_RESENDS, noProgressReason } from '../core/config.js';
import { logger, withLogContext } from '../core/telemetry.js';
import { type EndOutcome, sendWork } from './runner.js';

/**
 * The reconciler's part of the work-item runner (CONTRACT.md §6), in the manner of BullMQ's stalled-job
 * check and a transactional outbox's sweeper: an item that has not ended and has not moved for longer
 * than its lease (counted from the end of any wait it announced) is presumed to have lost its message
 * and is sent a fresh one; after MAX_RESENDS of them without progress it ends, with a reason that says so.
 */
export interface StalledKind<I, M> {
  queueUrl: () => string;
  /** Messages the reconciler has sent it since it last moved. */
  resends: (item: I) => number;
  lastError: (item: I) => string | null | undefined;
  /** Moves it to a fresh try (a new generation, a re-send counted); the message to send, or undefined if it moved. */
  resend: (item: I) => Promise<M | undefined>;
  /** Ends it after MAX_RESENDS re-sends without progress (`dead`, or done if the platform turns out to have it). */
  end: (item: I, reason: string) => Promise<EndOutcome>;
}

/** Whether an item's lease (from its last move or announced wait; `extraSeconds` more) ended by `at`. */
export const isStalled = (
  item: { updatedAt: string; waitUntil?: string | null },
  leaseSeconds: number,
  at: number,
  extraSeconds = 0,
) => leaseEnd(item, leaseSeconds, extraSeconds) <= at;

/**
 * A stalled item: re-sent, or ended once its re-sends are spent. Answers what became of it: `resent`,
 * `moved` (it moved meanwhile: its message did get through), or how its end went.
 */
export const resendOrEnd = async <I, M>(kind: StalledKind<I, M>, item: I): Promise<EndOutcome> => {
  if (kind.resends(item) >= MAX_RESENDS) return kind.end(item, noProgressReason(kind.lastError(item)));
  const message = await kind.resend(item);
  if (!message) return 'moved';
  await sendWork(kind.queueUrl(), [message]);
  return 'resent';
};

/**
 * One item's work in a reconciler run, in its log context: its failure is its own, counted and
 * logged, and the run goes on with the others (then fails, so the function's error alarm tells).
 */
export const onItsOwn = (report: { errors: number }, context: LogAttributes, work: () => Promise<unknown>) =>
  withLogContext(context, () =>
    work().catch((error: Error) => {
      report.errors++;
      logger.error('reconciler could not handle a job; the next run tries again', error);
    }),
  );
