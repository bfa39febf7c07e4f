import { attributes } from '../dynamo/attributes.js';
import { INDEX_KEYS, keys, listSortKey, lists } from '../dynamo/keys.js';
import type { Item } from '../dynamo/table.js';

/** An audit entry as a record, and its conversions to and from its item: the only place that knows its attributes. */

export const AUDIT_ACTIONS = [
  'sync_job.retried',
  'sync_job.dead',
  'reseller_store.credentials_rotated',
  'source_store.credentials_rotated',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDITED_RESOURCES = ['sync_job', 'reseller_store', 'source_store'] as const;
export type AuditedResource = (typeof AUDITED_RESOURCES)[number];

export type Actor = { type: 'api_key'; id: string } | { type: 'system'; id: 'system' };

export interface AuditEntry {
  id: string;
  ownerId: string;
  action: AuditAction;
  resellerStoreId: string;
  resourceType: AuditedResource;
  resourceId: string;
  /** The actor's id on its own, so a filter can compare one attribute. */
  actorId: string;
  actor: Actor;
  metadata: Record<string, unknown>;
  createdAt: string;
}

/**
 * An entry's item, in a list for each filter combination of `GET /v1/audit_log` but those with a
 * resource id, whose few entries its resource's list holds: its owner's (GSI1), its reseller
 * store's (GSI4), its action's (GSI5), its store's of that action (GSI6) and its resource's
 * (GSI7). Entries are only written on failure and retry paths, and never change.
 */
export const auditEntryItem = (entry: AuditEntry): Item => ({
  ...keys.auditEntry(entry.id),
  [INDEX_KEYS.lists.pk]: lists.auditEntries(entry.ownerId),
  [INDEX_KEYS.lists.sk]: listSortKey(entry.createdAt, entry.id),
  [INDEX_KEYS.storeLists.pk]: lists.storeAuditEntries(entry.resellerStoreId),
  [INDEX_KEYS.stateLists.pk]: lists.auditEntriesOf(entry.ownerId, entry.action),
  [INDEX_KEYS.storeStateLists.pk]: lists.storeAuditEntriesOf(entry.resellerStoreId, entry.action),
  [INDEX_KEYS.resourceLists.pk]: lists.resourceAuditEntries(entry.resourceId),
  id: entry.id,
  ownerId: entry.ownerId,
  action: entry.action,
  resellerStoreId: entry.resellerStoreId,
  resourceType: entry.resourceType,
  resourceId: entry.resourceId,
  actorId: entry.actorId,
  actor: entry.actor,
  metadata: entry.metadata,
  createdAt: entry.createdAt,
});

export const auditEntryFrom = (item: Item): AuditEntry => {
  const read = attributes(item, 'audit entry');
  return {
    id: read.string('id'),
    ownerId: read.string('ownerId'),
    action: read.oneOf('action', AUDIT_ACTIONS),
    resellerStoreId: read.string('resellerStoreId'),
    resourceType: read.oneOf('resourceType', AUDITED_RESOURCES),
    resourceId: read.string('resourceId'),
    actorId: read.string('actorId'),
    actor: read.object<Actor>('actor'),
    metadata: read.object<Record<string, unknown>>('metadata'),
    createdAt: read.string('createdAt'),
  };
};
