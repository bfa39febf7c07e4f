/**
 * Every key format of the single table lives here, and every index by its role: no other module
 * spells a key prefix or an index attribute name (`GSI3PK`…). Each item type's entity module
 * (shared/entities) builds its keys and index entries from these; the table of every item and the
 * index entries it carries in each state is in docs/design.md ("Single-table layout"), written from
 * those modules by `npm run docs:tables` and checked by a test, so it cannot drift from them.
 *
 * `ls` is the list sort key `<createdAt>#<id>`. Every index but GSI2 is KEYS_ONLY; GSI2 carries
 * LOOKUP_PROJECTION. A partition keyed by a store or a resource holds one owner's items only (a
 * store never changes owner), so its key leaves the owner out and a list checks the owner on the
 * items it loads (shared/dynamo/table.ts). GSI1 is sparse: a soft-deleted store drops out of
 * its list by losing its GSI1 keys. GSI3 (work in flight) holds only jobs that have not ended and
 * completed jobs with a fulfillment on its way, so the reconciler's reads grow with the work in
 * flight, never with the jobs ever made. A kept fulfillment and an idempotent request's record
 * expire through the table's TTL attribute `expiresAt`.
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
export const INDEX_KEYS = {
  lists: { pk: 'GSI1PK', sk: 'GSI1SK' },
  lookups: { pk: 'GSI2PK', sk: 'GSI2SK' },
  inFlight: { pk: 'GSI3PK', sk: 'GSI3SK' },
  storeLists: { pk: 'GSI4PK', sk: 'GSI1SK' },
  stateLists: { pk: 'GSI5PK', sk: 'GSI1SK' },
  storeStateLists: { pk: 'GSI6PK', sk: 'GSI1SK' },
  resourceLists: { pk: 'GSI7PK', sk: 'GSI1SK' },
} as const satisfies Record<IndexRole, { pk: string; sk: string }>;

/** An attribute that is an index key (`GSI3PK`…): what an item's index entries name. */
export type IndexAttribute = (typeof INDEX_KEYS)[IndexRole]['pk' | 'sk'];

/** An item's entries in the indexes: index key attributes and their values. */
export type IndexEntries = { [A in IndexAttribute]?: string };

/** Every attribute that is an index key. */
export const INDEX_ATTRIBUTES: readonly IndexAttribute[] = [
  ...new Set(Object.values(INDEX_KEYS).flatMap(({ pk, sk }) => [pk, sk])),
];

/**
 * An item's entry in one index, by the index's role: its key attributes (GSI4–7 take only the
 * partition key: their sort key is the list sort key an item in GSI1 already carries).
 */
export const indexEntry = (role: IndexRole, pk: string, sk?: string): IndexEntries => ({
  [INDEX_KEYS[role].pk]: pk,
  ...(sk === undefined ? {} : { [INDEX_KEYS[role].sk]: sk }),
});

/** The partition key attribute of an index, to remove: an item that leaves it. */
export const indexPartitionName = (role: IndexRole): IndexAttribute => INDEX_KEYS[role].pk;

/** The key attributes of an index with a sort key of its own, to remove: an item that leaves it. */
export const indexKeyNames = (role: 'lists' | 'lookups' | 'inFlight'): IndexAttribute[] => [
  INDEX_KEYS[role].pk,
  INDEX_KEYS[role].sk,
];

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
 * Shards of every index partition a busy owner writes at the order rate (shared/dynamo/README.md, "Hot keys"):
 * its jobs' lists (GSI1, GSI4–6), its stores' lists of orders (GSI7) and GSI3's sets of work in
 * flight. An entry goes to the shard of its item's id (a job's, an order's first job's), so one
 * owner's 10,000 job writes a second are 625 a second on each, under DynamoDB's 1,000 write units a
 * second per partition; a list page reads every shard (one Query each, in parallel) and merges them
 * by sort key. Shard 0 of a list keeps the unsharded name every entry had before the shards, so those
 * entries stay in their lists with no backfill; changing the count moves every other entry.
 */
export const LIST_SHARDS = 16;

/** Partitions of each in-flight set of GSI3: the list shards (`OPEN#0`…`OPEN#15`), by job id. */
export const IN_FLIGHT_SHARDS = LIST_SHARDS;

export interface Key {
  PK: string;
  SK: string;
}

/** `<createdAt>#<id>`: ISO timestamps with milliseconds are fixed width, so the string order is the time order. */
export const listSortKey = (createdAt: string, id: string) => `${createdAt}#${id}`;

/** The partition of a supplier order's kept fulfillments (read with one consistent Query). */
export const fulfillmentOrder = (sourceStoreId: string, sourceOrderId: string) =>
  `FULORDER#${sourceStoreId}#${sourceOrderId}`;

