/**
 * `npm run bench:monthly`: what a month costs on AWS, line by line, at 10k, 1M and 10M orders a month
 * (its first month and its thirteenth, when storage has grown), and with no orders at all (10 stores,
 * and 1,000 stores polled). Computed, never written down (bench/monthly-model.ts):
 *
 * - per order: a `bench:cost` run's measurement (bench/cost-measurement.ts): the one it starts, or the
 *   one `bench:cost` wrote to .local/bench/cost.json less than `--max-age` minutes ago (default 60), or
 *   `--from <file>` (`--from bench/measured/cost.json`: the one README.md's figures come from);
 * - per month: what the prod template holds, counted on its synthesized stacks (bench/template-counts.ts);
 * - prices: bench/prices.ts; assumptions: `ASSUMPTIONS` of bench/monthly-model.ts, printed with each line.
 *
 *   npm run bench:monthly [-- --json] [-- --from bench/measured/cost.json] [-- --write] [-- --quick]
 *
 * `--json` prints `{"scenarios": [{"ordersPerMonth", "month", "usd"}], "idle": {"stores", "usd"}, "idlePolled": …}`;
 * `--write` puts the summary in README.md's generated block and the measurement it used in
 * bench/measured/cost.json (test/cdk/monthly.test.ts recomputes the one from the other);
 * `--quick` passes to the `bench:cost` run it starts.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { loadConfig, stackName } from '../lib/config.js';
import { alarmLevers } from '../lib/constructs/alarms.js';
import { consumers } from '../lib/routes.js';
import { ResellerRoutingStack } from '../lib/stack.js';
import { PROJECT_ROOT } from './bundling.js';
import { fixed, flags, positiveNumber, table } from './common.js';
import { COST_MEASUREMENT, COST_MEASUREMENT_RUN, type CostMeasurement } from './cost-measurement.js';
import { ASSUMPTIONS, IDLE_STORES, monthLines, SCENARIO_MONTHS, SCENARIO_ORDERS, total } from './monthly-model.js';
import { readmeBlock, replaceReadmeBlock } from './monthly-readme.js';
import { PRICES } from './prices.js';
import { templateCounts } from './template-counts.js';

const args = flags({
  json: { type: 'boolean', default: false },
  write: { type: 'boolean', default: false },
  from: { type: 'string' },
  'max-age': { type: 'string' },
});
const maxAgeMinutes = positiveNumber('max-age', args['max-age'], 60);
const log = (text: string) => {
  if (!args.json) console.log(text);
};

/** The measurement: `--from`, or bench:cost's own file when fresh, or a bench:cost run started now. */
const measurement = (): { m: CostMeasurement; source: string } => {
  const file = args.from ?? join(PROJECT_ROOT, COST_MEASUREMENT_RUN);
  const age = (() => {
    try {
      return (Date.now() - statSync(file).mtimeMs) / 60_000;
    } catch {
      return Number.POSITIVE_INFINITY;
    }
  })();
  if (!args.from && age > maxAgeMinutes) {
    log(
      `no bench:cost measurement from the last ${maxAgeMinutes} minutes: ` +
        `running bench:cost${args.quick ? ' --quick' : ''}…`,
    );
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/cost.ts', ...(args.quick ? ['--quick'] : [])], {
      cwd: PROJECT_ROOT,
      stdio: args.json ? ['ignore', 'ignore', 'inherit'] : 'inherit',
    });
    if (run.status !== 0) throw new Error(`bench:cost failed (exit ${run.status})`);
  }
  return { m: JSON.parse(readFileSync(file, 'utf8')) as CostMeasurement, source: file };
};

