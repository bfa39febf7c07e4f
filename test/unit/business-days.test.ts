import {
  DEFAULT_WORKING_DAYS,
  dueAtOf,
  instantOf,
  isCutoffTime,
  isLocalDate,
  isTimeZone,
  type ServiceLevel,
  scanDueAtOf,
} from '../../shared/domain/shipping.js';

/** CONTRACT.md §16.1 and platform-notes/supplier-sla-platform.md §3 (the worked examples). */
const promise = (over: Partial<ServiceLevel>): ServiceLevel => ({
  shipWithinBusinessDays: 2,
  cutoffTime: '14:00',
  timeZone: 'America/New_York',
  workingDays: DEFAULT_WORKING_DAYS,
  daysOff: [],
  ...over,
});

describe('the business-day rule', () => {
  it("Shopify's example: a Wednesday order after a 12:00 cut-off with the Friday off is due Tuesday", () => {
    const level = promise({ cutoffTime: '12:00', daysOff: ['2025-01-24'] });
    // Wed 22 Jan 2025 13:30 in New York (EST, UTC-5).
    const due = dueAtOf(level, new Date('2025-01-22T18:30:00Z'));
    // Tue 28 Jan 23:59:59 EST.
    expect(due.toISOString()).toBe('2025-01-29T04:59:59.000Z');
  });

  it('a Friday-evening order in Asia/Kolkata counts from Monday', () => {
    const level = promise({ shipWithinBusinessDays: 1, timeZone: 'Asia/Kolkata' });
    // Fri 4 Dec 2026 19:00 IST (UTC+5:30): after the cut-off, so Monday is day 0, Tuesday is due.
    const due = dueAtOf(level, new Date('2026-12-04T13:30:00Z'));
    expect(due.toISOString()).toBe('2026-12-08T18:29:59.000Z');
  });

  it('a DST weekend in America/New_York: due in EST after an order in EDT', () => {
    const level = promise({ shipWithinBusinessDays: 1 });
    // Fri 30 Oct 2026 11:00 EDT: day 0 Friday, due Monday 2 Nov 23:59:59 EST.
    const due = dueAtOf(level, new Date('2026-10-30T15:00:00Z'));
    expect(due.toISOString()).toBe('2026-11-03T04:59:59.000Z');
  });

  it('counts the lag as SupplierOne does: lag 0 ships that day before the cut-off, the next after it', () => {
    const level = promise({ shipWithinBusinessDays: 0 });
    // Wed 11 Nov 2026 10:00 and 15:00 EST.
    expect(dueAtOf(level, new Date('2026-11-11T15:00:00Z')).toISOString()).toBe('2026-11-12T04:59:59.000Z');
    expect(dueAtOf(level, new Date('2026-11-11T20:00:00Z')).toISOString()).toBe('2026-11-13T04:59:59.000Z');
    // Lag 3 after the cut-off on Monday 9 Nov: the fourth business day, Friday 13th.
    const lag3 = promise({ shipWithinBusinessDays: 3 });
    expect(dueAtOf(lag3, new Date('2026-11-09T21:00:00Z')).toISOString()).toBe('2026-11-14T04:59:59.000Z');
  });

  it('a weekend order counts as Monday before the cut-off; one instant in two zones differs', () => {
    // Sat 14 Nov 2026 09:00 EST: Monday is day 0, due Wednesday.
    expect(dueAtOf(promise({}), new Date('2026-11-14T14:00:00Z')).toISOString()).toBe('2026-11-19T04:59:59.000Z');
    // Fri 23:30Z = Fri 18:30 New York (after the cut-off) = Sat 08:30 Tokyo: both due Tuesday.
    const at = new Date('2026-11-13T23:30:00Z');
    expect(dueAtOf(promise({ shipWithinBusinessDays: 1 }), at).toISOString()).toBe('2026-11-18T04:59:59.000Z');
    const tokyo = promise({ shipWithinBusinessDays: 1, timeZone: 'Asia/Tokyo' });
    expect(dueAtOf(tokyo, at).toISOString()).toBe('2026-11-17T14:59:59.000Z');
  });

  it('honours working days other than Monday to Friday', () => {
    const level = promise({ shipWithinBusinessDays: 1, workingDays: ['sun', 'mon', 'tue', 'wed', 'thu'] });
    // Thu 12 Nov 2026 15:00 EST (after the cut-off): Sunday is day 0, Monday is due.
    expect(dueAtOf(level, new Date('2026-11-12T20:00:00Z')).toISOString()).toBe('2026-11-17T04:59:59.000Z');
  });

  it('resolves a time in a DST gap forward, one in an overlap to the earlier instant (Temporal: compatible)', () => {
    expect(instantOf('2026-03-08', '02:30', 'America/New_York').toISOString()).toBe('2026-03-08T07:30:00.000Z');
    expect(instantOf('2026-11-01', '01:30', 'America/New_York').toISOString()).toBe('2026-11-01T05:30:00.000Z');
  });

  it('gives a parcel 2 working days for its first scan', () => {
    // Created Fri 13 Nov 2026 10:00 EST: scan due Tue 17 Nov 23:59:59 EST.
    const due = scanDueAtOf(promise({}), new Date('2026-11-13T15:00:00Z'));
    expect(due.toISOString()).toBe('2026-11-18T04:59:59.000Z');
  });

  it('validates zones, cut-offs and dates', () => {
    expect(isTimeZone('Asia/Kolkata')).toBe(true);
    expect(isTimeZone('US/Eastern')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
    expect(isTimeZone('')).toBe(false);
    expect(isCutoffTime('14:00')).toBe(true);
    expect(isCutoffTime('24:00')).toBe(false);
    expect(isCutoffTime('9:00')).toBe(false);
    expect(isLocalDate('2026-12-25')).toBe(true);
    expect(isLocalDate('2026-02-30')).toBe(false);
  });
});
