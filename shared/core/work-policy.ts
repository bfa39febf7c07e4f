import { config } from './config.js';

/**
 * The one policy for how work ends (CONTRACT.md §6), for sync jobs and fulfillment entries alike:
 * how long throttling may last, how many times the reconciler sends a stalled piece of work a new
 * message, when its lease ends, and the reasons each end gives.
 */

/** Messages the reconciler sends a piece of work that stopped moving, before it ends it. */
export const MAX_RESENDS = 3;

/**
 * The throttling budget's end, if reached: work throttled (429) since `throttledSince` (else since the
 * attempt that began the run, `startedAt`) for `THROTTLE_BUDGET_SECONDS` or more ends with the reason
 * this answers; undefined while within the budget.
 */
export const throttledPastBudget = (
  reason: string,
  throttledSince: string | undefined,
  startedAt: string,
  now = Date.now(),
): string | undefined => {
  const budget = config.throttleBudgetSeconds();
  if (now - Date.parse(throttledSince ?? startedAt) < budget * 1000) return undefined;
  return `${reason}; throttled for more than ${budget} s`;
};

/** A reason that ends work: the last failure's reason stays the headline, the end's own comes after it. */
const ended = (lastError: string | null | undefined, why: string) => [lastError, why].filter(Boolean).join('; ');

/** Its message's receives ran out (the dead-letter queue): after `attempts` failed attempts. */
export const gaveUpReason = (lastError: string | null | undefined, attempts: number) =>
  ended(lastError, `gave up after ${attempts} attempt${attempts === 1 ? '' : 's'}`);

/** The reconciler sent it `MAX_RESENDS` messages and it never moved. */
export const noProgressReason = (lastError: string | null | undefined) =>
  ended(lastError, `no progress after ${MAX_RESENDS} messages re-sent by the reconciler`);

/**
 * When a piece of work's lease ends: its last move or the end of the wait it announced, whichever is
 * later, plus the lease and whatever else it may still be waiting for (`extraSeconds`).
 */
export const leaseEnd = (
  work: { updatedAt: string; waitUntil?: string | null },
  leaseSeconds: number,
  extraSeconds = 0,
) =>
  Math.max(Date.parse(work.updatedAt), work.waitUntil ? Date.parse(work.waitUntil) : 0) +
  (leaseSeconds + extraSeconds) * 1000;
