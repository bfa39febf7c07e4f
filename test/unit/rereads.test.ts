import { Met, REREADS, withRereads } from '../../shared/core/concurrency.js';

/** withRereads over `read` from the caller's 'given', each try's write answering `answer(seen)`: what it saw. */
const tries = async (read: () => Promise<string>, answer: (seen: string[]) => unknown) => {
  const seen: string[] = [];
  const result = await withRereads(
    read,
    async (current) => {
      seen.push(current);
      return answer(seen);
    },
    'the item',
    'given',
  );
  return { result, seen };
};

describe('withRereads: a read-then-conditional-write, read again after each lost race', () => {
  it('takes the caller’s read for the first try, and reads again only after a lost race', async () => {
    const read = jest.fn(async () => 'fresh');
    const { result, seen } = await tries(read, (seen) => (seen.length < 2 ? 'again' : `wrote over ${seen.at(-1)}`));
    expect(result).toBe('wrote over fresh');
    expect(seen).toEqual(['given', 'fresh']);
    expect(read).toHaveBeenCalledTimes(1);
  });

  it('gives withRereads the item a lost race met, so it reads only when none came back', async () => {
    const read = jest.fn(async () => 'read');
    const { result, seen } = await tries(read, (seen) =>
      seen.length === 1 ? new Met('met') : seen.length === 2 ? 'again' : 'done',
    );
    expect(result).toBe('done');
    expect(seen).toEqual(['given', 'met', 'read']);
    expect(read).toHaveBeenCalledTimes(1);
  });

  it('reads first when the caller read nothing', async () => {
    const read = jest.fn(async () => 7);
    expect(await withRereads(read, async (n) => n * 2, 'the item')).toBe(14);
    expect(read).toHaveBeenCalledTimes(1);
  });

  it('gives up loudly, never silently, when the item keeps changing', async () => {
    const write = jest.fn(async () => 'again' as const);
    await expect(withRereads(async () => 1, write, 'job sj_1')).rejects.toThrow(
      'job sj_1 kept changing under the writer',
    );
    expect(write).toHaveBeenCalledTimes(REREADS);
  });
});
