import { PERSONAL_ORDER_FIELDS, scrubText } from '../domain/personal-data.js';
import { bodyPartNumberOf, isUnroutedOrderMarkKey, keys } from '../dynamo/keys.js';
import { ConditionFailed, deleteItem, putIf, queryPartition, UpdateBuilder, updateIf } from '../dynamo/table.js';
import { bodyStorage, compressBody, JobUpdate, type Lost, lostRace, orderBodyPartItem } from './order-repository.js';
import {
  EXPIRES_AT,
  type OrderEdits,
  type StoredOrder,
  type SyncJob,
  storedAttempts,
  UNROUTED_ORDER_EXISTS,
} from './order-sync-job.js';

/**
 * The order aggregate's erasure of a shopper's personal data (CONTRACT.md §13; docs/design.md,
 * "Customer data"): the writes that put an order's redacted body where its unredacted one was, on
 * each of its jobs and on its unrouted-order record, and mark them `redactedAt`. What the redacted
 * body is (which members are personal) is the domain's (shared/domain/personal-data.ts); which
 * orders are erased and when is the feature's (shared/privacy).
 */

/** The members of a job's `orderEdits` that hold what the reseller changed of the shopper's data. */
export const PERSONAL_EDIT_FIELDS = ['email', 'shippingAddress', 'note', 'noteAttributes'] as const;

/** The JSON texts an order's edits hold of personal data (to scrub messages that quoted them). */
export const personalEditTexts = (edits: OrderEdits | null): string[] =>
  PERSONAL_EDIT_FIELDS.flatMap((field) => {
    const text = edits?.[field];
    return text === undefined ? [] : [text];
  });

/**
 * Where the redacted body goes (`bodyStorage`, the one rule). Inline (`{ body }`) whenever its
 * compressed bytes fit one part: then every job of the order and its record carry the same bytes,
 * the parts are deleted, and a reading cached under the old parts (order-repository.ts
 * `storedOrderReading` keys an inline body by its bytes) can never be served for it. A body larger
 * than that even redacted is written over its parts.
 */
export const redactedStorage = (redactedText: string): { order: StoredOrder; parts: Buffer[] } => {
  return bodyStorage(compressBody(Buffer.from(redactedText, 'utf8')));
};

/**
 * Writes the redacted body's parts (when it has any) over the first ones, then deletes those from
 * `keep` (default: the parts written) up to `had`: parts nothing names any more.
 */
export const writeRedactedParts = async (
  firstJobId: string,
  parts: Buffer[],
  had: number,
  keep = parts.length,
  expiresAt?: number,
) => {
  for (const [n, bytes] of parts.entries()) await putIf(orderBodyPartItem(firstJobId, n, bytes, expiresAt), null);
  for (let n = Math.max(keep, parts.length); n < had; n++) await deleteItem(keys.orderBodyPart(firstJobId, n));
};

const storedOrderSet = (update: UpdateBuilder, order: StoredOrder | null) => {
  if (!order) return;
  if ('body' in order) {
    update.setAttributes({ orderBody: order.body });
    update.remove(update.name('orderBodyParts'), update.name('order'));
  } else if ('parts' in order) {
    update.setAttributes({ orderBodyParts: order.parts });
    update.remove(update.name('orderBody'));
  } else {
    // A map written by older code: its personal members set to null, as the body's are.
    const legacy = { ...order.legacy };
    for (const field of PERSONAL_ORDER_FIELDS) if (field in legacy) legacy[field] = null;
    update.setAttributes({ order: legacy });
  }
};

/** Which message-like fields of a job quote the order's personal strings, with what they become. */
const scrubbedMessages = (job: SyncJob, strings: readonly string[]) => {
  const errorMessage = job.errorMessage === null ? null : scrubText(job.errorMessage, strings);
  const attemptLog = job.attemptLog.map((attempt) =>
    attempt.errorMessage === null ? attempt : { ...attempt, errorMessage: scrubText(attempt.errorMessage, strings) },
  );
  const attention = job.attention && { ...job.attention, reason: scrubText(job.attention.reason, strings) };
  return {
    ...(errorMessage !== job.errorMessage ? { errorMessage } : {}),
    ...(attemptLog.some((attempt, i) => attempt.errorMessage !== job.attemptLog[i].errorMessage)
      ? { attemptLog: storedAttempts(attemptLog) }
      : {}),
    ...(attention && attention.reason !== job.attention?.reason ? { attention } : {}),
  };
};

/**
 * The job's copy of the order erased: its stored order replaced by `order` (the redacted body, or
 * nothing to replace when the job kept none), the personal members of its edits removed, the
 * platform's reasons it keeps scrubbed of `strings`, and `redactedAt`. Ids, lines, prices, statuses,
 * tracking and its history stay. Conditional on the job as read (its generation and `updatedAt`), so a
 * move made meanwhile is never overwritten: the caller takes the job the write met and tries again.
 * True, or the race lost.
 */
export const redactJob = async (
  job: SyncJob,
  order: StoredOrder | null,
  strings: readonly string[],
  at: string,
): Promise<true | Lost> => {
  const update = new JobUpdate().setAttributes({ redactedAt: at, ...scrubbedMessages(job, strings) });
  storedOrderSet(update, job.order && order);
  const edits = PERSONAL_EDIT_FIELDS.filter((field) => job.orderEdits?.[field] !== undefined);
  if (edits.length) update.remove(...edits.map((field) => `${update.name('orderEdits')}.${update.name(field)}`));
  update.when(`${update.name('generation')} = ${update.value('readGeneration', job.generation)}`);
  update.when(`${update.name('updatedAt')} = ${update.value('readUpdatedAt', job.updatedAt)}`);
  const out = await updateIf(update.of(job.id));
  return out instanceof ConditionFailed ? lostRace(out) : true;
};

/**
 * The unrouted-order record's copy erased (its stored order replaced, `redactedAt`); false when no
 * unrouted-order record is at that key.
 */
export const redactUnroutedOrder = async (firstJobId: string, order: StoredOrder, at: string) => {
  const update = new UpdateBuilder().setAttributes({ redactedAt: at });
  storedOrderSet(update, order);
  update.when(UNROUTED_ORDER_EXISTS);
  const out = await updateIf(update.build(keys.syncJob(firstJobId)));
  return !(out instanceof ConditionFailed);
};

/**
 * The end of what a routed order keeps beside its first job (issue 44): its mark (an order with unrouted
 * items) and its body parts (a large body the redaction did not put inline) get `expiresAt`, the table's
 * TTL, when they have none: `expiresAt` is the order's jobs' (JOB_RETENTION_DAYS after the last ended),
 * given by the retention sweep once it has erased the order. The number of items given one.
 */
export const expireOrderItems = async (firstJobId: string, expiresAt: number): Promise<number> => {
  let written = 0;
  for (const item of await queryPartition(keys.syncJob(firstJobId).PK)) {
    const key = { PK: String(item.PK), SK: String(item.SK) };
    const besideRecord = isUnroutedOrderMarkKey(key) || bodyPartNumberOf(key) !== undefined;
    if (!besideRecord || item[EXPIRES_AT] !== undefined) continue;
    const update = new UpdateBuilder().setAttributes({ [EXPIRES_AT]: expiresAt });
    // Deleted meanwhile (parts no job names any more): nothing to end.
    update.when('attribute_exists(PK)');
    if (!((await updateIf(update.build(key))) instanceof ConditionFailed)) written++;
  }
  return written;
};
