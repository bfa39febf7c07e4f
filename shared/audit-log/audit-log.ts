import { newId, now } from '../core/ids.js';
import { listPage } from '../dynamo/pagination.js';
import type { AuditAction } from '../http/schemas.js';
import { keys, listSortKey, lists } from '../dynamo/keys.js';
import { getItem, TABLE, type Item } from '../dynamo/table.js';

export type Actor = { type: 'api_key'; id: string } | { type: 'system'; id: 'system' };

export const SYSTEM: Actor = { type: 'system', id: 'system' };

/** An audit entry as a transaction's Put, so it is written together with the change it records. */
export const auditPut = (input: {
  action: AuditAction;
  job: { id: string; ownerId: string; resellerStoreId: string };
  actor: Actor;
  metadata: Record<string, unknown>;
}) => {
  const id = newId('aud');
  const createdAt = now();
  return {
    Put: {
      TableName: TABLE(),
      ConditionExpression: 'attribute_not_exists(PK)',
      Item: {
        ...keys.auditEntry(id),
        GSI1PK: lists.auditEntries(input.job.ownerId),
        GSI1SK: listSortKey(createdAt, id),
        id,
        ownerId: input.job.ownerId,
        action: input.action,
        resellerStoreId: input.job.resellerStoreId,
        resourceType: 'sync_job',
        resourceId: input.job.id,
        actorId: input.actor.id,
        actor: input.actor,
        metadata: input.metadata,
        createdAt,
      },
    },
  };
};

export interface AuditFilters {
  action?: string;
  resource_type?: string;
  resource_id?: string;
  reseller_store_id?: string;
}

export const listAuditEntries = (
  ownerId: string,
  limit: number,
  startingAfter: string | undefined,
  filters: AuditFilters,
) => {
  const active = Object.entries({
    action: filters.action,
    resourceType: filters.resource_type,
    resourceId: filters.resource_id,
    resellerStoreId: filters.reseller_store_id,
  }).filter(([, value]) => value !== undefined);
  return listPage({
    partition: lists.auditEntries(ownerId),
    limit,
    startingAfter,
    cursorItem: async (id) => {
      const item = id.startsWith('aud_') ? await getItem(keys.auditEntry(id)) : undefined;
      return item?.ownerId === ownerId ? item : undefined;
    },
    filter: active.length ? (item: Item) => active.every(([field, value]) => item[field] === value) : undefined,
  });
};