const VENDOR = 'VENDOR#';
const BODY = 'BODY#';
const JOB = 'SJ#';
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
  syncJob: (id: string): Key => ({ PK: `${JOB}${id}`, SK: 'SJ' }),
  /**
   * The mark of an order with unrouted items, beside the order's first job (shared/order-flow/order.ts):
   * its entry in the store's list of such orders names the partition of the order's record.
   */
  unroutedOrderMark: (firstJobId: string): Key => ({ PK: `${JOB}${firstJobId}`, SK: 'UNROUTED' }),
  /**
   * Part `n` of an order's compressed body, beside the order's first job (docs/hostile-input.md,
   * "Storing an order"): written once with that job, never updated.
   */
  orderBodyPart: (firstJobId: string, n: number): Key => ({ PK: `SJ#${firstJobId}`, SK: `${BODY}${n}` }),
  /** Every part of an order's body: one partition, one sort-key prefix. */
  orderBodyParts: (firstJobId: string) => ({ PK: `${JOB}${firstJobId}`, SKPrefix: BODY }),
  auditEntry: (id: string): Key => ({ PK: `AUD#${id}`, SK: 'AUD' }),
  keptFulfillment: (sourceStoreId: string, sourceOrderId: string, sourceFulfillmentId: string): Key => ({
    PK: fulfillmentOrder(sourceStoreId, sourceOrderId),
    SK: `${KEPT}${sourceFulfillmentId}`,
  }),
  /** A carrier's reports on a parcel not known yet (CONTRACT.md §16.2), beside its order's kept fulfillments. */
  keptCarrierReports: (sourceStoreId: string, sourceOrderId: string, sourceFulfillmentId: string): Key => ({
    PK: fulfillmentOrder(sourceStoreId, sourceOrderId),
    SK: `REPORT#${sourceFulfillmentId}`,
  }),
  /**
   * A shopper's data request (CONTRACT.md §13), under its reseller store: the store in the key, so
   * another store's id names no item.
   */
  dataRequest: (resellerStoreId: string, id: string): Key => ({ PK: `DREQ#${resellerStoreId}#${id}`, SK: 'DREQ' }),
  /** Where the retention sweep (shared/privacy/retention.ts) goes on in one list of jobs (a shard of an owner's). */
  retentionMark: (list: string): Key => ({ PK: `RETENTION#${list}`, SK: 'MARK' }),
  /** One API key's changes in one second (shared/entities/rate-limits.ts): its own partition, gone by TTL. */
  rateWindow: (keyId: string, second: number): Key => ({ PK: `RATE#${keyId}#${second}`, SK: 'RATE' }),
  /** The record of an `Idempotency-Key`, by the hash of its owner and key (shared/idempotency/requests.ts). */
  idempotentRequest: (hash: string): Key => ({ PK: `IDEM#${hash}`, SK: 'IDEM' }),
  /**
   * An app webhook kept for its queue's worker (shared/app-webhooks): by the hash of its shop domain
   * and delivery id, so a redelivery finds it.
   */
  appWebhook: (id: string): Key => ({ PK: `APPHOOK#${id}`, SK: 'APPHOOK' }),
  /** Every kept fulfillment of a supplier order. */
  keptFulfillmentPrefix: (sourceStoreId: string, sourceOrderId: string) => ({
    PK: fulfillmentOrder(sourceStoreId, sourceOrderId),
    SKPrefix: KEPT,
  }),
};

/**
 * The id of the job whose partition (`SJ#<id>`) an item is in: a job item's own (it does not repeat
 * it in an attribute), or the order's first job for what is kept beside it (body parts, an order's
 * mark, an unrouted order or a cancellation at its key).
 */
export const jobIdOfPartition = (key: Key) => key.PK.slice(JOB.length);

/** The part number of an order body part's key, or undefined for any other key. */
export const bodyPartNumberOf = (key: Key) => (key.SK.startsWith(BODY) ? Number(key.SK.slice(BODY.length)) : undefined);

/** Whether a key is an unrouted order's mark (`keys.unroutedOrderMark`). */
export const isUnroutedOrderMarkKey = (key: Key) => key.SK === 'UNROUTED' && key.PK.startsWith(JOB);

/** Whether a key is a sync job's item key (or that of what is kept at an order's first job key). */
export const isSyncJobKey = (key: { PK?: unknown; SK?: unknown }) =>
  key.SK === 'SJ' && typeof key.PK === 'string' && key.PK.startsWith(JOB);

/** The key of the order record (the first job, or an unrouted order) an item of its partition names. */
export const orderRecordKeyOf = (key: Key): Key => keys.syncJob(jobIdOfPartition(key));

