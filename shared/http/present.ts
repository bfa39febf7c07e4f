/** Item → API object: the only place that decides what a response shows. Secrets never pass. */
import type { Item } from '../dynamo/table.js';

const pick = (item: Item, fields: string[]) => Object.fromEntries(fields.map((f) => [f, item[f] ?? null]));

export const presentResellerStore = (item: Item) => ({
  id: item.id,
  object: 'reseller_store',
  ...pick(item, ['ownerId', 'name', 'platform', 'shopDomain', 'createdAt', 'deletedAt']),
});

export const presentSourceStore = (item: Item) => ({
  id: item.id,
  object: 'source_store',
  ...pick(item, [
    'resellerStoreId',
    'name',
    'platform',
    'shopDomain',
    'vendorTag',
    'pricingMode',
    'pricingConfig',
    'createdAt',
    'deletedAt',
  ]),
});

export const presentSyncJob = (item: Item) => ({
  id: item.id,
  object: 'sync_job',
  ...pick(item, [
    'resellerStoreId',
    'sourceStoreId',
    'status',
    'attempts',
    'externalOrderId',
    'sourceOrderId',
    'errorMessage',
    'completedAt',
    'failedAt',
    'deadAt',
    'createdAt',
    'updatedAt',
  ]),
  ...presentFulfillments(item.fulfillments as Record<string, Item> | undefined),
});

const FULFILLMENT_FIELDS = [
  'sourceFulfillmentId',
  'status',
  'trackingCompany',
  'trackingNumber',
  'trackingNumbers',
  'trackingUrl',
  'resellerFulfillmentId',
  'attempts',
  'errorMessage',
  'receivedAt',
  'deliveredAt',
  'updatedAt',
];

/**
 * Reverse sync on the sync job (docs/reverse-sync.md): `fulfillment` is the most recently
 * received source fulfillment (null until one arrives), `fulfillments` every one, oldest first,
 * for a supplier that ships an order in several parcels.
 */
const byText = (a: unknown, b: unknown) => String(a).localeCompare(String(b));

const presentFulfillments = (map: Record<string, Item> | undefined) => {
  const fulfillments = Object.values(map ?? {})
    .sort((a, b) => byText(a.receivedAt, b.receivedAt) || byText(a.sourceFulfillmentId, b.sourceFulfillmentId))
    .map((entry) => pick(entry, FULFILLMENT_FIELDS));
  return { fulfillment: fulfillments.at(-1) ?? null, fulfillments };
};

export const presentAuditEntry = (item: Item) => ({
  id: item.id,
  object: 'audit_log_entry',
  ...pick(item, [
    'action',
    'resellerStoreId',
    'resourceType',
    'resourceId',
    'actorId',
    'actor',
    'metadata',
    'createdAt',
  ]),
});

export const presentList = (url: string, data: unknown[], hasMore: boolean) => ({
  object: 'list',
  data,
  has_more: hasMore,
  url,
});
