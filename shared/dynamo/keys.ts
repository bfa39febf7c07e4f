/**
 * Every key format of the single table lives here; no other module spells a key prefix.
 *
 * | entity           | PK                 | SK           | GSI1 (lists)          | GSI2 (lookups)              |
 * |------------------|--------------------|--------------|-----------------------|-----------------------------|
 * | API key          | KEY#<sha256 hex>   | KEY          | APIKEYS, ls           |                             |
 * | reseller store   | RST#<id>           | RST          | OWNER#<owner>#RST, ls | SHOP#<domain>, RST#<id>     |
 * | source store     | SST#<id>           | SST          | RST#<rst>#SST, ls     | SHOP#<domain>, SST#<id>     |
 * | vendor tag       | RST#<rst>          | VENDOR#<tag> |                       |                             |
 * | sync job         | SJ#<id>            | SJ           | OWNER#<owner>#SJ, ls  | SRCORDER#<sst>#<o>, SJ#<id> |
 * | order body part  | SJ#<first job id>  | BODY#<n>     |                       |                             |
 * | audit entry      | AUD#<id>           | AUD          | OWNER#<owner>#AUD, ls |                             |
 * | kept fulfillment | FULORDER#<sst>#<o> | KEPT#<fid>   |                       |                             |
 * | idempotent req.  | IDEM#<sha256>      | IDEM         |                       |                             |
 *
 * The filtered lists (docs/design.md, "Lists"), all sorted by the same `GSI1SK` (`ls`):
 *
 * | entity      | GSI4 (store lists) | GSI5 (state lists)         | GSI6 (store state lists)  | GSI7 (resource lists) |
 * |-------------|--------------------|----------------------------|---------------------------|-----------------------|
 * | sync job    | RST#<rst>#SJ       | OWNER#<owner>#SJ#<s>       | RST#<rst>#SJ#<s>          |                       |
 * | audit entry | RST#<rst>#AUD      | OWNER#<owner>#AUD#<action> | RST#<rst>#AUD#<action>    | RES#<resource>#AUD    |
 *
 * `ls` is the list sort key `<createdAt>#<id>`; `<o>` a source order id, `<fid>` a source
 * fulfillment id, `<s>` a rare job state (`failed`, `dead`): a job is in GSI5 and GSI6 only while
 * it is in one (shared/sync-jobs/indexes.ts), so those moves are the only ones that write them.
 * Every index but GSI2 is KEYS_ONLY; GSI2 carries LOOKUP_PROJECTION. A partition keyed by a store
 * or a resource holds one owner's items only (a store never changes owner), so its key leaves the
 * owner out and a list checks the owner on the items it loads (shared/dynamo/pagination.ts).
 *
 * GSI1 is sparse: a soft-deleted store drops out of its list by losing its GSI1 keys.
 * GSI2 holds a sync job only once it is completed (its source order id is known from then on).
 * GSI3 (work in flight, KEYS_ONLY) holds every sync job that has not ended: a `pending` or
 * `processing` one as `OPEN#<shard of owner>`, `<owner>#<createdAt>#<id>`, a `failed` one (waiting
 * for its next attempt) apart as `FAILED#<shard of owner>` with the same sort key, so an owner's
 * pending and processing jobs are one range; and every completed job with a fulfillment still on its
 * way as `PROPAGATING#<shard of owner>` (shared/sync-jobs/indexes.ts decides which). The reconciler
 * reads only these, so its reads grow with the work in flight, never with the jobs ever made.
 * A kept fulfillment expires through the table's TTL attribute `expiresAt` (docs/reverse-sync.md):
 * it waits there until the job that placed its source order records that order's id. So does an
 * idempotent request's record, 24 hours after its first request (`<sha256>`: of owner and key).
 */

export const INDEX = {
  lists: 'GSI1',
  lookups: 'GSI2',
  inFlight: 'GSI3',
  storeLists: 'GSI4',
  stateLists: 'GSI5',
  storeStateLists: 'GSI6',
  resourceLists: 'GSI7',
} as const;

/** An index by its role (`lists`, `storeLists`…); `INDEX[role]` is its name. */
export type IndexRole = keyof typeof INDEX;

