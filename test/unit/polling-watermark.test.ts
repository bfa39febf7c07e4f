import { advance, handledAlready, isHistory, MAX_RECENT, NO_MARK, pollSince } from '../../shared/polling/watermark.js';

/** The watermark of a store's polls (CONTRACT.md §10.7): where a poll asks from, and how it moves. */

const CREATED = '2026-01-01T00:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(CREATED) + minutes * 60_000).toISOString();

describe('poll watermark', () => {
  it('starts at the store’s createdAt and asks from 5 minutes before it', () => {
    expect(pollSince(NO_MARK, CREATED)).toBe(at(-5));
    expect(pollSince({ ...NO_MARK, watermark: at(60) }, CREATED)).toBe(at(55));
  });

  it('moves to the latest change handled, and writes nothing when nothing new was handled', () => {
    const mark = advance(NO_MARK, [
      { orderId: '1', updatedAt: at(10) },
      { orderId: '2', updatedAt: at(12) },
    ]);
    expect(mark).toMatchObject({ watermark: at(12), failures: 0, notBefore: null });
    expect(advance(mark!, [{ orderId: '2', updatedAt: at(12) }])).toBeNull();
    expect(advance(NO_MARK, [])).toBeNull();
  });

  it('never moves to a time that is no instant, nor throws on one', () => {
    expect(advance(NO_MARK, [{ orderId: '1', updatedAt: 'yesterday' }])).toBeNull();
    const mark = advance(NO_MARK, [
      { orderId: '1', updatedAt: at(3) },
      { orderId: '2', updatedAt: '' },
    ]);
    expect(mark).toMatchObject({ watermark: at(3) });
  });

  it('knows a change seen again in the overlap, whatever offset its time is written with', () => {
    const mark = advance(NO_MARK, [{ orderId: '7', updatedAt: at(10) }])!;
    expect(handledAlready(mark, { orderId: '7', updatedAt: '2026-01-01T01:10:00+01:00' })).toBe(true);
    expect(handledAlready(mark, { orderId: '7', updatedAt: at(11) })).toBe(false);
    expect(handledAlready(mark, { orderId: '8', updatedAt: at(10) })).toBe(false);
  });

  it('never moves back, and keeps only the changes within the overlap before it', () => {
    const first = advance(NO_MARK, [
      { orderId: '1', updatedAt: at(0) },
      { orderId: '2', updatedAt: at(20) },
    ])!;
    expect(first.recent).toEqual([`2@${at(20)}`]);
    const late = advance(first, [{ orderId: '3', updatedAt: at(17) }])!;
    expect(late.watermark).toBe(at(20));
    expect(late.recent).toEqual([`3@${at(17)}`, `2@${at(20)}`]);
  });

  it('keeps at most MAX_RECENT changes, the newest', () => {
    const changes = Array.from({ length: MAX_RECENT + 5 }, (_, i) => ({
      orderId: String(i),
      updatedAt: new Date(Date.parse(at(10)) + i).toISOString(),
    }));
    const mark = advance(NO_MARK, changes)!;
    expect(mark.recent).toHaveLength(MAX_RECENT);
    expect(handledAlready(mark, changes[changes.length - 1])).toBe(true);
    expect(handledAlready(mark, changes[0])).toBe(false);
  });

  it('takes an order created before its store, or with no creation time, for history', () => {
    expect(isHistory(at(-1), CREATED)).toBe(true);
    expect(isHistory(null, CREATED)).toBe(true);
    expect(isHistory(CREATED, CREATED)).toBe(false);
    expect(isHistory(at(1), CREATED)).toBe(false);
  });
});