/** The store a store item's key names (a reseller's `RST#<id>`/`RST`, a source's `SST#<id>`/`SST`), else undefined. */
export const storeOfKey = (key: Key): { kind: 'reseller' | 'source'; id: string } | undefined => {
  if (key.SK === 'RST' && key.PK.startsWith('RST#')) return { kind: 'reseller', id: key.PK.slice(4) };
  if (key.SK === 'SST' && key.PK.startsWith('SST#')) return { kind: 'source', id: key.PK.slice(4) };
  return undefined;
};

/** The vendor tag a vendor-tag item's sort key names. */
export const vendorTagOf = (key: Key) => key.SK.slice(VENDOR.length);

/** FNV-1a: a stable spread of ids over the shards, the same in every function. */
const shardNumber = (id: string) => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % LIST_SHARDS;
};

/** One list spread over `LIST_SHARDS` partitions: where an item's entry goes, and what a page reads. */
export interface ShardedList {
  /** The partition of the entry of the item with this id (a job's id, an order's first job's). */
  of: (id: string) => string;
  /** Every shard, read and merged by a page. */
  all: () => string[];
}

const shardName = (base: string, n: number) => (n === 0 ? base : `${base}#${n}`);

const sharded = (base: string): ShardedList => ({
  of: (id) => shardName(base, shardNumber(id)),
  all: () => Array.from({ length: LIST_SHARDS }, (_, n) => shardName(base, n)),
});

/**
 * List partitions, each of one index (see the tables above). The lists a busy owner writes at the
 * order rate (its jobs', its stores' orders') are sharded: `of(id)` for an entry, `all()` for a page.
 */
export const lists = {
  /** Every API key, for `npm run keys -- list|revoke` (keys are few: one partition holds them). */
  apiKeys: () => 'APIKEYS',
  resellerStores: (ownerId: string) => `OWNER#${ownerId}#RST`,
  /** Its soft-deleted reseller stores, which no page lists: the retention sweep reads their unrouted orders. */
  deletedResellerStores: (ownerId: string) => `OWNER#${ownerId}#RST#DELETED`,
  sourceStores: (resellerStoreId: string) => `RST#${resellerStoreId}#SST`,
  syncJobs: (ownerId: string) => sharded(`OWNER#${ownerId}#SJ`),
  auditEntries: (ownerId: string) => `OWNER#${ownerId}#AUD`,
  /** GSI4 */
  storeSyncJobs: (resellerStoreId: string) => sharded(`RST#${resellerStoreId}#SJ`),
  storeAuditEntries: (resellerStoreId: string) => `RST#${resellerStoreId}#AUD`,
  /** GSI5 */
  /**
   * Every active store, reseller and source (sparse: a store leaves it when deleted), which the poller
   * enumerates with a Query of keys instead of a Scan of a table that grows with orders (CONTRACT.md §10.7).
   */
  activeStores: () => 'STORES#ACTIVE',
  syncJobsIn: (ownerId: string, state: string) => sharded(`OWNER#${ownerId}#SJ#${state}`),
  /**
   * GSI5: completed jobs due in one UTC hour (`YYYY-MM-DDTHH`), for the late sweep (CONTRACT.md §16.2):
   * `D#<hours since 1970, base 36>`, short, as every byte of the job item is paid by each of its writes.
   */
  jobsDueIn: (hour: string) => sharded(`D#${Math.floor(Date.parse(`${hour}:00:00Z`) / 3_600_000).toString(36)}`),
  auditEntriesOf: (ownerId: string, action: string) => `OWNER#${ownerId}#AUD#${action}`,
  /** GSI6 */
  storeSyncJobsIn: (resellerStoreId: string, state: string) => sharded(`RST#${resellerStoreId}#SJ#${state}`),
  storeAuditEntriesOf: (resellerStoreId: string, action: string) => `RST#${resellerStoreId}#AUD#${action}`,
  /** GSI7 */
  resourceAuditEntries: (resourceId: string) => `RES#${resourceId}#AUD`,
  /** A reseller store's orders (CONTRACT.md §10.8): entries of the orders' first jobs or unrouted-order records. */
  storeOrders: (resellerStoreId: string) => sharded(`RST#${resellerStoreId}#ORD`),
  /** Those with unrouted items: entries of their marks (`keys.unroutedOrderMark`). */
  storeUnroutedOrders: (resellerStoreId: string) => sharded(`RST#${resellerStoreId}#ORD#UNROUTED`),
};

