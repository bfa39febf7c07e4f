import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COST_MEASUREMENT, type CostMeasurement } from '../../bench/cost-measurement.js';
import { decryptsPerMonth, monthLines, monthlyReport, total } from '../../bench/monthly-model.js';
import { currentReadmeBlock, readmeBlock } from '../../bench/monthly-readme.js';
import { templateCounts } from '../../bench/template-counts.js';
import { buildApp, PROJECT_ROOT, removeOutput } from './synth.js';

/**
 * README.md's monthly figures are `bench:monthly`'s output (issue 44): recomputed here from the committed
 * measurement (bench/measured/cost.json, written by `bench:cost`) and the prod template, as `npm run
 * bench:monthly -- --write` writes them, and compared. After a new measurement or a template change that
 * moves the bill, run `npm run bench:monthly -- --from bench/measured/cost.json --write`.
 */
describe('the monthly bill in README.md', () => {
  const built = buildApp({ bundle: false, context: { stage: 'prod', alarmEmail: 'ops@example.com' } });
  afterAll(() => removeOutput(built.app));
  const measurement = JSON.parse(readFileSync(join(PROJECT_ROOT, COST_MEASUREMENT), 'utf8')) as CostMeasurement;
  const counts = templateCounts(built.app, built.config);

  it('is what bench:monthly computes from bench/measured/cost.json and the prod template', () => {
    const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
    expect(currentReadmeBlock(readme)).toBe(readmeBlock(measurement, counts).text);
  });

  it('counts the template: alarms and their metrics, one throttles alarm, no route metrics, SQS event sources', () => {
    expect(counts.alarms).toBeGreaterThan(20);
    expect(counts.alarmMetrics).toBeGreaterThanOrEqual(counts.alarms);
    expect(counts.routeMetrics).toBe(0);
    expect(counts.dashboardMetrics).toBeLessThanOrEqual(50);
    // Every queue consumer's event source, not the change stream's (Lambda reads a stream for free).
    expect(counts.sqsEventSources).toBe(Object.keys(counts.batching).length);
    expect(counts.systemLogs).toBe(false);
  });

  it('bills a month from what was measured: more orders cost more, month 13 more than month 1', () => {
    const at = (orders: number, month: number) =>
      total(monthLines(measurement, counts, { orders, month, stores: 1000 }));
    expect(at(1_000_000, 1)).toBeGreaterThan(at(10_000, 1));
    expect(at(1_000_000, 13)).toBeGreaterThan(at(1_000_000, 1));
    expect(at(0, 1)).toBeGreaterThan(0);
  });

  // Issue 44's targets. On the idle month ($7.87 at 8e577dc): an SQS event source costs about $0.26 (its 5
  // pollers' long polls), an alarm $0.10 a metric. A new queue fits when it shares an existing DLQ (whose
  // alarm already pages) and is drained without an event source of its own (a scheduled drain: ~$0.04),
  // or when a saving elsewhere pays for it.
  it("keeps issue 44's targets: 1M orders < $60 in month 1, < $70 in month 13, an idle small merchant < $8", () => {
    const report = monthlyReport(measurement, counts);
    const million = (month: number) =>
      report.scenarios.find((s) => s.ordersPerMonth === 1_000_000 && s.month === month)!.usd;
    expect(million(1)).toBeLessThan(60);
    expect(million(13)).toBeLessThan(70);
    expect(report.idle.find((i) => i.stores === 10)!.usd).toBeLessThan(8);
  });

  it('decrypts a store once per environment life when its uses are many, and only for the stores used', () => {
    const busy = decryptsPerMonth({ uses: 10_000_000, stores: 500, secrets: 2, environments: 1, lifeHours: 2 });
    expect(busy).toBeCloseTo(365 * 500 * 2, -2);
    const sparse = decryptsPerMonth({ uses: 365, stores: 500, secrets: 1, environments: 1, lifeHours: 2 });
    expect(sparse).toBeLessThan(365);
    expect(sparse).toBeGreaterThan(300);
  });
});
