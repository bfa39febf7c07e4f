import { sharedReads } from '../core/concurrency.js';
import { learnThrottle, readPace, type SupplierPace, takeSlot } from '../entities/rate-limits.js';

/**
 * A supplier's pace before and after a create (docs/design.md, "A pace per supplier"). A shop that
 * has not throttled a call lately costs one eventually consistent read and no write; a hot one
 * gives each create a slot, and a try whose slot is more than `WAIT_IN_PROCESS_MS` away waits
 * for it in a fresh message (the runner's `waitForSlot`, shared/work/runner.ts) rather than calling into a 429.
 */

/** The longest a try waits in process for its slot: cheaper than a message, a claim and a slot wait. */
export const WAIT_IN_PROCESS_MS = 1_500;

/**
 * A kept slot that comes later than this (a busy queue, slow workers) is given up for a fresh one:
 * late messages come together, and calling them all at once would empty the shop's bucket. Its
 * own slot went unused, which leaves the shop a spare call.
 */
export const LATE_MS = 500;

const sleepUntil = (at: number) => {
  const ms = Math.min(WAIT_IN_PROCESS_MS, at - Date.now());
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : undefined;
};

/**
 * How much slower than the rate a platform states the pace goes. Calls come at their slot or a little
 * later (the sleep, the network), never earlier; at exactly the stated rate the shop's bucket stays
 * empty, and a call 2 ms late followed by one on time finds 0.99 of a call in it: a 429. Going 5 %
 * slower refills the shop's bucket by a twentieth of a call per call, so after twenty calls it holds
 * a spare one, and then up to its size, which absorbs any lateness shorter than a slot.
 */
export const STATED_RATE_MARGIN = 1.05;

/**
 * This container's learning under way, by shop: the other messages of its batch, in flight beside the
 * one throttled, read the pace once it is written rather than call into the same empty bucket.
 */
const learning = new Map<string, Promise<unknown>>();

/** How long a pace read that found the shop cool is shared by this container's creates to it. */
export const COOL_SHARED_MS = 200;

/**
 * The pace reads of this container, by shop: the creates of one batch to one supplier (the runner
 * takes a batch's messages together) share one read rather than make one each: the read in flight,
 * and an answer that the shop is cool for `COOL_SHARED_MS`, less than the lag an eventually consistent
 * read may already have. A hot pace is read by each create (its slot is taken with a write anyway),
 * and a learning (`learnFrom`) drops the read it outdates.
 */
const paceReads = sharedReads(
  (shopDomain) => readPace(shopDomain),
  COOL_SHARED_MS,
  (pace) => pace === undefined,
);

/** What a create learns of its shop's pace: the pace it called under, or the slot the job waits for. */
export interface PaceTurn {
  pace?: SupplierPace;
  waitForSlotAt?: number;
}

/**
 * The turn of a create on `shopDomain`: at once on a cool shop; at the slot its message keeps
 * (`slotAt`), unless it came too late for it; else at the slot the pace gives it, waited for in
 * process when it is close.
 */
export const takeTurn = async (shopDomain: string, slotAt: number | undefined): Promise<PaceTurn> => {
  if (slotAt !== undefined && Date.now() - slotAt <= LATE_MS) {
    await sleepUntil(slotAt);
    return {};
  }
  await learning.get(shopDomain)?.catch(() => undefined);
  const pace = await paceReads.get(shopDomain);
  if (!pace) return {};
  let slot = await takeSlot(shopDomain, pace);
  // A slot already behind when the write answers (a slow table under load) is given up, as a kept
  // slot come too late is: the workers whose writes were slow would otherwise call together. The
  // second take finds the pace as it stands now; its slot is called at whatever it is.
  if (slot !== undefined && Date.now() - slot > LATE_MS) slot = await takeSlot(shopDomain, pace);
  if (slot === undefined) return {};
  if (slot - Date.now() > WAIT_IN_PROCESS_MS) return { pace, waitForSlotAt: slot };
  await sleepUntil(slot);
  return { pace };
};

/**
 * A create the shop throttled (429, `throttleOf`): the shop turns hot, its pace takes the rate the
 * platform states, or, without one, slows down (shared/entities/rate-limits.ts).
 */
export const learnFrom = async (
  shopDomain: string,
  turn: PaceTurn,
  throttle: { retryAfterSeconds: number; ratePerSecond?: number },
) => {
  const now = Date.now();
  const learnt = learnThrottle(shopDomain, {
    reopensAt: now + throttle.retryAfterSeconds * 1000,
    statedIntervalMs: throttle.ratePerSecond ? (1000 / throttle.ratePerSecond) * STATED_RATE_MARGIN : undefined,
    fallbackIntervalMs: throttle.retryAfterSeconds * 1000,
    pacedAt: turn.pace,
  });
  learning.set(shopDomain, learnt);
  paceReads.drop(shopDomain);
  try {
    await learnt;
  } finally {
    if (learning.get(shopDomain) === learnt) learning.delete(shopDomain);
  }
};
