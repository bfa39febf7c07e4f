import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * The benchmarks in their quick mode: each runs as `npm run bench:*` would (a child Node with tsx,
 * its own local runtime) and must finish cleanly and print its report. Timings are not asserted:
 * they depend on the machine; what is checked is that the benchmarks work.
 */

jest.setTimeout(120_000);

const ROOT = resolve(__dirname, '../..');

const runBench = (script: string, args: string[] = ['--quick']) =>
  new Promise<{ code: number | null; output: string }>((done, fail) => {
    const chunks: string[] = [];
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: ROOT,
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (c) => chunks.push(String(c)));
    child.stderr.on('data', (c) => chunks.push(String(c)));
    child.on('error', fail);
    child.on('exit', (code) => done({ code, output: chunks.join('') }));
  });

describe('benchmarks (quick mode)', () => {
  it('bench:cold bundles functions and baselines and prints the table', async () => {
    const { code, output } = await runBench('bench/cold-start.ts');

    expect(output).toMatch(/function\s+kind\s+answer\s+bundle KB\s+baseline KB\s+size ×\s+load ms/);
    expect(output).toContain('init ×');
    expect(output).toMatch(/Summary: \d+ of \d+ measured function\(s\) within both targets/);
    // Progress of the long phases, on stderr.
    expect(output).toMatch(/^building 8 bundles \(function and baseline\)… 8\/8$/m);
    expect(output).toMatch(/^cold starts \(function and baseline, alternating\)… 8\/8, \w+$/m);
    expect(output).not.toContain('ERROR');
    expect(code).toBe(0);
  });

  it('bench:cost completes every order and prints the cost per million orders', async () => {
    const { code, output } = await runBench('bench/cost.ts');

    expect(output).toMatch(/20 of 20 jobs completed/);
    expect(output).toContain('refused 0');
    expect(output).toMatch(/DynamoDB write request units\s+\d/);
    expect(output).toMatch(/Cost per million single-supplier orders: \$\d+\.\d\d/);
    // The reseller order's tag (CONTRACT.md §12.5): one platform call per job, its write units stated.
    expect(output).toMatch(/Tags \(CONTRACT\.md §12\.5\): 1\.000 platform call\(s\) per job /);
    expect(output).toMatch(/\d\.\d{3} write units per order in \d\.\d{3} write\(s\) \(`tagged` on the job/);
    expect(output).toMatch(/^sending orders… 20\/20$/m);
    expect(code).toBe(0);
  });

  it('bench:cancel cancels every placed order and prints what a cancellation costs', async () => {
    const { code, output } = await runBench('bench/cancel-cost.ts', ['--orders', '5']);

    expect(output).toContain('bench:cancel — 5 completed single-supplier orders cancelled by the reseller');
    expect(output).toMatch(/DynamoDB write units\s+\d+\.\d{3}/);
    // One platform call per cancellation: the supplier is asked once, never twice.
    expect(output).toMatch(/platform calls to the supplier\s+1\.000/);
    expect(code).toBe(0);
  });

  it('bench:e2e loses and duplicates no order and prints the latency table', async () => {
    const { code, output } = await runBench('bench/e2e.ts');

    expect(output).toMatch(/measure \(ms\)\s+count\s+p50\s+p95\s+p99/);
    expect(output).toContain('webhook → completed');
    expect(output).toContain('lost 0');
    expect(output).toContain('duplicated 0');
    expect(output).toContain('refused 0');
    expect(output).toMatch(/^sending orders at 10\/s… 30\/30, \d+ completed$/m);
    expect(output).toMatch(/^local runtime: ready in [\d.]+ s .*; peak memory \d+ MB \(this process/m);
    expect(code).toBe(0);
  });

  it('bench:lists reads every list and filter at two sizes and prints round trips and read units', async () => {
    const { code, output } = await runBench('bench/lists.ts');

    expect(output).toMatch(/seeded 1,000 jobs in [\d.]+ s: 1 dead, 10 failed/);
    expect(output).toMatch(/list\s+filter\s+limit\s+page\s+trips 1k\s+RRU 1k\s+ms 1k\s+trips 2k/);
    // Every list reads its 16 shards side by side (docs/design.md, "Hot keys"): 16 Queries and a BatchGet.
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
