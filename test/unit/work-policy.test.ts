import {
  gaveUpReason,
  leaseEnd,
  MAX_RESENDS,
  noProgressReason,
  throttledPastBudget,
} from '../../shared/core/config.js';

/** One policy for how work ends, for sync jobs and fulfillment entries alike (CONTRACT.md §6). */
describe('work policy', () => {
  const at = Date.parse('2026-11-25T00:00:00.000Z');
  const before = (seconds: number) => new Date(at - seconds * 1000).toISOString();

  it('ends throttled work once THROTTLE_BUDGET_SECONDS have passed since its run of 429s began', () => {
    // The unit tests' budget is the default: a day.
    expect(throttledPastBudget('answered 429', before(86_399), before(10), at)).toBeUndefined();
    expect(throttledPastBudget('answered 429', before(86_400), before(10), at)).toBe(
      'answered 429; throttled for more than 86400 s',
    );
    // Without a run under way, the attempt in hand begins it.
    expect(throttledPastBudget('answered 429', undefined, before(5), at)).toBeUndefined();
    expect(throttledPastBudget('answered 429', undefined, before(90_000), at)).toMatch(/more than 86400 s$/);
  });

  it('keeps the last failure as the headline of every end, and says why the work ended', () => {
    expect(gaveUpReason('answered 503', 3)).toBe('answered 503; gave up after 3 attempts');
    expect(gaveUpReason(null, 1)).toBe('gave up after 1 attempt');
    expect(noProgressReason('answered 500')).toBe(
      `answered 500; no progress after ${MAX_RESENDS} messages re-sent by the reconciler`,
    );
    expect(noProgressReason(undefined)).toBe('no progress after 3 messages re-sent by the reconciler');
  });

  it('runs a lease from the last move or the end of the announced wait, whichever is later', () => {
    expect(leaseEnd({ updatedAt: before(100) }, 60)).toBe(at - 40_000);
    expect(leaseEnd({ updatedAt: before(100), waitUntil: before(-30) }, 60)).toBe(at + 90_000);
    expect(leaseEnd({ updatedAt: before(100), waitUntil: null }, 60, 900)).toBe(at + 860_000);
  });
});
