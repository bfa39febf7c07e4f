import { runBench } from './bench-runner.js';

/**
 * The benchmarks that seed thousands of items (bench:lists, bench:reconcile), in their quick mode, as
 * benchmarks.test.ts runs the others: in a file of their own, so that a run's two workers share them.
 */

jest.setTimeout(120_000);

describe('benchmarks over seeded tables (quick mode)', () => {
  it('bench:lists reads every list and filter at two sizes and prints round trips and read units', async () => {
    const { code, output } = await runBench('bench/lists.ts');

    expect(output).toMatch(/seeded 1,000 jobs in [\d.]+ s: 1 dead, 10 failed/);
    expect(output).toMatch(/list\s+filter\s+limit\s+page\s+trips 1k\s+RRU 1k\s+ms 1k\s+trips 2k/);
    // Every list reads its 16 shards side by side (shared/dynamo/README.md, "Hot keys"): 16 Queries and a BatchGet.
    expect(output).toMatch(/sync_jobs\s+status=dead store=big\s+1\s+first\s+17\s/);
    expect(output).toMatch(/audit_log\s+action=sync_job.retried store=small resource_id/);
    expect(output).toMatch(/1,001 orders, 10 with unrouted items, 1 unrouted/);
    expect(output).toMatch(/orders\s+store=big\s+20\s+middle\s+18\s/);
    expect(output).toMatch(/orders\s+unrouted=true store=big\s+10\s+first\s+18\s/);
    expect(output).toMatch(/\d+ pages; largest read-unit ratio [\d.]+ \(target ≤ 1.2\)/);
    expect(output).not.toContain('wrong pages');
    expect(code).toBe(0);
    // Seeding 3,000 jobs into DynamoDB Local is most of it.
  }, 300_000);

  it('bench:reconcile reaches every job of its pass once, run after run under a budget', async () => {
    const { code, output } = await runBench('bench/reconcile.ts');

    expect(output).toMatch(/seeded 2,000 jobs in [\d.]+ s \(\d+ puts\/s\): 20 stalled/);
    expect(output).toMatch(/timeout s\s+reading s\/run\s+runs\s+jobs\/run \(max\)/);
    expect(output).toMatch(/jobs read 2,000 of 2,000, stalled re-sent 20 of 20 \(20 messages\): ALL REACHED ONCE/);
    expect(code).toBe(0);
  }, 120_000);
});
