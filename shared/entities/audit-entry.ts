import { config } from '../core/config.js';
import { isId, newId, now } from '../core/ids.js';
import type { Owner } from '../domain/owner.js';
import { indexEntry, keys, listSortKey, lists } from '../dynamo/keys.js';
import { getItem, type Item, type ListSource, listPage, putAlone, recordShape, TABLE } from '../dynamo/table.js';

/**
 * The audit entry entity: the record, its item's key and index entries, and its conversions to and
 * from the item. The only place that knows an audit entry's attributes.
 */

export const AUDIT_ACTIONS = [
  'sync_job.retried',
  'sync_job.dead',
  'sync_job.cancelled',
  'sync_job.cancellation_declined',
  'sync_job.attention_required',
  'sync_job.held',
  'sync_job.released',
  'sync_job.units_removed',
  'sync_job.return_opened',
  'reseller_store.credentials_rotated',
  'source_store.credentials_rotated',
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.deleted',
  'webhook_endpoint.secret_rotated',
  'webhook_endpoint.recovered',
  'customer.redacted',
  'shop.redacted',
  'customer.data_requested',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDITED_RESOURCES = ['sync_job', 'reseller_store', 'source_store', 'webhook_endpoint'] as const;
export type AuditedResource = (typeof AUDITED_RESOURCES)[number];

export type Actor = { type: 'api_key'; id: string } | { type: 'system'; id: 'system' };

export const SYSTEM: Actor = { type: 'system', id: 'system' };

export interface AuditEntry {
  id: string;
  ownerId: string;
  action: AuditAction;
  /** Null for a resource of no store (a webhook endpoint): the entry is in no store's list. */
  resellerStoreId: string | null;
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
export const auditEntryKey = (id: string) => keys.auditEntry(id);

const storeEntries = (resellerStoreId: string, action: AuditAction) => ({
  ...indexEntry('storeLists', lists.storeAuditEntries(resellerStoreId)),
  ...indexEntry('storeStateLists', lists.storeAuditEntriesOf(resellerStoreId, action)),
});

/**
 * Actions written with every job's refund or return (CONTRACT.md §15), kept in three lists, not
 * five (a list entry is a write unit): the owner's and the store's lists of the action only, and
 * the resource's. An unfiltered read (owner's or store's) merges those of these actions with its
 * own list (`auditEntryPartitions`), so every read still reads only matches.
 */
export const ACTIONS_LISTED_APART: readonly AuditAction[] = ['sync_job.units_removed', 'sync_job.return_opened'];
const listedApart = (action: AuditAction) => ACTIONS_LISTED_APART.includes(action);

const entriesApart = (entry: AuditEntry): Record<string, string> => ({
  ...indexEntry('lists', lists.auditEntriesOf(entry.ownerId, entry.action), listSortKey(entry.createdAt, entry.id)),
  ...(entry.resellerStoreId === null
    ? {}
    : indexEntry('storeLists', lists.storeAuditEntriesOf(entry.resellerStoreId, entry.action))),
  ...indexEntry('resourceLists', lists.resourceAuditEntries(entry.resourceId)),
});

/** Its entries in the lists; they never change, as the entry does not. */
export const auditEntryIndexEntries = (entry: AuditEntry): Record<string, string> =>
  listedApart(entry.action)
    ? entriesApart(entry)
    : {
        ...indexEntry('lists', lists.auditEntries(entry.ownerId), listSortKey(entry.createdAt, entry.id)),
        ...(entry.resellerStoreId === null ? {} : storeEntries(entry.resellerStoreId, entry.action)),
        ...indexEntry('stateLists', lists.auditEntriesOf(entry.ownerId, entry.action)),
        ...indexEntry('resourceLists', lists.resourceAuditEntries(entry.resourceId)),
      };

/**
 * Where the owner's audit entries are read, filtered by action, reseller store, both or neither
 * (not by resource: `resourceLists` holds a resource's few): an index and its partitions, merged.
 */
export const auditEntryPartitions = (
  ownerId: string,
  store: string | undefined,
  action: AuditAction | undefined,
): { index: 'lists' | 'storeLists' | 'stateLists' | 'storeStateLists'; partitions: string[] } => {
  if (action !== undefined && listedApart(action)) {
    return store === undefined
      ? { index: 'lists', partitions: [lists.auditEntriesOf(ownerId, action)] }
      : { index: 'storeLists', partitions: [lists.storeAuditEntriesOf(store, action)] };
  }
  if (action !== undefined) {
    return store === undefined
      ? { index: 'stateLists', partitions: [lists.auditEntriesOf(ownerId, action)] }
      : { index: 'storeStateLists', partitions: [lists.storeAuditEntriesOf(store, action)] };
  }
  return store === undefined
    ? {
        index: 'lists',
        partitions: [lists.auditEntries(ownerId), ...ACTIONS_LISTED_APART.map((a) => lists.auditEntriesOf(ownerId, a))],
      }
    : {
        index: 'storeLists',
        partitions: [
          lists.storeAuditEntries(store),
          ...ACTIONS_LISTED_APART.map((a) => lists.storeAuditEntriesOf(store, a)),
        ],
      };
};

/**
 * When the table's TTL removes an entry (`expiresAt`, epoch seconds): JOB_RETENTION_DAYS (`-c jobRetentionDays`)
 * after it was written, as an ended job is kept after its last move (issue 44: no item kept forever).
 */
export const auditEntryExpiresAt = (createdAt: string) =>
  Math.floor(Date.parse(createdAt) / 1000) + config.jobRetentionDays() * 86_400;

const shape = recordShape<AuditEntry>()('audit entry', {
  strings: ['id', 'ownerId', 'resourceId', 'actorId', 'createdAt'],
  nullableStrings: ['resellerStoreId'],
  oneOf: { action: AUDIT_ACTIONS, resourceType: AUDITED_RESOURCES },
  objects: ['actor', 'metadata'],
});

export const auditEntryItem = (entry: AuditEntry): Item => ({
  ...auditEntryKey(entry.id),
  ...auditEntryIndexEntries(entry),
  ...shape.fields(entry),
  expiresAt: auditEntryExpiresAt(entry.createdAt),
});

/**
 * The entry as a transaction's Put, conditional on its id being new: written with the change it
 * records, or alone under an id derived from that change, where a repeat writes nothing.
 */
const auditEntryPut = (entry: AuditEntry) => ({
  Put: { TableName: TABLE(), ConditionExpression: 'attribute_not_exists(PK)', Item: auditEntryItem(entry) },
});

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
}) =>
  auditEntryPut({
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
  });

/**
 * Writes an audit entry alone, outside a transaction (not with the change it records): an entry already
 * there under its id (a repeat of what it records) stays as it is.
 */
export const recordAuditEntry = async (input: Parameters<typeof auditPut>[0]) => {
  await putAlone(auditPut(input));
};

export const auditEntryFrom = shape.from;

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
export const auditListSource = ({ ownerId }: { ownerId: string }, filters: AuditFilters): ListSource => {
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
