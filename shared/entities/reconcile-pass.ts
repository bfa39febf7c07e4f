import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { reconcilePassKey } from '../dynamo/keys.js';
import { attributes, dynamo, getItem, type Item, TABLE } from '../dynamo/table.js';

/**
 * The reconcile pass entity (shared/order-flow/README.md, "The reconciler"): one small item that says how far
 * the reconciler's pass over GSI3's partitions has come, so a run cut short by its time budget
 * leaves the next run the rest instead of the same head again. Per partition: `done` in this pass,
 * or the index key of the last entry it handled (a Query's LastEvaluatedKey, the next Query's start).
 * A partition it has no word of starts from the beginning. Written only by the reconciler, by a run
 * that leaves a pass unfinished or ends one that took several runs.
 */
export interface ReconcilePass {
  /** When the pass began (ISO): the start of its first run, once a run has left it unfinished. */
  startedAt: string;
  /** Runs that ended before the pass did. */
  runs: number;
  partitions: Record<string, PartitionMark>;
}

export type PartitionMark = 'done' | { after: Item };

const isMark = (value: unknown): value is PartitionMark =>
  value === 'done' ||
  (typeof value === 'object' && value !== null && typeof (value as { after?: unknown }).after === 'object');

export const newReconcilePass = (startedAt: string): ReconcilePass => ({ startedAt, runs: 0, partitions: {} });

export const reconcilePassFrom = (item: Item): ReconcilePass => {
  const read = attributes(item, 'reconcile pass');
  const marks = read.object<Record<string, unknown>>('partitions');
  // A mark it cannot read is dropped: its partition is read again from the start, which is safe.
  const partitions: Record<string, PartitionMark> = {};
  for (const [name, mark] of Object.entries(marks)) if (isMark(mark)) partitions[name] = mark;
  return { startedAt: read.string('startedAt'), runs: read.number('runs'), partitions };
};

export const reconcilePassItem = (pass: ReconcilePass): Item => ({
  ...reconcilePassKey(),
  startedAt: pass.startedAt,
  runs: pass.runs,
  partitions: pass.partitions,
});

/** The pass under way; consistent, since the run before may have ended a moment ago. */
export const readReconcilePass = () => getItem(reconcilePassKey(), reconcilePassFrom, true);

/**
 * Keeps the pass. Unconditional: two runs at once (an invocation by hand beside the schedule) each
 * read from the same marks, so whichever write lands last leaves nothing unread before its marks.
 */
export const keepReconcilePass = async (pass: ReconcilePass) => {
  await dynamo.send(new PutCommand({ TableName: TABLE(), Item: reconcilePassItem(pass) }));
};
