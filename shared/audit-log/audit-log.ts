import { isId, newId, now } from '../core/ids.js';
import { keys, lists } from '../dynamo/keys.js';
import { listPage } from '../dynamo/pagination.js';
import { getItem, TABLE } from '../dynamo/table.js';
import {
  auditEntryFrom,
  auditEntryItem,
  type Actor,
  type AuditAction,
  type AuditedResource,
  type AuditEntry,
} from './record.js';

export type { Actor };

export const SYSTEM: Actor = { type: 'system', id: 'system' };

/** An audit entry as a transaction's Put, so it is written together with the change it records. */
export const auditPut = (input: {
  action: AuditAction;
  job: { id: string; ownerId: string; resellerStoreId: string };
  actor: Actor;
  metadata: Record<string, unknown>;
}) => {
  const entry: AuditEntry = {
    id: newId('aud'),
    ownerId: input.job.ownerId,
    action: input.action,
    resellerStoreId: input.job.resellerStoreId,
    resourceType: 'sync_job',
    resourceId: input.job.id,
    actorId: input.actor.id,
    actor: input.actor,
    metadata: input.metadata,
    createdAt: now(),
  };
  return { Put: { TableName: TABLE(), ConditionExpression: 'attribute_not_exists(PK)', Item: auditEntryItem(entry) } };
};

export interface AuditFilters {
  action?: AuditAction;
  resourceType?: AuditedResource;
  resourceId?: string;
  resellerStoreId?: string;
}

export const listAuditEntries = (
  ownerId: string,
  limit: number,
  startingAfter: string | undefined,
  filters: AuditFilters,
) => {
  const active = (Object.keys(filters) as (keyof AuditFilters)[]).filter((field) => filters[field] !== undefined);
  return listPage({
    partition: lists.auditEntries(ownerId),
    from: auditEntryFrom,
    limit,
    startingAfter,
    cursorItem: async (id) => {
      const entry = isId('aud', id) ? await getItem(keys.auditEntry(id), auditEntryFrom) : undefined;
      return entry?.ownerId === ownerId ? entry : undefined;
    },
    filter: active.length ? (entry) => active.every((field) => entry[field] === filters[field]) : undefined,
  });
};
