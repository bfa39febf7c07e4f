import { attributes } from '../dynamo/attributes.js';
import { keys, listSortKey, lists } from '../dynamo/keys.js';
import type { Item } from '../dynamo/table.js';

/** An audit entry as a record, and its conversions to and from its item: the only place that knows its attributes. */

export const AUDIT_ACTIONS = ['sync_job.retried', 'sync_job.dead'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDITED_RESOURCES = ['sync_job'] as const;
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

/** An entry's item: in its owner's list (GSI1). */
export const auditEntryItem = (entry: AuditEntry): Item => ({
  ...keys.auditEntry(entry.id),
  GSI1PK: lists.auditEntries(entry.ownerId),
  GSI1SK: listSortKey(entry.createdAt, entry.id),
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
