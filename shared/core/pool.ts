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
