import { auditEntryFrom, auditEntryIndexEntries, auditEntryKey } from '../entities/audit-entry.js';
import { isAtOrderRecordKey, orderItemFrom } from '../order-flow/order-items.js';
import type { ScannedItem } from '../order-flow/order-repair.js';
import {
  ENTITY_TAG,
  entityTagOf,
  JOB_INDEX_ATTRIBUTES,
  type SyncJob,
  syncJobIndexEntries,
} from '../order-flow/order-sync-job.js';

/**
 * The index attributes the current code gives an item in the state it is in, for the backfill of
 * an index added to a deployed table (docs/design.md, "Deploying the indexes"). Each comes from
 * the entity modules (shared/entities, shared/order-flow), which the writers use too, never spelled here,
 * so a new index key is backfilled as soon as the writers set it. An item of an order's partition
 * written before items carried their entity tag (shared/order-flow/order-sync-job.ts) gets it too.
 */

/** `order_item`: a record at an order's first job key that is not a job (an unrouted order, a cancellation kept). */
export type BackfilledKind = 'sync_job' | 'audit_entry' | 'order_item';

/** An item the backfill looks at: its kind, what it is now, and the index attributes it should have. */
export interface IndexedItem {
  kind: BackfilledKind;
  /** The job as read (for the write's condition); absent for an audit entry, which never changes. */
  job?: SyncJob;
  wanted: Record<string, string>;
}

const isKey = (item: ScannedItem, key: { PK: string; SK: string }) => item.PK === key.PK && item.SK === key.SK;

/**
 * What the backfill makes of an item: undefined for one that is neither a job nor an audit entry
 * (stores, keys, order parts… keep the keys they were written with). Throws, as the readers do,
 * for a job or an entry whose attributes cannot be read.
 */
export const indexedItem = (item: ScannedItem): IndexedItem | undefined => {
  // A job item's id is its key's (older ones repeat it as `id`); an order cancellation or an
  // unrouted order kept at a first job's key is not a job: only its entity tag is the backfill's. Body parts
  // and marks, never updated, are told apart by their sort key whether tagged or not: left as written.
  if (isAtOrderRecordKey(item)) {
    const parsed = orderItemFrom(item);
    if (parsed.kind !== 'job') return { kind: 'order_item', wanted: entityTagOf(parsed.kind) };
    return { kind: 'sync_job', job: parsed.job, wanted: { ...syncJobIndexEntries(parsed.job), ...entityTagOf('job') } };
  }
  if (typeof item.id !== 'string') return undefined;
  if (isKey(item, auditEntryKey(item.id)))
    return { kind: 'audit_entry', wanted: auditEntryIndexEntries(auditEntryFrom(item)) };
  return undefined;
};

export interface IndexRepair {
  /** Attributes missing or with another value, to set (index attributes, and an order item's tag). */
  set: Record<string, string>;
  /** Index attributes the item has but should not. */
  remove: string[];
}

/** What to write so `item` has exactly the `wanted` index attributes; undefined when it has them. */
export const indexRepair = (item: ScannedItem, wanted: Record<string, string>): IndexRepair | undefined => {
  const set: Record<string, string> = {};
  const remove: string[] = [];
  for (const name of [...JOB_INDEX_ATTRIBUTES, ENTITY_TAG]) {
    if (wanted[name] !== undefined && item[name] !== wanted[name]) set[name] = wanted[name];
    if (wanted[name] === undefined && item[name] !== undefined) remove.push(name);
  }
  return Object.keys(set).length || remove.length ? { set, remove } : undefined;
};
