import { readFileSync } from 'node:fs';
import { DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { eventKeys, keys, reconcilePassKey, supplierPaceKey } from '../../shared/dynamo/keys.js';
import { auditEntryItem } from '../../shared/entities/audit-entry.js';
import { expireOrderItems } from '../../shared/order-flow/order-redaction.js';
import { orderBodyPartItem } from '../../shared/order-flow/order-repository.js';
import {
  ENTITY_TAGS,
  EXPIRES_AT,
  expiryOf,
  unroutedOrderItem,
  unroutedOrderMarkItem,
} from '../../shared/order-flow/order-sync-job.js';

/**
 * Issue 44: every kind of item the table holds has an end. Either the table's TTL attribute (`expiresAt`),
 * written by the module named here, or it is kept as long as what it belongs to, for the reason given
 * (docs/performance.md, "What the table keeps, and for how long"). A key added to shared/dynamo/keys.ts or
 * an order item kind added to order-sync-job.ts without an entry here fails.
 */
type End = { ttl: string } | { kept: string };

const ITEM_ENDS: Record<string, End> = {
  // shared/dynamo/keys.ts `keys`
  apiKey: { kept: 'a credential: kept while it is valid, its revocation is a write to it' },
  resellerStore: {
    kept: 'a connected store: soft-deleted, kept so its orders resolve; shop/redact erases its secrets',
  },
  sourceStore: { kept: 'a connected store: as a reseller store' },
  vendorTag: { kept: "a source store's routing entry: one per connected source store, removed with its change" },
  syncJob: { ttl: 'shared/order-flow/order-sync-job.ts' },
  unroutedOrderMark: { ttl: 'shared/order-flow/order-sync-job.ts' },
  orderBodyPart: { ttl: 'shared/order-flow/order-repository.ts' },
  auditEntry: { ttl: 'shared/entities/audit-entry.ts' },
  keptFulfillment: { ttl: 'shared/entities/kept-fulfillment.ts' },
  keptCarrierReports: { ttl: 'shared/entities/kept-fulfillment.ts' },
  dataRequest: { ttl: 'shared/entities/data-request.ts' },
  retentionMark: { kept: "the retention sweep's place in one list: one small item a list shard, bounded" },
  rateWindow: { ttl: 'shared/entities/rate-limits.ts' },
  idempotentRequest: { ttl: 'shared/entities/idempotent-request.ts' },
  appWebhook: { ttl: 'shared/entities/app-webhook.ts' },
  // eventKeys
  event: { ttl: 'shared/entities/event.ts' },
  legacyEvent: { kept: 'read, never written: items of older code, each with its 30-day TTL' },
  delivery: { ttl: 'shared/entities/event-delivery.ts' },
  endpoint: { kept: 'a webhook endpoint: configuration, at most 16 an owner, deleted by its owner' },
  endpointCount: { kept: "the owner's number of endpoints: one small item an owner" },
  endpointLeases: { ttl: 'shared/entities/endpoint-leases.ts' },
  // the others
  reconcilePass: { kept: "the reconciler's place in its pass: one item" },
  supplierPace: { ttl: 'shared/entities/rate-limits.ts' },
  // the order's partition (order-sync-job.ts ENTITY_TAGS): its record and what is kept beside it
  job: { ttl: 'shared/order-flow/order-sync-job.ts' },
  unroutedOrder: { ttl: 'shared/order-flow/order-sync-job.ts' },
  orderCancellation: { ttl: 'shared/order-flow/order-items.ts' },
  earlyAfterSale: { ttl: 'shared/order-flow/order-items.ts' },
  bodyPart: { ttl: 'shared/order-flow/order-repository.ts' },
  unroutedMark: { ttl: 'shared/order-flow/order-sync-job.ts' },
};

/** Key builders of many items; the others (`…Prefix`, `…Of`, `…Parts`) are queries' bounds. */
const itemKeyNames = (builders: Record<string, unknown>) =>
  Object.keys(builders).filter((name) => !/(Prefix|Of|Parts)$/.test(name));

const DAY = 86_400;
const at = '2026-03-01T12:00:00.000Z';
const atSeconds = Date.parse(at) / 1000;

describe('what the table keeps, and for how long (issue 44)', () => {
  const retention = process.env.JOB_RETENTION_DAYS;
  beforeAll(() => {
    process.env.JOB_RETENTION_DAYS = '200';
  });
  afterAll(() => {
    if (retention === undefined) delete process.env.JOB_RETENTION_DAYS;
    else process.env.JOB_RETENTION_DAYS = retention;
  });

  it('names an end for every kind of item', () => {
    const kinds = [
      ...itemKeyNames(keys),
      ...itemKeyNames(eventKeys),
      reconcilePassKey.name.replace(/Key$/, ''),
      supplierPaceKey.name.replace(/Key$/, ''),
      ...Object.keys(ENTITY_TAGS),
    ];
    expect(kinds.filter((kind) => !(kind in ITEM_ENDS))).toEqual([]);
    expect(Object.keys(ITEM_ENDS).filter((kind) => !kinds.includes(kind))).toEqual([]);
  });

  it('writes the TTL attribute in the module of every kind that has one', () => {
    for (const [kind, end] of Object.entries(ITEM_ENDS))
      if ('ttl' in end) expect([kind, readFileSync(end.ttl, 'utf8').includes('expiresAt')]).toEqual([kind, true]);
  });

  it('documents every kind kept as long as what it belongs to, with why', () => {
    const doc = readFileSync('docs/performance.md', 'utf8');
    for (const [kind, end] of Object.entries(ITEM_ENDS))
      if ('kept' in end) expect([kind, doc.includes(`\`${kind}\``)]).toEqual([kind, true]);
  });

  it('keeps an audit entry JOB_RETENTION_DAYS after it was written', () => {
    const item = auditEntryItem({
      id: 'aud_1',
      ownerId: 'own_1',
      action: 'sync_job.dead',
      resellerStoreId: 'rst_1',
      resourceType: 'sync_job',
      resourceId: 'sj_1',
      actorId: 'system',
      actor: { type: 'system', id: 'system' },
      metadata: {},
      createdAt: at,
    });
    expect(item.expiresAt).toBe(atSeconds + 200 * DAY);
  });

  it('keeps an unrouted order, its mark and its parts JOB_RETENTION_DAYS after its receipt', () => {
    const record = unroutedOrderItem({
      firstJobId: 'sj_1',
      ownerId: 'own_1',
      resellerStoreId: 'rst_1',
      externalOrderId: '1001',
      receivedAt: at,
      receivedVia: 'webhook',
      unroutedLines: [{ position: 1, reason: 'no_vendor' }],
      cancelledAt: null,
      order: { parts: 2 },
    });
    expect(record[EXPIRES_AT]).toBe(atSeconds + 200 * DAY);
    const end = record[EXPIRES_AT] as number;
    expect(
      unroutedOrderMarkItem({ firstJobId: 'sj_1', resellerStoreId: 'rst_1', receivedAt: at, expiresAt: end }),
    ).toMatchObject({ [EXPIRES_AT]: end });
    expect(orderBodyPartItem('sj_1', 0, Buffer.from('x'), end)).toMatchObject({ [EXPIRES_AT]: end });
    // A routed order's mark and parts are written without one: their end comes when its jobs ended (below).
    expect(unroutedOrderMarkItem({ firstJobId: 'sj_1', resellerStoreId: 'rst_1', receivedAt: at })).not.toHaveProperty(
      EXPIRES_AT,
    );
  });

  it('keeps an ended job JOB_RETENTION_DAYS after its last move, an open one without end', () => {
    expect(expiryOf('completed', at)).toEqual({ [EXPIRES_AT]: atSeconds + 200 * DAY });
    expect(expiryOf('pending', at)).toEqual({});
  });

  it("gives a routed order's mark and parts its jobs' end, once, and nothing else of the partition", async () => {
    const dynamo = mockClient(DynamoDBDocumentClient);
    try {
      const end = atSeconds + 200 * DAY;
      dynamo.on(QueryCommand).resolves({
        Items: [
          { ...keys.syncJob('sj_1'), e: 'J', [EXPIRES_AT]: end },
          { ...keys.unroutedOrderMark('sj_1'), e: 'M' },
          { ...keys.orderBodyPart('sj_1', 0), e: 'B', [EXPIRES_AT]: end },
          { ...keys.orderBodyPart('sj_1', 1), e: 'B' },
        ],
      });
      dynamo.on(UpdateCommand).resolves({});
      expect(await expireOrderItems('sj_1', end)).toBe(2);
      const updates = dynamo.commandCalls(UpdateCommand).map((call) => call.args[0].input);
      expect(updates.map((u) => u.Key)).toEqual([keys.unroutedOrderMark('sj_1'), keys.orderBodyPart('sj_1', 1)]);
      for (const update of updates) {
        expect(Object.values(update.ExpressionAttributeValues ?? {})).toContain(end);
        expect(update.ConditionExpression).toContain('attribute_exists(PK)');
      }
    } finally {
      dynamo.restore();
    }
  });
});
