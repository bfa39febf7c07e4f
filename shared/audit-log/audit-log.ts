import { newId, now } from '../core/ids.js';
import type { Owner } from '../domain/owner.js';
import {
  type Actor,
  type AuditAction,
  type AuditEntry,
  type AuditedResource,
  type AuditFilters,
  auditEntryPut,
  findAuditEntryPage,
  saveAuditEntry,
} from '../entities/audit-entry.js';

export type { Actor, AuditFilters };

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

/** Writes an audit entry alone (not with the change it records): a repeat under the same id writes nothing. */
export const recordAuditEntry = async (input: Parameters<typeof auditPut>[0]) => {
  await saveAuditEntry(auditPut(input));
};

/** A page of the owner's audit log. Entries never change, so a cursor must be an entry of the filtered list. */
export const listAuditEntries = (
  owner: Owner,
  limit: number,
  startingAfter: string | undefined,
  filters: AuditFilters,
) => findAuditEntryPage(owner, limit, startingAfter, filters);
