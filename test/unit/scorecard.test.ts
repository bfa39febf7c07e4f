import {
  bucketOf,
  figuresOfJob,
  HOUR_BUCKETS,
  percentileOf,
  progressAfter,
  scanVerdictOf,
  scorecardOf,
  shipmentStatusOf,
  sumDays,
} from '../../shared/domain/shipping';

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

  it('counts a job late now while not shipped at its due time; shipped late or leaving the count, not', () => {
    expect(figuresOfJob(job(0, { shippedAt: null }))).toMatchObject({ late: 1, lateNow: 1 });
    expect(figuresOfJob(job(60))).toMatchObject({ late: 1, lateNow: 0 });
    expect(figuresOfJob(job(10))).toMatchObject({ lateNow: 0 });
    // Three late at their due time; one ships since (its day's −1), one is cancelled (−1): one late now.
    const late = figuresOfJob(job(0, { shippedAt: null }));
    const left = { ...sumDays([]), lateNow: -1 };
    const days = [late, late, late, figuresOfJob(job(10)), left, left].filter((day) => day !== null);
    expect(scorecardOf(days)).toMatchObject({ jobsDue: 4, lateNow: 1, lateShipmentRate: 0.75 });
    expect(scorecardOf([])).toMatchObject({ lateNow: 0 });
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

  it('decides a parcel once scanned in its window or the window closed: valid, unscanned, untracked', () => {
    const placedAt = '2026-11-09T14:00:00.000Z';
    const parcel = (id: string, reported: boolean, firstScanAt: string | null) => ({
      id,
      reported,
      firstScanAt,
      scanDueAt: '2026-11-12T04:59:59.000Z',
    });
    const before = new Date('2026-11-11T00:00:00Z');
    const after = new Date('2026-11-12T06:00:00Z');
    const scanned = parcel('a', true, '2026-11-10T02:00:00.000Z');
    // Scanned in time: decided at once; one window still open: look again when it closes.
    const decided = scanVerdictOf({ placedAt, onTime: true }, [scanned], before);
    expect(decided.lookAgainAt).toBeUndefined();
    expect(decided).toMatchObject({
      unscanned: [],
      add: { scanOnTime: 1, tracked: 1, validTracking: 1, untracked: 0 },
    });
    const open = scanVerdictOf({ placedAt, onTime: true }, [scanned, parcel('b', true, null)], before);
    expect(open).toMatchObject({ lookAgainAt: '2026-11-12T04:59:59.000Z', unscanned: [] });
    expect(sumDays([open.add])).toMatchObject({ tracked: 0, scanOnTime: 0 });
    // Closed: reported and not scanned (or scanned too late) is unscanned; never reported is untracked.
    const late = parcel('c', true, '2026-11-12T05:00:00.000Z');
    const closed = scanVerdictOf({ placedAt, onTime: true }, [scanned, parcel('b', true, null), late], after);
    expect(closed.unscanned).toEqual(['b', 'c']);
    expect(closed.add).toMatchObject({ scanOnTime: 0, tracked: 3, validTracking: 1, untracked: 0 });
    const untracked = scanVerdictOf({ placedAt, onTime: true }, [parcel('d', false, null)], after);
    expect(untracked).toMatchObject({ unscanned: [], add: { tracked: 0, untracked: 1, scanOnTime: 0 } });
    // Hours to the first scan: 12 hours, bucket ≤ 12; the rates over the days.
    expect(closed.add.scans[bucketOf(12)]).toBe(1);
    const card = scorecardOf([
      { ...closed.add, due: 1, onTime: 1 },
      { ...untracked.add, due: 1, onTime: 1 },
    ]);
    expect(card).toMatchObject({ scanVerifiedOnTimeRate: 0, validTrackingRate: 0.3333, untrackedParcels: 1 });
    expect(card.hoursToFirstScan).toEqual({ p50: 12, p90: 12 });
  });

  it('moves a parcel status forward only, its first scan the earliest reported', () => {
    expect(['IN_TRANSIT', 'carrier_picked_up', 'picked_up', 'BUYER_ACTION_REQUIRED', 7].map(shipmentStatusOf)).toEqual([
      'in_transit',
      'in_transit',
      'delivered',
      null,
      null,
    ]);
    const transit = progressAfter({}, { status: 'in_transit', at: '2026-11-10T02:00:00.000Z' });
    expect(transit).toEqual({ shipmentStatus: 'in_transit', firstScanAt: '2026-11-10T02:00:00.000Z' });
    const delivered = progressAfter(transit!, { status: 'delivered', at: '2026-11-11T02:00:00.000Z' });
    expect(delivered).toEqual({ shipmentStatus: 'delivered', firstScanAt: '2026-11-10T02:00:00.000Z' });
    // A late in_transit after delivered changes nothing; an earlier scan moves the first scan back.
    expect(progressAfter(delivered!, { status: 'in_transit', at: '2026-11-10T03:00:00.000Z' })).toBeUndefined();
    expect(progressAfter(delivered!, { status: 'in_transit', at: '2026-11-09T23:00:00.000Z' })).toEqual({
      shipmentStatus: 'delivered',
      firstScanAt: '2026-11-09T23:00:00.000Z',
    });
    // `confirmed` and `failure` are no scans.
    expect(progressAfter({}, { status: 'confirmed', at: '2026-11-10T02:00:00.000Z' })).toEqual({
      shipmentStatus: 'confirmed',
    });
    expect(progressAfter({ shipmentStatus: 'label_printed' }, { status: 'failure', at: null })).toEqual({
      shipmentStatus: 'failure',
    });
  });
});