export const lookups = {
  shop: (shopDomain: string) => `SHOP#${shopDomain}`,
  shopResellerStore: (id: string) => `RST#${id}`,
  shopSourceStore: (id: string) => `SST#${id}`,
  /** The GSI2 sort-key prefixes of each kind of store under a shop domain. */
  shopResellerStores: 'RST#',
  shopSourceStores: 'SST#',
  sourceOrder: (sourceStoreId: string, sourceOrderId: string) => `SRCORDER#${sourceStoreId}#${sourceOrderId}`,
  /** A completed job's GSI2 sort key under its supplier order. */
  sourceOrderJob: (id: string) => `SJ#${id}`,
  /** The GSI2 sort-key prefix of the jobs under a supplier order. */
  sourceOrderJobs: 'SJ#',
};

const inFlightSet = (prefix: string) => ({
  /** The partition of a job's entry: the shard of its id. */
  partition: (jobId: string) => `${prefix}#${shardNumber(jobId)}`,
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

/**
 * Event list partitions of the table itself and of the indexes. An event is kept in its list
 * (`ofType`: its owner's events of its type, sharded by its id, sorted by `<created>#<id>`), with no
 * index entry on the happy path; GSI6 holds the failing ones and GSI7 an endpoint's failed deliveries.
 * `legacyOfType` is GSI5's list of the events written before (at `EVT#<id>`/`EVT`), read until they
 * expire (shared/events/README.md, "Events and webhook endpoints").
 */
export const eventLists = {
  ofType: (ownerId: string, type: string) => sharded(`EVT#${ownerId}#${type}`),
  legacyOfType: (ownerId: string, type: string) => `OWNER#${ownerId}#EVT#${type}`,
  failing: (ownerId: string) => `OWNER#${ownerId}#EVT#FAILING`,
  endpointFailed: (endpointId: string) => `WHE#${endpointId}#FAILED`,
};

/**
 * Events (CONTRACT.md §14) and webhook endpoints. An event is an item of its list (`eventLists.ofType`),
 * its key spelled by its id (shared/entities/event.ts); its delivery to an endpoint is
 * `EVT#<eventId>`/`DLV#<endpointId>`. An owner's endpoints (at most 16) and their count share one
 * partition keyed by the owner, so another owner's endpoint id names no item (404) and the whole
 * list is one Query.
 */
export const eventKeys = {
  event: (ownerId: string, type: string, createdAt: string, id: string): Key => ({
    PK: eventLists.ofType(ownerId, type).of(id),
    SK: listSortKey(createdAt, id),
  }),
  /** An event written before its list was its key (30 days' TTL): read, never written. */
  legacyEvent: (id: string): Key => ({ PK: `EVT#${id}`, SK: 'EVT' }),
  delivery: (eventId: string, endpointId: string): Key => ({ PK: `EVT#${eventId}`, SK: `DLV#${endpointId}` }),
  endpoint: (ownerId: string, id: string): Key => ({ PK: `WHE#${ownerId}`, SK: `WHE#${id}` }),
  /** The owner's number of endpoints, the key of the limit of 16 (a conditional update beside each create). */
  endpointCount: (ownerId: string): Key => ({ PK: `WHE#${ownerId}`, SK: 'COUNT' }),
  endpointsOf: (ownerId: string) => ({ PK: `WHE#${ownerId}`, SKPrefix: 'WHE#' }),
  /** An endpoint's delivery leases and slow mark (shared/entities/endpoint-leases.ts): its own small item. */
  endpointLeases: (endpointId: string): Key => ({ PK: `WHE#${endpointId}#LEASES`, SK: 'LEASES' }),
};

/** The list sort key an index entry carries (a page's bound when several partitions are merged). */
export const entrySortKey = (role: IndexRole | 'table', entry: Record<string, unknown>) =>
  String(entry[role === 'table' ? 'SK' : INDEX_KEYS[role].sk]);
/** The reconciler's place in its pass over GSI3's sets (shared/entities/reconcile-pass.ts): one small item. */
export const reconcilePassKey = (): Key => ({ PK: 'RECONCILER', SK: 'PASS' });

/** How far the late sweep has come (CONTRACT.md §16.2): the last UTC hour of due jobs it went through. */
export const lateSweepKey = (): Key => ({ PK: 'LATESWEEP', SK: 'MARK' });

/**
 * A supplier's figures for one day (CONTRACT.md §16.3, shared/entities/scorecard-day.ts): the jobs due that
 * day in its zone, as the late sweep settled them. A scorecard reads its window's days, never the jobs.
 */
export const scorecardDayKey = (sourceStoreId: string, day: string): Key => ({
  PK: `SCORE#${sourceStoreId}`,
  SK: `DAY#${day}`,
});

/**
 * A source store's shop's pace (docs/design.md, "A pace per supplier"): one small item per supplier
 * shop domain, written only once the shop has throttled a call, shared by every source store on it.
 */
export const supplierPaceKey = (shopDomain: string): Key => ({ PK: `PACE#${shopDomain}`, SK: 'PACE' });