/**
 * The key attributes of each index. GSI4–7 sort by `GSI1SK` too: an item in several lists carries
 * its list sort key once, which keeps the job item small (its size rounds every write up to a KB).
 */
export const INDEX_KEYS: Record<IndexRole, { pk: string; sk: string }> = {
  lists: { pk: 'GSI1PK', sk: 'GSI1SK' },
  lookups: { pk: 'GSI2PK', sk: 'GSI2SK' },
  inFlight: { pk: 'GSI3PK', sk: 'GSI3SK' },
  storeLists: { pk: 'GSI4PK', sk: 'GSI1SK' },
  stateLists: { pk: 'GSI5PK', sk: 'GSI1SK' },
  storeStateLists: { pk: 'GSI6PK', sk: 'GSI1SK' },
  resourceLists: { pk: 'GSI7PK', sk: 'GSI1SK' },
};

/** Every attribute that is an index key. */
export const INDEX_ATTRIBUTES: readonly string[] = [
  ...new Set(Object.values(INDEX_KEYS).flatMap(({ pk, sk }) => [pk, sk])),
];

/**
 * An item's entry in one index, by the index's role: its key attributes (GSI4–7 take only the
 * partition key: their sort key is the list sort key an item in GSI1 already carries).
 */
export const indexEntry = (role: IndexRole, pk: string, sk?: string): Record<string, string> => ({
  [INDEX_KEYS[role].pk]: pk,
  ...(sk === undefined ? {} : { [INDEX_KEYS[role].sk]: sk }),
});

/** The key attributes of an index with a sort key of its own, to remove: an item that leaves it. */
export const indexKeyNames = (role: 'lists' | 'lookups' | 'inFlight') => [INDEX_KEYS[role].pk, INDEX_KEYS[role].sk];

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

/**
 * Partitions of each in-flight set of GSI3: a burst of orders heats no single key. An owner's jobs
 * all fall in one shard, so one owner's open jobs are one Query. Changing it moves every entry.
 */
export const IN_FLIGHT_SHARDS = 4;

export interface Key {
  PK: string;
  SK: string;
}

/** `<createdAt>#<id>`: ISO timestamps with milliseconds are fixed width, so the string order is the time order. */
export const listSortKey = (createdAt: string, id: string) => `${createdAt}#${id}`;

/** The partition of a source order's kept fulfillments (read with one consistent Query). */
export const fulfillmentOrder = (sourceStoreId: string, sourceOrderId: string) =>
  `FULORDER#${sourceStoreId}#${sourceOrderId}`;

const VENDOR = 'VENDOR#';
const BODY = 'BODY#';
const KEPT = 'KEPT#';

export const keys = {
  apiKey: (hash: string): Key => ({ PK: `KEY#${hash}`, SK: 'KEY' }),
  resellerStore: (id: string): Key => ({ PK: `RST#${id}`, SK: 'RST' }),
  sourceStore: (id: string): Key => ({ PK: `SST#${id}`, SK: 'SST' }),
  vendorTag: (resellerStoreId: string, vendorTag: string): Key => ({
    PK: `RST#${resellerStoreId}`,
    SK: `${VENDOR}${vendorTag}`,
  }),
  /** Every vendor-tag item of a reseller store: one partition, one sort-key prefix. */
  vendorTagPrefix: (resellerStoreId: string) => ({ PK: `RST#${resellerStoreId}`, SKPrefix: VENDOR }),
  syncJob: (id: string): Key => ({ PK: `SJ#${id}`, SK: 'SJ' }),
  /**
   * Part `n` of an order's compressed body, beside the order's first job (docs/hostile-input.md,
   * "Storing an order"): written once with that job, never updated.
   */
  orderBodyPart: (firstJobId: string, n: number): Key => ({ PK: `SJ#${firstJobId}`, SK: `${BODY}${n}` }),
  auditEntry: (id: string): Key => ({ PK: `AUD#${id}`, SK: 'AUD' }),
  keptFulfillment: (sourceStoreId: string, sourceOrderId: string, sourceFulfillmentId: string): Key => ({
    PK: fulfillmentOrder(sourceStoreId, sourceOrderId),
    SK: `${KEPT}${sourceFulfillmentId}`,
  }),
  /** The record of an `Idempotency-Key`, by the hash of its owner and key (shared/idempotency/requests.ts). */
  idempotentRequest: (hash: string): Key => ({ PK: `IDEM#${hash}`, SK: 'IDEM' }),
  /** Every kept fulfillment of a source order. */
  keptFulfillmentPrefix: (sourceStoreId: string, sourceOrderId: string) => ({
    PK: fulfillmentOrder(sourceStoreId, sourceOrderId),
    SKPrefix: KEPT,
  }),
};

