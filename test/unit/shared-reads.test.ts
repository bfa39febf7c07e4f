import { sharedReads } from '../../shared/core/concurrency.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('sharedReads: one read for the records of a batch', () => {
  it('joins a read in flight and shares a kept answer for its time, then reads again', async () => {
    const reads: string[] = [];
    const shared = sharedReads(
      async (key) => {
        const n = reads.push(key);
        await sleep(5);
        return `${key}@${n}`;
      },
      50,
      () => true,
    );
    expect(await Promise.all([shared.get('a'), shared.get('a'), shared.get('b')])).toEqual(['a@1', 'a@1', 'b@2']);
    expect(await shared.get('a')).toBe('a@1');
    await sleep(70);
    expect(await shared.get('a')).toBe('a@3');
    expect(reads).toEqual(['a', 'b', 'a']);
  });

  it('keeps no answer its predicate refuses, no failure, nothing dropped', async () => {
    let n = 0;
    const shared = sharedReads(
      async (key) => {
        n += 1;
        if (key === 'failing') throw new Error('read failed');
        return key === 'hot' ? 'hot' : undefined;
      },
      10_000,
      (value) => value === undefined,
    );
    await shared.get('hot');
    await shared.get('hot');
    expect(n).toBe(2);
    await expect(shared.get('failing')).rejects.toThrow('read failed');
    await expect(shared.get('failing')).rejects.toThrow('read failed');
    expect(n).toBe(4);
    await shared.get('cool');
    await shared.get('cool');
    expect(n).toBe(5);
    shared.drop('cool');
    await shared.get('cool');
    expect(n).toBe(6);
  });
});
