/**
 * Every key format of the single table lives here.
 *
 * | entity         | PK                  | SK             | GSI1 (lists, KEYS_ONLY)            | GSI2 (lookups)                        | GSI3 (sweep, KEYS_ONLY)      |
 * |----------------|---------------------|----------------|------------------------------------|---------------------------------------|------------------------------|
 * | API key        | KEY#<sha256 hex>    | KEY            |                                    |                                       |                              |
 * | reseller store | RST#<id>            | RST            | OWNER#<owner>#RST, <createdAt>#<id> | SHOP#<domain>, RST#<id>               |                              |
 * | source store   | SST#<id>            | SST            | RST#<rst>#SST, <createdAt>#<id>     | SHOP#<domain>, SST#<id>               |                              |
 * | vendor tag     | RST#<rst>           | VENDOR#<tag>   |                                    |                                       |                              |
 * | sync job       | SJ#<id>             | SJ             | OWNER#<owner>#SJ, <createdAt>#<id>  | SRCORDER#<sst>#<sourceOrderId>, SJ#<id> | PENDING#<shard>, <updatedAt>#<id> |
 * | audit entry    | AUD#<id>            | AUD            | OWNER#<owner>#AUD, <createdAt>#<id> |                                       |                              |
 * | kept fulfillment | FULORDER#<sst>#<sourceOrderId> | KEPT#<sourceFulfillmentId> |                 |                                       |                              |
 *
 * GSI1 is sparse: a soft-deleted store drops out of its list by losing its GSI1 keys.
 * GSI3 is sparse: a pending job is in it only when its message may be missing (a failed enqueue, a
 * manual retry, a deferral), so the sweep reads just those.
 * A kept fulfillment (FULORDER#) expires through the table's TTL attribute `expiresAt`
 * (docs/reverse-sync.md): it waits there until its job records the source order.
 */

export const INDEX = { lists: 'GSI1', lookups: 'GSI2', pending: 'GSI3' } as const;

/** Attributes the lookups index carries, so a webhook verifies a signature with one Query. */
export const LOOKUP_PROJECTION = [
  'id',
  'ownerId',
  'resellerStoreId',
  'platform',
  'shopDomain',
  'createdAt',
  'deletedAt',
  'webhookSecret',
];

export const PENDING_SHARDS = 4;

export interface Key {
  PK: string;
  SK: string;
}

/** `<createdAt>#<id>`: ISO timestamps with milliseconds are fixed width, so the string order is the time order. */
export const listSortKey = (createdAt: string, id: string) => `${createdAt}#${id}`;

/** The partition where a source order's kept fulfillments and its job's release mark meet (one consistent Query). */
export const fulfillmentOrder = (sourceStoreId: string, sourceOrderId: string) =>
  `FULORDER#${sourceStoreId}#${sourceOrderId}`;

export const keys = {
  apiKey: (hash: string): Key => ({ PK: `KEY#${hash}`, SK: 'KEY' }),
  resellerStore: (id: string): Key => ({ PK: `RST#${id}`, SK: 'RST' }),
  sourceStore: (id: string): Key => ({ PK: `SST#${id}`, SK: 'SST' }),
  vendorTag: (resellerStoreId: string, vendorTag: string): Key => ({
    PK: `RST#${resellerStoreId}`,
    SK: `VENDOR#${vendorTag}`,
  }),
  vendorTagPrefix: (resellerStoreId: string) => ({ PK: `RST#${resellerStoreId}`, SKPrefix: 'VENDOR#' }),
  syncJob: (id: string): Key => ({ PK: `SJ#${id}`, SK: 'SJ' }),
  auditEntry: (id: string): Key => ({ PK: `AUD#${id}`, SK: 'AUD' }),
  keptFulfillment: (sourceStoreId: string, sourceOrderId: string, sourceFulfillmentId: string): Key => ({
    PK: fulfillmentOrder(sourceStoreId, sourceOrderId),
    SK: `KEPT#${sourceFulfillmentId}`,
  }),
};

export const lists = {
  resellerStores: (ownerId: string) => `OWNER#${ownerId}#RST`,
  sourceStores: (resellerStoreId: string) => `RST#${resellerStoreId}#SST`,
  syncJobs: (ownerId: string) => `OWNER#${ownerId}#SJ`,
  auditEntries: (ownerId: string) => `OWNER#${ownerId}#AUD`,
};

export const lookups = {
  shop: (shopDomain: string) => `SHOP#${shopDomain}`,
  shopResellerStore: (id: string) => `RST#${id}`,
  shopSourceStore: (id: string) => `SST#${id}`,
  sourceOrder: (sourceStoreId: string, sourceOrderId: string) => `SRCORDER#${sourceStoreId}#${sourceOrderId}`,
};

/** Spreads pending jobs over a few partitions so a burst of orders does not heat one key. */
export const pendingShard = (id: string) => {
  let sum = 0;
  for (const ch of id) sum = (sum + ch.charCodeAt(0)) % PENDING_SHARDS;
  return `PENDING#${sum}`;
};