/** The vendor tag a vendor-tag item's sort key names. */
export const vendorTagOf = (key: Key) => key.SK.slice(VENDOR.length);

/** List partitions, each of one index (see the tables above). */
export const lists = {
  /** Every API key, for `npm run keys -- list|revoke` (keys are few: one partition holds them). */
  apiKeys: () => 'APIKEYS',
  resellerStores: (ownerId: string) => `OWNER#${ownerId}#RST`,
  sourceStores: (resellerStoreId: string) => `RST#${resellerStoreId}#SST`,
  syncJobs: (ownerId: string) => `OWNER#${ownerId}#SJ`,
  auditEntries: (ownerId: string) => `OWNER#${ownerId}#AUD`,
  /** GSI4 */
  storeSyncJobs: (resellerStoreId: string) => `RST#${resellerStoreId}#SJ`,
  storeAuditEntries: (resellerStoreId: string) => `RST#${resellerStoreId}#AUD`,
  /** GSI5 */
  syncJobsIn: (ownerId: string, state: string) => `OWNER#${ownerId}#SJ#${state}`,
  auditEntriesOf: (ownerId: string, action: string) => `OWNER#${ownerId}#AUD#${action}`,
  /** GSI6 */
  storeSyncJobsIn: (resellerStoreId: string, state: string) => `RST#${resellerStoreId}#SJ#${state}`,
  storeAuditEntriesOf: (resellerStoreId: string, action: string) => `RST#${resellerStoreId}#AUD#${action}`,
  /** GSI7 */
  resourceAuditEntries: (resourceId: string) => `RES#${resourceId}#AUD`,
};

export const lookups = {
  shop: (shopDomain: string) => `SHOP#${shopDomain}`,
  shopResellerStore: (id: string) => `RST#${id}`,
  shopSourceStore: (id: string) => `SST#${id}`,
  /** The GSI2 sort-key prefixes of each kind of store under a shop domain. */
  shopResellerStores: 'RST#',
  shopSourceStores: 'SST#',
  sourceOrder: (sourceStoreId: string, sourceOrderId: string) => `SRCORDER#${sourceStoreId}#${sourceOrderId}`,
  /** A completed job's GSI2 sort key under its source order. */
  sourceOrderJob: (id: string) => `SJ#${id}`,
  /** The GSI2 sort-key prefix of the jobs under a source order. */
  sourceOrderJobs: 'SJ#',
};

/** FNV-1a: a stable spread of owner ids over the shards, the same in every function. */
const shardNumber = (ownerId: string) => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < ownerId.length; i++) hash = Math.imul(hash ^ ownerId.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % IN_FLIGHT_SHARDS;
};

const inFlightSet = (prefix: string) => ({
  partition: (ownerId: string) => `${prefix}#${shardNumber(ownerId)}`,
  allPartitions: () => Array.from({ length: IN_FLIGHT_SHARDS }, (_, n) => `${prefix}#${n}`),
});

/**
 * GSI3's sets of work in flight: jobs that have not ended (pending or processing; failed), completed
 * jobs still propagating a fulfillment.
 */
export const inFlight = {
  open: inFlightSet('OPEN'),
  failed: inFlightSet('FAILED'),
  propagating: inFlightSet('PROPAGATING'),
  /** The GSI3 sort key: one owner's entries together, oldest first. */
  sortKey: (ownerId: string, createdAt: string, id: string) => `${ownerId}#${createdAt}#${id}`,
  /** The sort-key prefix of one owner's entries. */
  ownerPrefix: (ownerId: string) => `${ownerId}#`,
};
