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