/** The prod stack as `cdk synth -c stage=prod` makes it (functions not bundled: only the template counts). */
const prodCounts = (context: Record<string, unknown> = {}) => {
  const cdkContext = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context ?? {};
  const app = new App({
    outdir: join(PROJECT_ROOT, 'cdk.out', 'bench-monthly'),
    context: { ...cdkContext, stage: 'prod', alarmEmail: 'ops@example.com', 'aws:cdk:bundling-stacks': [], ...context },
  });
  const config = loadConfig(app);
  new ResellerRoutingStack(app, stackName(config), { config, projectRoot: PROJECT_ROOT });
  return { counts: templateCounts(app, config), config };
};

const { m, source } = measurement();
const { counts, config } = prodCounts();
const block = readmeBlock(m, counts);

if (args.json) {
  console.log(
    JSON.stringify({ scenarios: block.report.scenarios, idle: block.report.idle[0], idlePolled: block.report.idle[1] }),
  );
} else {
  log(
    `bench:monthly — ${stackName(config)}, ${PRICES.region}, prices of bench/prices.ts as of ${PRICES.asOf}, ` +
      `list prices without the free tier`,
  );
  log(
    `per order: ${source.replace(`${PROJECT_ROOT}/`, '')}, measured ${m.measuredAt} by \`${m.command}\` ` +
      `(${m.completed} of ${m.orders} orders completed, load average ${m.loadAverage})`,
  );
  log(`assumptions: ${JSON.stringify(ASSUMPTIONS)}\n`);
  const print = (title: string, lines: ReturnType<typeof monthLines>) => {
    log(`${title}: $${fixed(total(lines), 2)}`);
    log(
      table(
        ['service', 'item (its assumption)', 'a month', '$'],
        lines.map((l) => [l.service, l.item, fixed(l.quantity, l.quantity < 100 ? 3 : 0), fixed(l.usd, 2)]),
      ),
    );
    log('');
  };
  for (const orders of SCENARIO_ORDERS)
    for (const month of SCENARIO_MONTHS)
      print(
        `${orders.toLocaleString('en-US')} orders a month, month ${month}, ${ASSUMPTIONS.stores} stores`,
        monthLines(m, counts, { orders, month, stores: ASSUMPTIONS.stores }),
      );
  for (const stores of IDLE_STORES)
    print(`the idle month: no orders, ${stores} stores polled`, monthLines(m, counts, { orders: 0, month: 1, stores }));

  // What each lever of issue 44 saves at 1M orders, month 1: the same model with the lever undone.
  const at1M = (c = counts, options = {}) =>
    total(monthLines(m, c, { orders: 1_000_000, month: 1, stores: ASSUMPTIONS.stores }, options));
  const now = at1M();
  const perConsumer = consumers.length - 1;
  const levers: [string, number][] = [
    [
      `secrets kept ${ASSUMPTIONS.previousSecretTtlMinutes} minutes, not the environment's life`,
      at1M(counts, { secretTtlMinutes: ASSUMPTIONS.previousSecretTtlMinutes }),
    ],
    ['route metrics on the webhook routes (-c routeMetrics=true)', at1M(prodCounts({ routeMetrics: 'true' }).counts)],
    [
      `an errors and a throttles alarm per consumer (${consumers.length}), not one each for the account`,
      at1M({ ...counts, alarms: counts.alarms + 2 * perConsumer, alarmMetrics: counts.alarmMetrics + 2 * perConsumer }),
    ],
    ["Lambda's own START/END/REPORT lines (text format)", at1M({ ...counts, systemLogs: true })],
    [
      'the fulfillment queue batched 1 s, not 10 s',
      at1M({
        ...counts,
        batching: {
          ...counts.batching,
          FulfillmentWorker: { ...counts.batching.FulfillmentWorker, windowSeconds: 1 },
        },
      }),
    ],
    ['-c logLevel=INFO, not WARN (its happy-path lines)', at1M({ ...counts, logLevel: 'INFO' })],
  ];
  log(`What each lever saves at 1M orders, month 1 (now $${fixed(now, 2)}):`);
  log(
    table(
      ['undone', '$ a month then', 'saving'],
      levers.map(([what, usd]) => [what, fixed(usd, 2), fixed(usd - now, 2)]),
    ),
  );
  // The idle month's levers: what the template would hold with each undone, counted from the same rules.
  const idle = (c = counts) => total(monthLines(m, c, { orders: 0, month: 1, stores: IDLE_STORES[0] }));
  const idleNow = idle();
  const idleLevers: [string, number][] = [
    [
      "a key of its own for the alarm topic (not the secrets key's, held to the topic's context)",
      idle({ ...counts, kmsKeys: counts.kmsKeys + 1 }),
    ],
    ...alarmLevers(config).map(({ lever, alarms, metrics }): [string, number] => [
      lever,
      idle({ ...counts, alarms: counts.alarms + alarms, alarmMetrics: counts.alarmMetrics + metrics }),
    ]),
  ];
  log(`\nWhat each lever saves in the idle month, ${IDLE_STORES[0]} stores (now $${fixed(idleNow, 2)}):`);
  log(
    table(
      ['undone', '$ a month then', 'saving'],
      idleLevers.map(([what, usd]) => [what, fixed(usd, 2), fixed(usd - idleNow, 2)]),
    ),
  );
  // The consumers' batching windows and the functions' memory (`-c memorySize`, one for all), by the same model:
  // a window gathers rate × window records an invocation (one platform wait for the batch); memory buys CPU in
  // proportion (Lambda), so the measured CPU part scales by memorySize ÷ candidate and the platform's wait not.
  const windows = [0, 1, 5, 10, 20];
  log(`\nThe consumers' batching windows at 1M orders, month 1 (now $${fixed(now, 2)}; the rest as deployed):`);
  log(
    table(
      ['consumer', ...windows.map((w) => `${w} s`), 'deployed'],
      Object.keys(counts.batching)
        .filter((name) => m.functions[name])
        .map((name) => [
          name,
          ...windows.map((windowSeconds) =>
            fixed(
              at1M({
                ...counts,
                batching: { ...counts.batching, [name]: { ...counts.batching[name], windowSeconds } },
              }),
              2,
            ),
          ),
          `${counts.batching[name].windowSeconds} s`,
        ]),
    ),
  );
  const withMemory = (memoryMb: number) => {
    const scale = counts.memoryMb / memoryMb;
    const functions = Object.fromEntries(
      Object.entries(m.functions).map(([name, f]) => [name, { ...f, billedMsP10: f.billedMsP10 * scale }]),
    );
    const scaled = {
      ...m,
      functions,
      delivery: m.delivery && { ...m.delivery, workerBilledMsP10: (m.delivery.workerBilledMsP10 ?? 0) * scale },
    };
    return total(
      monthLines(scaled, { ...counts, memoryMb }, { orders: 1_000_000, month: 1, stores: ASSUMPTIONS.stores }),
    );
  };
  log(`\nMemory (every function, -c memorySize; deployed ${counts.memoryMb} MB) at 1M orders, month 1:`);
  log(
    table(
      ['MB', '$ a month'],
      [128, 256, 512, 1024].map((mb) => [String(mb), fixed(withMemory(mb), 2)]),
    ),
  );
  log(
    '\nLimits: durations are this machine’s (a loaded one is slower than Lambda); the update and fulfillment ' +
      'webhooks are modeled on the measured ones; the bench’s tags are refused (404), so their WARN lines are ' +
      'logged where a real tag logs none; data transfer out and the free tier are left out.',
  );
}

if (args.write) {
  const readme = join(PROJECT_ROOT, 'README.md');
  writeFileSync(readme, replaceReadmeBlock(readFileSync(readme, 'utf8'), block.text));
  writeFileSync(join(PROJECT_ROOT, COST_MEASUREMENT), `${JSON.stringify(m, null, 2)}\n`);
  log(`README.md: the bench:monthly block written, from ${COST_MEASUREMENT} (a copy of the measurement used).`);
}
