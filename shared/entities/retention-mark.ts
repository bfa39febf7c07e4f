import { keys } from '../dynamo/keys.js';
import { attributes, batchGet, putIf } from '../dynamo/table.js';

/**
 * The retention mark entity (docs/design.md, "Customer data"): how far the retention sweep has
 * erased an owner's orders, as the list sort key (`<createdAt>#<id>`) in one shard of the owner's jobs (GSI1)
 * before which every job's personal data is erased. One small item per shard of an owner's list; the next sweep reads
 * on from it, so a day's run reads what became due since, never the owner's whole history.
 */
export interface RetentionMark {
  /** The list (a shard of an owner's jobs, GSI1) the mark is in. */
  list: string;
  /** The list sort key of the last job whose order is erased, with every job before it. */
  after: string;
  updatedAt: string;
}

export const retentionMarkKey = (list: string) => keys.retentionMark(list);

const retentionMarkFrom = (item: Record<string, unknown>): RetentionMark => {
  const read = attributes(item, 'retention mark');
  return { list: read.string('list'), after: read.string('after'), updatedAt: read.string('updatedAt') };
};

/** The marks of many lists (BatchGetItem, 100 a call), by list; a list with none is not in the map. */
export const loadRetentionMarks = async (lists: string[]) =>
  new Map((await batchGet(lists.map(retentionMarkKey), retentionMarkFrom)).map((mark) => [mark.list, mark]));

/** Keeps the mark; a sweep is the only writer (the schedule runs one at a time), so it is a plain put. */
export const keepRetentionMark = async (mark: RetentionMark) => {
  await putIf({ ...retentionMarkKey(mark.list), ...mark }, null);
};
