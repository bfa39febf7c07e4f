import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DAY_COUNTERS, DAY_HISTOGRAMS, type DayFigures, emptyDay } from '../domain/shipping.js';
import { scorecardDayKey } from '../dynamo/keys.js';
import { dynamo, type Item, TABLE } from '../dynamo/table.js';

/**
 * A supplier's per-day figures (CONTRACT.md §16.3): one small item per source store and day (in its
 * zone) of jobs due, each counter moved by ADD when the late sweep settles a job, in the same
 * transaction as the job's own settling write, so a job is counted once. A read queries the window's
 * days: O(days), whatever the number of jobs.
 */

/** The histograms' buckets are top-level counters (`t0`, `t1`, …, `s0`, …): ADD works on each alone. */
const histograms = (figures: DayFigures) =>
  Object.entries(DAY_HISTOGRAMS).flatMap(([name, prefix]) =>
    figures[name as keyof typeof DAY_HISTOGRAMS].map((n, i): [string, number] => [`${prefix}${i}`, n]),
  );

/** The transaction write that adds one job's figures to its day (creating the day's item if needed). */
export const dayAddition = (sourceStoreId: string, day: string, add: DayFigures) => {
  const names: Record<string, string> = {};
  const values: Record<string, number> = {};
  const parts: string[] = [];
  const counters: Array<[string, number]> = [
    ...DAY_COUNTERS.map((name): [string, number] => [name, add[name]]),
    ...histograms(add),
  ];
  for (const [name, n] of counters) {
    if (!n) continue;
    names[`#${name}`] = name;
    values[`:${name}`] = n;
    parts.push(`#${name} :${name}`);
  }
  return {
    Update: {
      TableName: TABLE(),
      Key: scorecardDayKey(sourceStoreId, day),
      UpdateExpression: `ADD ${parts.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
};

const dayFrom = (item: Item): DayFigures => {
  const day = emptyDay();
  for (const name of DAY_COUNTERS) day[name] = Number(item[name] ?? 0);
  for (const [name, prefix] of Object.entries(DAY_HISTOGRAMS)) {
    const histogram = name as keyof typeof DAY_HISTOGRAMS;
    day[histogram] = day[histogram].map((_, i) => Number(item[`${prefix}${i}`] ?? 0));
  }
  return day;
};

/** Writes a day's figures whole (a bench seeding history; the service only adds). */
export const dayItem = (sourceStoreId: string, day: string, figures: DayFigures): Item => ({
  ...scorecardDayKey(sourceStoreId, day),
  ...Object.fromEntries(DAY_COUNTERS.map((name) => [name, figures[name]])),
  ...Object.fromEntries(histograms(figures)),
});

/** The days `from`..`to` (both included) of a source store, and the read units they cost. */
export const readDays = async (sourceStoreId: string, from: string, to: string) => {
  const days: DayFigures[] = [];
  let readUnits = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await dynamo.send(
      new QueryCommand({
        TableName: TABLE(),
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':pk': scorecardDayKey(sourceStoreId, '').PK,
          ':from': scorecardDayKey(sourceStoreId, from).SK,
          ':to': scorecardDayKey(sourceStoreId, to).SK,
        },
        ExclusiveStartKey: start,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    days.push(...(out.Items ?? []).map(dayFrom));
    readUnits += out.ConsumedCapacity?.CapacityUnits ?? 0;
    start = out.LastEvaluatedKey;
  } while (start);
  return { days, readUnits };
};
