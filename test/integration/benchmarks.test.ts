import { runBench } from './bench-runner.js';

/**
 * The benchmarks in their quick mode: each runs as `npm run bench:*` would (a child Node with tsx,
 * its own local runtime) and must finish cleanly and print its report. Timings are not asserted:
 * they depend on the machine; what is checked is that the benchmarks work.
 */

jest.setTimeout(120_000);

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
    // Each order waits for its reseller order's tag too (CONTRACT.md §12.5).
  }, 180_000);

  it('bench:cancel cancels every placed order and prints what a cancellation costs', async () => {
    const { code, output } = await runBench('bench/cancel-cost.ts', ['--orders', '5']);

    expect(output).toContain('bench:cancel — 5 completed single-supplier orders cancelled by the reseller');
    expect(output).toMatch(/DynamoDB write units\s+\d+\.\d{3}/);
    // One platform call per cancellation: the supplier is asked once, never twice.
    expect(output).toMatch(/platform calls to the supplier\s+1\.000/);
    expect(code).toBe(0);
  });

  it('bench:e2e loses and duplicates no order and prints the latency table', async () => {
    const { code, output } = await runBench('bench/e2e.ts', ['--quick', '--sdk-calls']);

    expect(output).toMatch(/measure \(ms\)\s+count\s+p50\s+p95\s+p99/);
    expect(output).toContain('webhook → completed');
    expect(output).toContain('lost 0');
    expect(output).toContain('duplicated 0');
    expect(output).toContain('refused 0');
    expect(output).toMatch(/^sending orders at 10\/s… 30\/30, \d+ completed$/m);
    expect(output).toMatch(/^local runtime: ready in [\d.]+ s .*; peak memory \d+ MB \(this process/m);
    expect(output).toMatch(/^environments at their peak: \d+ \(.*OrdersWebhook \d/m);
    // The webhook's round trips, counted: lookup (shared by an environment's webhooks of 200 ms, so at most one
    // an order), routing (one an order), the job's put, its message (and a Decrypt per environment).
    expect(output).toMatch(/^OrdersWebhook\s+[34]\.\d\d\s+Query (1\.\d\d|2\.00), PutItem 1\.00, SendMessage 1\.00/m);
    expect(code).toBe(0);
  });
});
