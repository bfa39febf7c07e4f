import { bucketOf, figuresOfJob, HOUR_BUCKETS, percentileOf, scorecardOf } from '../../shared/domain/scorecard';

const job = (hours: number, over: Partial<Parameters<typeof figuresOfJob>[0]> = {}) => ({
  dueAt: '2026-11-10T04:59:59.000Z',
  placedAt: '2026-11-08T00:00:00.000Z',
  shippedAt: new Date(Date.parse('2026-11-08T00:00:00.000Z') + hours * 3_600_000).toISOString(),
  cancelledBy: null,
  ...over,
});

describe('the scorecard from per-day figures (CONTRACT.md §16.3)', () => {
  it('puts hours into the first bucket at or above them, the open one past the last bound', () => {
    expect([bucketOf(0), bucketOf(1), bucketOf(1.01), bucketOf(720), bucketOf(721)]).toEqual([0, 0, 1, 20, 21]);
    expect(HOUR_BUCKETS).toHaveLength(21);
  });

  it('counts a job on time, late, cancelled by its supplier, and leaves out a reseller cancellation', () => {
    expect(figuresOfJob(job(10))).toMatchObject({ due: 1, onTime: 1, late: 0 });
    expect(figuresOfJob(job(60))).toMatchObject({ due: 1, onTime: 0, late: 1 });
    expect(figuresOfJob(job(0, { shippedAt: null }))).toMatchObject({ due: 1, late: 1 });
    expect(figuresOfJob(job(0, { cancelledBy: 'source' }))).toMatchObject({ due: 1, sourceCancelled: 1, late: 0 });
    expect(figuresOfJob(job(0, { cancelledBy: 'reseller' }))).toBeNull();
  });

  it('adds days up to the rates of their jobs, percentiles from the histogram', () => {
    const jobs = [...Array.from({ length: 18 }, (_, i) => job(i + 1)), job(60), job(0, { cancelledBy: 'source' })];
    const days = jobs.map(figuresOfJob).filter((day) => day !== null);
    const card = scorecardOf(days);
    expect(card).toMatchObject({ jobsDue: 20, shippedOnTime: 18, onTimeRate: 0.9, lateShipmentRate: 0.05 });
    expect(card).toMatchObject({ sourceCancellationRate: 0.05, sufficient: true });
    // 18 on-time jobs of 1..18 hours: the 9th is 9 hours (bucket ≤ 12), the 17th is 17 (≤ 20).
    expect(card.hoursToTracking).toEqual({ p50: 12, p90: 20 });
    expect(percentileOf([0, 0], 0.5)).toBeNull();
    expect(scorecardOf([])).toMatchObject({ jobsDue: 0, onTimeRate: null, sufficient: false });
  });
});
