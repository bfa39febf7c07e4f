import {
  type Attempt,
  type AttemptEnd,
  appendAttempt,
  attemptId,
  attemptNumberOf,
  attemptsFrom,
  failedAttemptsOf,
  MAX_KEPT_ATTEMPTS,
  storedAttempts,
} from '../../shared/order-flow/order-sync-job.js';

const at = (second: number) => new Date(Date.UTC(2026, 10, 21, 4, 0, second)).toISOString();
const record = (outcome: AttemptEnd['outcome'], second: number, extra: Partial<Attempt> = {}) => ({
  generation: 1,
  trigger: 'webhook' as const,
  outcome,
  platformStatus: outcome === 'throttled' ? 429 : null,
  errorMessage: null,
  startedAt: at(second),
  endedAt: at(second + 1),
  ...extra,
});

describe('the attempt history of a job', () => {
  it('numbers attempts 1, 2, … with their duration', () => {
    const log = appendAttempt(appendAttempt([], record('failed', 0)), record('completed', 10));
    expect(log.map((a) => [a.number, a.outcome, a.durationMs, a.count])).toEqual([
      [1, 'failed', 1000, 1],
      [2, 'completed', 1000, 1],
    ]);
  });

  it('folds throttled attempts in a row into one entry with a count, keeping its number and start', () => {
    let log: Attempt[] = [];
    for (let i = 0; i < 5; i++) log = appendAttempt(log, record('throttled', i * 2, { generation: i + 1 }));
    log = appendAttempt(log, record('dead', 20, { errorMessage: 'throttled for more than 8 s' }));
    expect(log).toHaveLength(2);
    expect(log[0]).toMatchObject({
      number: 1,
      outcome: 'throttled',
      count: 5,
      generation: 5,
      startedAt: at(0),
      endedAt: at(9),
      durationMs: 5000,
    });
    expect(log[1]).toMatchObject({ number: 2, outcome: 'dead', count: 1 });
  });

  it('keeps the last 100 entries', () => {
    let log: Attempt[] = [];
    for (let i = 0; i < MAX_KEPT_ATTEMPTS + 5; i++) log = appendAttempt(log, record('failed', i));
    expect(log).toHaveLength(MAX_KEPT_ATTEMPTS);
    expect(log[0].number).toBe(6);
    expect(log.at(-1)!.number).toBe(105);
  });

  it('stores entries compactly and reads them back unchanged', () => {
    let log = appendAttempt([], record('throttled', 0));
    log = appendAttempt(log, record('throttled', 5));
    log = appendAttempt(log, record('completed', 9, { platformStatus: 201, trigger: 'retry' }));
    const stored = storedAttempts(log);
    expect(stored[1]).toEqual({ n: 2, g: 1, t: 'retry', o: 'completed', s: 201, a: Date.parse(at(9)), d: 1000 });
    expect(stored[0]).toMatchObject({ c: 2, a: Date.parse(at(0)), b: Date.parse(at(6)) });
    expect(attemptsFrom(stored)).toEqual(log);
  });

  it('counts the failed attempts of one generation (one message’s tries)', () => {
    let log: Attempt[] = [];
    log = appendAttempt(log, record('failed', 0, { generation: 1 }));
    log = appendAttempt(log, record('failed', 2, { generation: 2 }));
    log = appendAttempt(log, record('failed', 4, { generation: 2 }));
    expect(failedAttemptsOf(log, 2)).toBe(2);
  });

  it('names each entry by its job and number, and reads a cursor back only for that job', () => {
    const id = attemptId('sj_abc', 7);
    expect(id).toBe('sja_abc_7');
    expect(attemptNumberOf('sj_abc', id)).toBe(7);
    expect(attemptNumberOf('sj_other', id)).toBeUndefined();
    expect(attemptNumberOf('sj_abc', 'sja_abc_0')).toBeUndefined();
    expect(attemptNumberOf('sj_abc', 'sja_abc_x')).toBeUndefined();
  });
});
