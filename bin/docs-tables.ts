/**
 * `npm run docs:tables`: writes the table of items and their index entries in shared/dynamo/README.md
 * ("Single-table layout") from the entity modules themselves, so the document cannot drift from
 * the code: each row is an item that `…Item` builds from a record of placeholders (`<id>`,
 * `<owner>`…), in each state that changes its index entries. `test/unit/docs-tables.test.ts`
 * fails when the document differs from what this writes.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { seededEntry, seededJob } from '../bench/seed.js';
import type { SyncJobStatus } from '../shared/domain/orders.js';
import { DEFAULT_ROUTING_POLICY } from '../shared/domain/routing.js';
import {
  eventLists,
  INDEX,
  INDEX_KEYS,
  type IndexRole,
  inFlight,
  keys,
  lists,
  scorecardDayKey,
  supplierPaceKey,
} from '../shared/dynamo/keys.js';
import type { Item } from '../shared/dynamo/table.js';
import { apiKeyItem } from '../shared/entities/api-key.js';
import { appWebhookItem } from '../shared/entities/app-webhook.js';
import { auditEntryItem } from '../shared/entities/audit-entry.js';
import { dataRequestKey } from '../shared/entities/data-request.js';
import { type Event, eventItem } from '../shared/entities/event.js';
import { eventDeliveryItem, newDelivery } from '../shared/entities/event-delivery.js';
import { claimedRequestItem, idempotentRequestKey } from '../shared/entities/idempotent-request.js';
import { keptFulfillmentItem } from '../shared/entities/kept-fulfillment.js';
import { newReconcilePass, reconcilePassItem } from '../shared/entities/reconcile-pass.js';
import { retentionMarkKey } from '../shared/entities/retention-mark.js';
import {
  CONNECTED,
  resellerStoreItem,
  type SourceStore,
  type StoreFields,
  sourceStoreItem,
  vendorTagItem,
} from '../shared/entities/store.js';
import { endpointCountKey, webhookEndpointKey } from '../shared/entities/webhook-endpoint.js';
import { orderCancellationItem } from '../shared/order-flow/order-items.js';
import { orderBodyPartItem } from '../shared/order-flow/order-repository.js';
import {
  ENTITY_TAG,
  entityTagOf,
  type FulfillmentEntry,
  type SyncJob,
  syncJobIndexEntries,
  syncJobKey,
  unroutedOrderItem,
  unroutedOrderMarkItem,
} from '../shared/order-flow/order-sync-job.js';

/** Where the items table is shown: the table's own room. */
export const ITEMS_DOC = 'shared/dynamo/README.md';
export const BEGIN = '<!-- items:begin (written by npm run docs:tables from shared/entities) -->';
export const END = '<!-- items:end -->';

const OWNER = '<owner>';
const CREATED = '<createdAt>';

/**
 * The shard an id's entry is in (`<shard>`: shard 0 has no suffix, keys.ts `LIST_SHARDS`), for the
 * placeholder ids: the sharded partitions an item with this id is written to, put back as `<shard>`.
 */
function shardPlaceholders(id: string): [string, string][] {
  const RST = '<rst>';
  const states = ['failed', 'dead', 'cancelled'];
  const listed: [string, string][] = [
    [lists.syncJobs(OWNER).of(id), `${lists.syncJobs(OWNER).all()[0]}#<shard>`],
    [lists.storeSyncJobs(RST).of(id), `${lists.storeSyncJobs(RST).all()[0]}#<shard>`],
    [lists.storeOrders(RST).of(id), `${lists.storeOrders(RST).all()[0]}#<shard>`],
    [lists.storeUnroutedOrders(RST).of(id), `${lists.storeUnroutedOrders(RST).all()[0]}#<shard>`],
    ...states.flatMap((state): [string, string][] => [
      [lists.syncJobsIn(OWNER, state).of(id), `${lists.syncJobsIn(OWNER, state).all()[0]}#<shard>`],
      [lists.storeSyncJobsIn(RST, state).of(id), `${lists.storeSyncJobsIn(RST, state).all()[0]}#<shard>`],
    ]),
    [
      eventLists.ofType(OWNER, 'order.unrouted').of(id),
      `${eventLists.ofType(OWNER, 'order.unrouted').all()[0]}#<shard>`,
    ],
    [inFlight.open.partition(id), 'OPEN#<shard>'],
    [inFlight.failed.partition(id), 'FAILED#<shard>'],
    [inFlight.propagating.partition(id), 'PROPAGATING#<shard>'],
  ];
  // Longest first: a list's name is the start of its states' (`…#SJ#8` of `…#SJ#failed#8`'s base).
  return listed.sort(([a], [b]) => b.length - a.length);
}

