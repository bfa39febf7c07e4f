import type { PollMark } from '../entities/store-poll.js';

/**
 * The watermark of a store's polls (CONTRACT.md §10.7), as pure functions: where a poll asks from,
 * which changes it has handled already, and the mark after a poll. It starts at the store's
 * `createdAt`, moves only past what was handled (changes come oldest first and are handled in that
 * order, so what was handled is a prefix), and each poll asks from `OVERLAP_MS` before it, for clock
 * skew. A change seen again in that overlap is known by `<orderId>@<updated_at>` in `recent`, so it
 * costs neither a use case's reads nor a write.
 */

/** How far before the watermark each poll asks from. */
export const OVERLAP_MS = 5 * 60_000;

/**
 * The most changes `recent` keeps (the newest): a shop with more changes than this within five
 * minutes of its watermark has the rest handled again, which the use cases make a no-op.
 */
export const MAX_RECENT = 200;

/** One change of an order, as "Orders changed since" answers it. */
export interface Change {
  orderId: string;
  /** The change's `updated_at`, as the platform wrote it. */
  updatedAt: string;
}

const instant = (time: string) => new Date(time).getTime();
const iso = (ms: number) => new Date(ms).toISOString();

/** The mark of a store never polled. */
export const NO_MARK: PollMark = { watermark: null, recent: [], failures: 0, notBefore: null };

/** `<orderId>@<updated_at>`, the instant written as ISO, so two offsets of one instant are one change. */
export const changeKey = (change: Change) => {
  const at = instant(change.updatedAt);
  return `${change.orderId}@${Number.isFinite(at) ? iso(at) : change.updatedAt}`;
};

/** What a poll asks from: the watermark (the store's `createdAt` before any) less the overlap. */
export const pollSince = (mark: PollMark, storeCreatedAt: string) =>
  iso(instant(mark.watermark ?? storeCreatedAt) - OVERLAP_MS);

/** Whether a poll handled this very change already (it came again in the overlap). */
export const handledAlready = (mark: PollMark, change: Change) => mark.recent.includes(changeKey(change));

/**
 * The mark after a poll that handled `handled` (in the order answered; those handled already count
 * too), or null when it has nothing new to write: the watermark moves to the latest handled, never
 * back, and `recent` keeps the changes within the overlap before it. Failures are reset.
 */
export const advance = (mark: PollMark, handled: Change[]): PollMark | null => {
  // A change whose time is no instant never moves the watermark (the adapters refuse those already).
  const fresh = handled.filter((change) => Number.isFinite(instant(change.updatedAt)) && !handledAlready(mark, change));
  if (!fresh.length) return null;
  const latest = Math.max(...fresh.map((change) => instant(change.updatedAt)));
  const watermark = mark.watermark === null ? latest : Math.max(instant(mark.watermark), latest);
  const keys = [...new Set([...mark.recent, ...fresh.map(changeKey)])];
  const recent = keys
    .map((key) => ({ key, at: instant(key.slice(key.lastIndexOf('@') + 1)) }))
    .filter((entry) => entry.at >= watermark - OVERLAP_MS)
    .sort((a, b) => a.at - b.at)
    .slice(-MAX_RECENT)
    .map((entry) => entry.key);
  return { watermark: iso(watermark), recent, failures: 0, notBefore: null };
};

/** Whether a change is of an order created before its store: history, never routed by a poll. */
export const isHistory = (orderCreatedAt: string | null, storeCreatedAt: string) =>
  orderCreatedAt === null || Number.isNaN(instant(orderCreatedAt)) || instant(orderCreatedAt) < instant(storeCreatedAt);

/** Whether the shop asked not to be called before a time still to come. */
export const waitingForShop = (mark: PollMark, now: number) => mark.notBefore !== null && instant(mark.notBefore) > now;
