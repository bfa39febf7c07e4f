import middy from '@middy/core';
import * as v from 'valibot';

describe('toolchain', () => {
  it('runs on Node 24 with middy and valibot', async () => {
    expect(process.versions.node.split('.')[0]).toBe('24');
    const h = middy(async (e: { n: number }) => v.parse(v.number(), e.n) + 1);
    await expect(h({ n: 1 }, {} as never)).resolves.toBe(2);
  });
});
