/**
 * `npm run bench:scorecard`: a supplier's scorecard read (CONTRACT.md §16.3) for a supplier with 100
 * jobs and one with 100,000, their per-day items seeded directly (30 days of jobs due, as the late
 * sweep leaves them). Prints each read's median time and read units: a read is O(days), so both are
 * the same (after 10 untimed reads each: DynamoDB Local's JVM warms up). Exit code 1 when the units
 * differ or the figures do not add up to the jobs seeded.
 *
 *   npm run bench:scorecard [-- --runs 20]
 */
import { fixed, flags, median, positiveNumber, table, timedRuns, withBenchTable } from './common.js';
import { writeItems } from './seed.js';

const TABLE_NAME = 'bench-scorecard';
const DAYS = 30;
const args = flags({ runs: { type: 'string' } });
const runs = Math.round(positiveNumber('runs', args.runs, 20));

const dayOf = (n: number) => new Date(Date.UTC(2026, 9, 1) + n * 86_400_000).toISOString().slice(0, 10);

type Day = import('../shared/domain/shipping.js').DayFigures;

/** One job's share of a day: 90 % on time (hours 1..48), 7 % late, 3 % cancelled by the supplier. */
const countJob = (day: Day, j: number) => {
  day.due++;
  if (j % 100 >= 97) day.sourceCancelled++;
  else if (j % 100 >= 90) day.late++;
  else {
    day.onTime++;
    day.tracking[Math.min(j % 13, day.tracking.length - 1)]++;
  }
};

/** The days of `jobs` spread over `DAYS`, as the sweep would have left them. */
const seededDays = async (jobs: number) => {
  const { emptyDay } = await import('../shared/domain/shipping.js');
  return Array.from({ length: DAYS }, (_, d) => {
    const day = emptyDay();
    for (let j = d; j < jobs; j += DAYS) countJob(day, j);
    return day;
  });
};

const main = () =>
  withBenchTable(TABLE_NAME, async () => {
    const { dynamo } = await import('../shared/dynamo/table.js');
    const { dayItem, readDays } = await import('../shared/entities/scorecard-day.js');
    const { scorecardOf } = await import('../shared/domain/shipping.js');
    const rows: (string | number)[][] = [];
    const units: number[] = [];
    for (const jobs of [100, 100_000]) {
      const supplier = `sst_bench${jobs}`;
      const items = (await seededDays(jobs)).map((day, d) => dayItem(supplier, dayOf(d), day));
      await writeItems(dynamo, TABLE_NAME, items);
      // DynamoDB Local's JVM warms up on the first reads: those are not timed.
      for (let i = 0; i < 10; i++) await readDays(supplier, dayOf(0), dayOf(DAYS - 1));
      const { ms, answers } = await timedRuns(runs, async () => {
        const read = await readDays(supplier, dayOf(0), dayOf(DAYS - 1));
        scorecardOf(read.days);
        return read;
      });
      const read = answers.at(-1) ?? { days: [] as Day[], readUnits: 0 };
      const card = scorecardOf(read.days);
      if (card.jobsDue !== jobs) throw new Error(`${jobs} jobs seeded, ${card.jobsDue} read`);
      units.push(read.readUnits);
      rows.push([jobs, read.days.length, fixed(median(ms), 2), read.readUnits, card.onTimeRate ?? '-']);
    }
    console.log(table(['jobs', 'days read', 'median ms', 'read units', 'onTimeRate'], rows));
    if (new Set(units).size !== 1) {
      console.error(`read units differ: ${units.join(' vs ')}`);
      process.exitCode = 1;
    }
  });

await main();