/** Values the entity functions compute from a placeholder, put back as placeholders. */
const PLACEHOLDERS: [string, string][] = [
  ...shardPlaceholders('<id>'),
  ...shardPlaceholders('<first job id>'),
  [idempotentRequestKey({ ownerId: OWNER, key: '<key>' }).PK, 'IDEM#<sha256 of owner, key>'],
  ['BODY#0', 'BODY#<n>'],
  ['sync_job.dead', '<action>'],
  ['order.unrouted', '<type>'],
];

const placeholders = (value: string) => PLACEHOLDERS.reduce((v, [from, to]) => v.split(from).join(to), value);

const store: StoreFields = {
  id: '<id>',
  ownerId: OWNER,
  name: 'name',
  platform: 'storeplatform_a',
  shopDomain: '<domain>',
  secrets: { accessToken: 'ciphertext', webhookSecret: 'ciphertext' },
  previousWebhookSecret: null,
  connection: CONNECTED,
  webhooks: null,
  createdAt: CREATED,
  updatedAt: CREATED,
  deletedAt: null,
};
const sourceStore: SourceStore = {
  ...store,
  resellerStoreId: '<rst>',
  vendorTag: '<tag>',
  pricingMode: 'percentage',
  pricingConfig: { type: 'percentage', value: 0 },
};

const job = (status: SyncJobStatus, fulfillments: Record<string, FulfillmentEntry> = {}): SyncJob => ({
  ...seededJob({ id: '<id>', ownerId: OWNER, resellerStoreId: '<rst>', createdAt: CREATED, status }),
  sourceStoreId: '<sst>',
  sourceOrderId: status === 'completed' ? '<sourceOrderId>' : null,
  fulfillments,
});

const onItsWay = seededEntry('pending', CREATED, { sourceFulfillmentId: '<fid>' });

const event: Event = {
  id: '<id>',
  ownerId: OWNER,
  type: 'order.unrouted',
  createdAt: CREATED,
  object: {},
  endpointIds: ['<endpoint>'],
  failingEndpointIds: [],
};
const delivery = newDelivery(event, '<endpoint>');

