import { isId, newId, now } from '../core/ids.js';
import type { Owner } from '../domain/owner.js';
import { lists } from '../dynamo/keys.js';
import { type ListSource, listPage } from '../dynamo/pagination.js';
import { getItem } from '../dynamo/table.js';
import {
  type Actor,
  type AuditAction,
  type AuditEntry,
  type AuditedResource,
  auditEntryFrom,
  auditEntryKey,
  auditEntryPartitions,
  auditEntryPut,
} from '../entities/audit-entry.js';

export type { Actor };

export const SYSTEM: Actor = { type: 'system', id: 'system' };

/**
 * An audit entry as a Put, conditional on its id being new: in a transaction, it is written together
 * with the change it records; alone, under an id derived from that change, a repeat writes nothing.
 */
export const auditPut = (input: {
  action: AuditAction;
  /** The resource the entry is about: a sync job unless `resourceType` says otherwise. */
  job: { id: string; ownerId: string; resellerStoreId: string | null };
  resourceType?: AuditedResource;
  actor: Actor;
  metadata: Record<string, unknown>;
  /** The entry's id when it follows from what it records (written at most once); a new one otherwise. */
  id?: string;
}) => {
  const entry: AuditEntry = {
    id: input.id ?? newId('aud'),
    ownerId: input.job.ownerId,
    action: input.action,
    resellerStoreId: input.job.resellerStoreId,
    resourceType: input.resourceType ?? 'sync_job',
    resourceId: input.job.id,
    actorId: input.actor.id,
    actor: input.actor,
    metadata: input.metadata,
    createdAt: now(),
  };
  return auditEntryPut(entry);
};

export interface AuditFilters {
  action?: AuditAction;
  resourceType?: AuditedResource;
  resourceId?: string;
  resellerStoreId?: string;
}

/**
 * Where a filtered audit log is read (docs/design.md, "Lists"): a list per combination of action
 * and reseller store (two actions' merged in: `auditEntryPartitions`), so those read only matches;
 * with a resource id, its resource's list (a
 * job's few entries), keeping those of the action and store asked for. `resource_type` has one
 * value, which every entry has.
 */
export const auditListSource = ({ ownerId }: Owner, filters: AuditFilters): ListSource => {
  const { action, resellerStoreId: store, resourceId } = filters;
  if (resourceId !== undefined) {
    const exact = action === undefined && store === undefined;
    return { index: 'resourceLists', partitions: [lists.resourceAuditEntries(resourceId)], exact };
  }
  return { ...auditEntryPartitions(ownerId, store, action), exact: true };
};

/** A page of the owner's audit log. Entries never change, so a cursor must be an entry of the filtered list. */
export const listAuditEntries = (
  owner: Owner,
  limit: number,
  startingAfter: string | undefined,
  filters: AuditFilters,
) => {
  const active = (Object.keys(filters) as (keyof AuditFilters)[]).filter((field) => filters[field] !== undefined);
  const matches = (entry: AuditEntry) => active.every((field) => entry[field] === filters[field]);
  return listPage({
    source: auditListSource(owner, filters),
    ownerId: owner.ownerId,
    from: auditEntryFrom,
    limit,
    startingAfter,
    cursorItem: async (id) => {
      const entry = isId('aud', id) ? await getItem(auditEntryKey(id), auditEntryFrom) : undefined;
      return entry?.ownerId === owner.ownerId && matches(entry) ? entry : undefined;
    },
    matches,
  });
};
