import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * Issue 40, "follow-ups declared once": what follows a job's move (its kept fulfillments released, its
 * reseller order's tag requested) is declared beside the move (`after`, order-repository.ts) and run
 * from shared/order-flow/placing.ts alone; the moves that have follow-ups are written
 * through it. A call of either, or of those moves, anywhere else fails here.
 */
const HOME = 'shared/order-flow/placing.ts';
const CALLS: Record<string, string> = {
  releaseKeptFulfillments: 'shared/order-flow/propagating.ts',
  requestTag: 'shared/order-flow/tagging.ts',
  completeJob: 'shared/order-flow/order-job-moves.ts',
  foundJob: 'shared/order-flow/order-job-moves.ts',
};

const tracked = execFileSync('git', ['ls-files', '-z', '--', 'shared/*.ts', 'functions/*.ts', 'lib/*.ts'], {
  encoding: 'utf8',
})
  .split('\0')
  .filter(Boolean);

describe('follow-ups declared once (issue 40)', () => {
  it('reads the tree (a sanity check of the reader itself)', () => {
    expect(tracked).toContain(HOME);
    expect(readFileSync(HOME, 'utf8')).toMatch(/\breleaseKeptFulfillments\(/);
  });

  it.each(Object.entries(CALLS))('calls %s only from placing.ts (besides its own module)', (name, own) => {
    const callers = tracked.filter(
      (file) => file !== HOME && file !== own && new RegExp(`\\b${name}\\(`).test(readFileSync(file, 'utf8')),
    );
    expect(callers).toEqual([]);
  });
});
