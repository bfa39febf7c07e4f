import { REREADS, withRereads } from '../../shared/core/concurrency.js';

describe('withRereads: a read-then-conditional-write, read again after each lost race', () => {
  it('takes the caller’s read for the first try, and reads again only after a lost race', async () => {
    const read = jest.fn(async () => 'fresh');
    const seen: string[] = [];
    const result = await withRereads(
      read,
      async (current) => {
        seen.push(current);
        return seen.length < 2 ? 'again' : `wrote over ${current}`;
      },
      'the item',
      'given',
    );
    expect(result).toBe('wrote over fresh');
    expect(seen).toEqual(['given', 'fresh']);
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