/** Every kind of item, in each state that gives it other index entries. */
const ROWS: [string, Item][] = [
  ['API key', apiKeyItem('<sha256 of key>', { keyId: '<id>', ownerId: OWNER }, CREATED)],
  ['reseller store', resellerStoreItem({ ...store, routingPolicy: DEFAULT_ROUTING_POLICY })],
  [
    'reseller store, deleted',
    resellerStoreItem({ ...store, deletedAt: CREATED, routingPolicy: DEFAULT_ROUTING_POLICY }),
  ],
  ['source store', sourceStoreItem(sourceStore)],
  ['source store, deleted', sourceStoreItem({ ...sourceStore, deletedAt: CREATED })],
  ['vendor tag (of an active source store)', vendorTagItem(sourceStore)],
  ...(['pending', 'processing', 'failed', 'completed', 'dead', 'cancelled'] as const).map((status): [string, Item] => [
    `sync job, ${status}`,
    { ...syncJobKey('<id>'), ...entityTagOf('job'), ...syncJobIndexEntries(job(status)) },
  ]),
  [
    'sync job, completed, a fulfillment on its way',
    { ...syncJobKey('<id>'), ...entityTagOf('job'), ...syncJobIndexEntries(job('completed', { '<fid>': onItsWay })) },
  ],
  [
    'order cancellation (an orders/cancelled before its order, at its first job’s key)',
    orderCancellationItem({ firstJobId: '<first job id>', reason: null, cancelledAt: CREATED, expiresAt: 0 }),
  ],
  [
    'sync job, pending, first of its order (the order’s record, in its store’s list of orders)',
    {
      ...syncJobKey('<id>'),
      ...entityTagOf('job'),
      ...syncJobIndexEntries({ ...job('pending'), orderJobIds: ['<id>'] }),
    },
  ],
  [
    'unrouted order (an order none of whose items routes, at its first job’s key)',
    unroutedOrderItem({
      firstJobId: '<first job id>',
      ownerId: OWNER,
      resellerStoreId: '<rst>',
      externalOrderId: '<externalOrderId>',
      receivedAt: CREATED,
      receivedVia: 'webhook',
      unroutedLines: [{ position: 0, reason: 'no_source_store' }],
      cancelledAt: null,
      order: { body: Buffer.alloc(0) },
    }),
  ],
  [
    'unrouted-order mark (of an order with unrouted items, beside its first job)',
    unroutedOrderMarkItem({ firstJobId: '<first job id>', resellerStoreId: '<rst>', receivedAt: CREATED }),
  ],
  ['order body part (beside the first job)', orderBodyPartItem('<first job id>', 0, Buffer.alloc(0))],
  [
    'audit entry',
    auditEntryItem({
      id: '<id>',
      ownerId: OWNER,
      action: 'sync_job.dead',
      resellerStoreId: '<rst>',
      resourceType: 'sync_job',
      resourceId: '<resourceId>',
      actorId: 'system',
      actor: { type: 'system', id: 'system' },
      metadata: {},
      createdAt: CREATED,
    }),
  ],
  [
    'kept fulfillment',
    keptFulfillmentItem({
      sourceStoreId: '<sst>',
      sourceOrderId: '<sourceOrderId>',
      sourceFulfillmentId: '<fid>',
      tracking: { company: null, number: null, numbers: [], url: null, urls: [] },
      lines: null,
      cancelled: false,
      updatedAt: null,
      receivedAt: CREATED,
      expiresAt: 0,
    }),
  ],
  [
    'app webhook (queued)',
    appWebhookItem({
      id: '<id>',
      topic: '<topic>',
      shopDomain: '<domain>',
      stores: [],
      body: '<body>',
      receivedAt: CREATED,
      requestId: '<requestId>',
      expiresAt: 0,
    }),
  ],
  ['event', eventItem(event)],
  ['event, a delivery failing', eventItem({ ...event, failingEndpointIds: ['<endpoint>'] })],
  ['event delivery (pending, delivered)', eventDeliveryItem(delivery)],
  ['event delivery, failed', eventDeliveryItem({ ...delivery, status: 'failed' })],
  ['webhook endpoint', webhookEndpointKey(OWNER, '<id>')],
  ['webhook endpoints’ count (of an owner)', endpointCountKey(OWNER)],
  [
    'idempotent request',
    claimedRequestItem({ ownerId: OWNER, key: '<key>' }, { fingerprint: '', requestId: '', lockedUntil: 0 }, 0),
  ],
  ['reconcile pass (the reconciler’s place in GSI3, one item)', reconcilePassItem(newReconcilePass(CREATED))],
  ['supplier pace (of a source store’s shop, once it throttled)', { ...supplierPaceKey('<domain>') }],
  ['supplier scorecard day (jobs due that day, ADD counters)', { ...scorecardDayKey('<sst id>', '<date>') }],
  ['data request (a shopper’s, kept 30 days)', { ...dataRequestKey('<rst>', '<id>') }],
  ['retention mark (the retention sweep’s place in a list of jobs)', { ...retentionMarkKey('<list>') }],
  [
    'rate window (an API key’s changes in one second, kept a minute)',
    { PK: keys.rateWindow('<keyId>', 0).PK.replace(/0$/, '<second>'), SK: 'RATE' },
  ],
];

const ROLES = Object.keys(INDEX) as IndexRole[];

/** An index's entry of an item: its partition key, and its own sort key (GSI4–7 sort by GSI1SK). */
const entryOf = (item: Item, role: IndexRole) => {
  const { pk, sk } = INDEX_KEYS[role];
  const ownSort = role === 'lists' || role === 'lookups' || role === 'inFlight';
  const values = [item[pk], ...(ownSort ? [item[sk]] : [])].filter((v): v is string => typeof v === 'string');
  return values.map((v) => `\`${placeholders(v)}\``).join(', ');
};

const escapePipes = (cell: string) => cell.replace(/\|/g, '\\|');

/** The rows as a Markdown table, its columns padded as the formatter pads them. */
export const itemTable = (): string => {
  const header = ['item', 'PK', 'SK', `tag (${ENTITY_TAG})`, ...ROLES.map((role) => `${INDEX[role]} (${role})`)];
  const rows = ROWS.map(([name, item]) => [
    name,
    `\`${placeholders(String(item.PK))}\``,
    `\`${placeholders(String(item.SK))}\``,
    typeof item[ENTITY_TAG] === 'string' ? `\`${item[ENTITY_TAG]}\`` : '',
    ...ROLES.map((role) => entryOf(item, role)),
  ]).map((row) => row.map(escapePipes));
  const widths = header.map((_, i) => Math.max(3, ...[header, ...rows].map((row) => row[i].length)));
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
};

/** The document with its generated table replaced by `table`. */
export const withTable = (document: string, table: string) => {
  const [before, rest] = document.split(BEGIN);
  if (rest === undefined || !rest.includes(END)) throw new Error(`${ITEMS_DOC} has no ${BEGIN} … ${END} section`);
  return `${before}${BEGIN}\n\n${table}\n\n${END}${rest.split(END)[1]}`;
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(ITEMS_DOC, withTable(readFileSync(ITEMS_DOC, 'utf8'), itemTable()));
  console.log(`${ITEMS_DOC}: the items table written (${ROWS.length} rows)`);
}
