import { auditEntryFrom, auditEntryItem } from '../audit-log/record.js';
import { INDEX_KEYS, keys } from '../dynamo/keys.js';
import type { Item } from '../dynamo/table.js';
import { isPropagating } from '../fulfillments/record.js';
import { lookupEntry, OPEN_PK, propagationIndex } from '../sync-jobs/indexes.js';
import { type SyncJob, syncJobFrom, syncJobItem } from '../sync-jobs/record.js';

/**
 * The index attributes the current code gives an item in the state it is in, for the backfill of
 * an index added to a deployed table (docs/design.md, "Deploying the indexes"). Each comes from
 * the code that writes it (the item builders, `propagationIndex`, `lookupEntry`), never spelled
 * here, so a new index key is backfilled as soon as the writers set it.
 */

/** Every attribute that is an index key, and `openPK`, which a claim copies into one. */
export const INDEX_ATTRIBUTES: readonly string[] = [
  ...new Set([...Object.values(INDEX_KEYS).flatMap(({ pk, sk }) => [pk, sk]), OPEN_PK]),
];

/** The index attributes an item has. */
const indexPart = (item: Item) => {
  const part: Record<string, string> = {};
  for (const name of INDEX_ATTRIBUTES) {
    const value = item[name];
    if (typeof value === 'string') part[name] = value;
  }
  return part;
};

/**
 * A job's: those of a job created in its state (its lists; GSI3's open or failed set; its state's
 * lists), the propagating set while a fulfillment of a completed job is on its way, and the
 * lookup by source order of a completed job. The moves that led to the state give the same: a
 * move changes what `indexChanges` says between two states.
 */
export const jobIndexAttributes = (job: SyncJob): Record<string, string> => {
  const completed = job.status === 'completed';
  const propagating = completed && Object.values(job.fulfillments).some(isPropagating);
  return {
    ...indexPart(syncJobItem(job)),
    ...(propagating ? propagationIndex(job, true).set : {}),
    ...(completed && job.sourceOrderId !== null ? lookupEntry(job, job.sourceOrderId) : {}),
  };
};

export type BackfilledKind = 'sync_job' | 'audit_entry';

/** An item the backfill looks at: its kind, what it is now, and the index attributes it should have. */
export interface IndexedItem {
  kind: BackfilledKind;
  /** The job as read (for the write's condition); absent for an audit entry, which never changes. */
  job?: SyncJob;
  wanted: Record<string, string>;
}

const isKey = (item: Item, key: { PK: string; SK: string }) => item.PK === key.PK && item.SK === key.SK;

/**
 * What the backfill makes of an item: undefined for one that is neither a job nor an audit entry
 * (stores, keys, order parts… keep the keys they were written with). Throws, as the readers do,
 * for a job or an entry whose attributes cannot be read.
 */
export const indexedItem = (item: Item): IndexedItem | undefined => {
  if (typeof item.id !== 'string') return undefined;
  if (isKey(item, keys.syncJob(item.id))) {
    const job = syncJobFrom(item);
    return { kind: 'sync_job', job, wanted: jobIndexAttributes(job) };
  }
  if (isKey(item, keys.auditEntry(item.id)))
    return { kind: 'audit_entry', wanted: indexPart(auditEntryItem(auditEntryFrom(item))) };
  return undefined;
};

export interface IndexRepair {
  /** Attributes missing or with another value, to set. */
  set: Record<string, string>;
  /** Index attributes the item has but should not. */
  remove: string[];
}

/** What to write so `item` has exactly the `wanted` index attributes; undefined when it has them. */
export const indexRepair = (item: Item, wanted: Record<string, string>): IndexRepair | undefined => {
  const set: Record<string, string> = {};
  const remove: string[] = [];
  for (const name of INDEX_ATTRIBUTES) {
    if (wanted[name] !== undefined && item[name] !== wanted[name]) set[name] = wanted[name];
    if (wanted[name] === undefined && item[name] !== undefined) remove.push(name);
  }
  return Object.keys(set).length || remove.length ? { set, remove } : undefined;
};
