/**
 * Bounded concurrency, for the few places that fan work out (the reconciler, the index backfill):
 * enough requests at once to hide each one's round trip, never so many that a large batch opens a
 * socket per item or meets DynamoDB's throttling all at once.
 */

/** Runs `work` over `items`, at most `limit` at a time. */
export const inPool = async <T>(items: readonly T[], limit: number, work: (item: T) => Promise<unknown>) => {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
};

/** A gate that lets at most `limit` tasks run at once, wherever they come from; the others wait in turn. */
export const limiter = (limit: number) => {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    // A task that ends hands its place to the next in line, so `running` never passes `limit`.
    if (running < limit) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
};

/** Keys a `sharedReads` keeps at most: the oldest is dropped first. */
const SHARED_READS_MAX = 1_000;

/**
 * Reads shared by key within one environment: a read in flight is joined rather than made again, and
 * an answer that `keep` accepts is shared for `keepMs` after it came, so the messages of one batch
 * (which the runner takes together) make one read between them. `drop` forgets a key's read (a write
 * that outdates it). A failed read is not kept.
 */
export const sharedReads = <T>(read: (key: string) => Promise<T>, keepMs: number, keep: (value: T) => boolean) => {
  const shared = new Map<string, { value: Promise<T>; until: number }>();
  const forget = (key: string, entry: { value: Promise<T> }) => {
    if (shared.get(key) === entry) shared.delete(key);
  };
  const get = (key: string): Promise<T> => {
    const found = shared.get(key);
    if (found && found.until > Date.now()) return found.value;
    const entry = { value: read(key), until: Number.POSITIVE_INFINITY };
    shared.delete(key);
    if (shared.size >= SHARED_READS_MAX) shared.delete(shared.keys().next().value!);
    shared.set(key, entry);
    entry.value.then(
      (value) => {
        if (keep(value)) entry.until = Date.now() + keepMs;
        else forget(key, entry);
      },
      () => forget(key, entry),
    );
    return entry.value;
  };
  /** Whether `get` would answer a read that has come and is kept (not one it makes, or joins in flight). */
  const kept = (key: string) => {
    const found = shared.get(key);
    return found !== undefined && found.until !== Number.POSITIVE_INFINITY && found.until > Date.now();
  };
  return { get, drop: (key: string) => shared.delete(key), kept };
};

/** How many times a read-then-conditional-write is tried before the writer gives up. */
export const REREADS = 5;

/**
 * A lost race that came back with the item as the winner left it (a failed conditional write
 * answers the item it met: table.ts `ConditionFailed`): the next try takes it, with no read.
 */
export class Met<S> {
  constructor(readonly current: S) {}
}

/**
 * A read-then-conditional-write, tried again after each lost race, up to REREADS tries; throws
 * when the item kept changing under it, so the caller's caller (a webhook's platform, a message's
 * queue) tries again later. `write` answers `Met` with the item its failed write met, or `'again'`
 * when it has none: then, and only then, the item is read (the one fallback read of every writer).
 * `first`: the item as the caller just read it, taken for the first try instead of a read.
 */
export const withRereads = async <S, T>(
  read: () => Promise<S>,
  write: (current: S) => Promise<T | 'again' | Met<S>>,
  what: string,
  first?: S,
): Promise<T> => {
  let current: S = first === undefined ? await read() : first;
  for (let attempt = 0; attempt < REREADS; attempt++) {
    const result = await write(current);
    if (result instanceof Met) current = (result as Met<S>).current;
    else if (result === 'again') current = await read();
    else return result as T;
  }
  throw new Error(`${what} kept changing under the writer`);
};
