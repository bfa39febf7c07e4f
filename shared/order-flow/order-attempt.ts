/**
 * A sync job's attempt history (CONTRACT.md §6, `GET /v1/sync_jobs/{id}/attempts`): what each try
 * to place the order came to, so an on-call engineer sees why a job is where it is without a log.
 * It lives on the job item and is written by the very update that moves the job (order-transitions.ts),
 * so it costs no write of its own; that is why it is kept short: at most MAX_KEPT_ATTEMPTS entries,
 * throttled attempts in a row folded into one with a `count`, and stored with one-letter keys
 * (every byte of the job item is paid again by each of its writes).
 */

export const ATTEMPT_TRIGGERS = ['webhook', 'redelivery', 'retry', 'reconciler', 'poll'] as const;
export type AttemptTrigger = (typeof ATTEMPT_TRIGGERS)[number];

export const ATTEMPT_OUTCOMES = ['completed', 'failed', 'throttled', 'dead', 'found_existing'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export const MAX_KEPT_ATTEMPTS = 100;

/** How an attempt ended, as its mover tells it; the move adds its generation and end time. */
export interface AttemptEnd {
  /** What sent the message: the order webhook, SQS again, a manual retry, the reconciler. */
  trigger: AttemptTrigger;
  outcome: AttemptOutcome;
  /** The platform's HTTP status; null when there was none (a timeout, no call made). */
  platformStatus: number | null;
  errorMessage: string | null;
  startedAt: string;
}

/** One entry of a job's attempt history. */
export interface Attempt extends AttemptEnd {
  /** 1, 2, …: the entry's place in the job's history (a folded run keeps its first number). */
  number: number;
  /** The generation of the message it ran under: which enqueue of the job it belongs to. */
  generation: number;
  endedAt: string;
  /** The time spent in it (for a folded run, in all of them). */
  durationMs: number;
  /** Attempts in the entry: more than 1 only for throttled attempts in a row. */
  count: number;
}

/**
 * The history with the attempt a move ends added (under the move's generation and time): folded
 * into the last entry when both were throttled, at most the last 100.
 */
export const appendAttempt = (
  log: Attempt[],
  attempt: AttemptEnd & Pick<Attempt, 'generation' | 'endedAt'>,
): Attempt[] => {
  const durationMs = Math.max(0, Date.parse(attempt.endedAt) - Date.parse(attempt.startedAt));
  const last = log.at(-1);
  if (last?.outcome === 'throttled' && attempt.outcome === 'throttled') {
    const folded: Attempt = {
      ...last,
      generation: attempt.generation,
      platformStatus: attempt.platformStatus,
      errorMessage: attempt.errorMessage,
      endedAt: attempt.endedAt,
      durationMs: last.durationMs + durationMs,
      count: last.count + 1,
    };
    return [...log.slice(0, -1), folded];
  }
  return [...log, { ...attempt, number: (last?.number ?? 0) + 1, durationMs, count: 1 }].slice(-MAX_KEPT_ATTEMPTS);
};

/** Failed attempts of one generation: the tries one message had before SQS gave up on it. */
export const failedAttemptsOf = (log: Attempt[], generation: number) =>
  log.filter((attempt) => attempt.generation === generation && attempt.outcome === 'failed').length;

// ---------- storage

/**
 * One entry as stored: `n` number, `g` generation, `t` trigger, `o` outcome, `s` platform status,
 * `e` error message, `a` started (epoch ms: 8 bytes rather than 24), `d` duration, and for a folded
 * run `b` ended (epoch ms) and `c` count. Absent when null, or (`b`) when it is `a` + `d`.
 */
interface StoredAttempt {
  n: number;
  g: number;
  t: AttemptTrigger;
  o: AttemptOutcome;
  s?: number;
  e?: string;
  a: number;
  d: number;
  b?: number;
  c?: number;
}

const iso = (epochMs: number) => new Date(epochMs).toISOString();

export const storedAttempts = (log: Attempt[]): StoredAttempt[] =>
  log.map((attempt) => ({
    n: attempt.number,
    g: attempt.generation,
    t: attempt.trigger,
    o: attempt.outcome,
    ...(attempt.platformStatus === null ? {} : { s: attempt.platformStatus }),
    ...(attempt.errorMessage === null ? {} : { e: attempt.errorMessage }),
    a: Date.parse(attempt.startedAt),
    d: attempt.durationMs,
    ...(Date.parse(attempt.endedAt) === Date.parse(attempt.startedAt) + attempt.durationMs
      ? {}
      : { b: Date.parse(attempt.endedAt) }),
    ...(attempt.count === 1 ? {} : { c: attempt.count }),
  }));

/** The history of a job item (written only by storedAttempts); empty before the first attempt ends. */
export const attemptsFrom = (stored: readonly StoredAttempt[] | undefined): Attempt[] =>
  (stored ?? []).map((entry) => ({
    number: entry.n,
    generation: entry.g,
    trigger: entry.t,
    outcome: entry.o,
    platformStatus: entry.s ?? null,
    errorMessage: entry.e ?? null,
    startedAt: iso(entry.a),
    endedAt: iso(entry.b ?? entry.a + entry.d),
    durationMs: entry.d,
    count: entry.c ?? 1,
  }));

// ---------- ids

/** `sja_<job id without its prefix>_<number>`: stable, and it names its job, so a cursor can be checked. */
export const attemptId = (jobId: string, number: number) => `sja_${jobId.replace(/^sj_/, '')}_${number}`;

/** The number an attempt id names for `jobId`, or undefined when it is not an attempt id of that job. */
export const attemptNumberOf = (jobId: string, id: string) => {
  const prefix = attemptId(jobId, 0).slice(0, -1);
  if (!id.startsWith(prefix)) return undefined;
  const rest = id.slice(prefix.length);
  return /^[1-9]\d{0,8}$/.test(rest) ? Number(rest) : undefined;
};
