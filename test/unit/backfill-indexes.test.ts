import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { seededAuditEntry, seededEntry, seededJob } from '../../bench/seed.js';
import { backfillIndexes } from '../../shared/backfill/backfill-indexes.js';
import { indexedItem, indexRepair } from '../../shared/backfill/index-attributes.js';
import type { SyncJobStatus } from '../../shared/domain/orders.js';
import { inFlight, lists } from '../../shared/dynamo/keys.js';
import { auditEntryItem } from '../../shared/entities/audit-entry.js';
import {
  type FulfillmentEntry,
  type IndexChanges,
  indexChanges,
  JOB_INDEX_ATTRIBUTES,
  propagationIndex,
  type SyncJob,
  syncJobIndexEntries,
  syncJobItem,
} from '../../shared/order-flow/order-sync-job.js';
import { conditionOf, removesOf, requiresOf, setsOf } from '../command-meaning.js';
import { dynamo } from './aws-mocks.js';

beforeEach(() => dynamo.reset());

const CREATED = '2026-11-20T10:00:00.000Z';
const job = (status: SyncJobStatus, fields: Partial<SyncJob> = {}) => ({
  ...seededJob({ id: 'sj_1', ownerId: 'owner_a', resellerStoreId: 'rst_1', createdAt: CREATED, status }),
  ...fields,
});

const entry = (status: FulfillmentEntry['status']) => seededEntry(status, CREATED);

const OPEN = inFlight.open.partition('sj_1');
const SORT = inFlight.sortKey('owner_a', CREATED, 'sj_1');
const LISTS = {
  GSI1PK: lists.syncJobs('owner_a').of('sj_1'),
  GSI1SK: `${CREATED}#sj_1`,
  GSI4PK: lists.storeSyncJobs('rst_1').of('sj_1'),
};

/** The index attributes of an item: what the backfill compares. */
const indexPart = (item: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(item).filter(([name]) => JOB_INDEX_ATTRIBUTES.includes(name)));

/** A move's index changes applied to an item as an UpdateItem would: a copy keeps the target without a source. */
const apply = (item: Record<string, unknown>, changes: IndexChanges) => {
  const next: Record<string, unknown> = { ...item, ...changes.set };
  for (const name of changes.remove) delete next[name];
  for (const [target, source] of Object.entries(changes.copy ?? {})) next[target] = item[source] ?? item[target];
  return next;
};

describe('syncJobIndexEntries', () => {
  it('gives an open job its lists and its GSI3 entry among the open jobs, with openPK', () => {
    for (const status of ['pending', 'processing'] as const)
      expect(syncJobIndexEntries(job(status))).toEqual({ ...LISTS, GSI3PK: OPEN, GSI3SK: SORT, openPK: OPEN });
  });

  it('puts a failed job among the failed ones, keeping openPK for the claim, and in its state lists', () => {
    expect(syncJobIndexEntries(job('failed'))).toEqual({
      ...LISTS,
      GSI3PK: inFlight.failed.partition('sj_1'),
      GSI3SK: SORT,
      openPK: OPEN,
      GSI5PK: lists.syncJobsIn('owner_a', 'failed').of('sj_1'),
      GSI6PK: lists.storeSyncJobsIn('rst_1', 'failed').of('sj_1'),
    });
  });

  it('gives a dead job its state lists and no GSI3 entry', () => {
    expect(syncJobIndexEntries(job('dead'))).toEqual({
      ...LISTS,
      GSI5PK: lists.syncJobsIn('owner_a', 'dead').of('sj_1'),
      GSI6PK: lists.storeSyncJobsIn('rst_1', 'dead').of('sj_1'),
    });
  });

  it('gives a completed job its supplier order lookup; the propagating set only while an entry is on its way', () => {
    const lookup = { GSI2PK: 'SRCORDER#sst_seeded00000000000000000000#so-1', GSI2SK: 'SJ#sj_1' };
    expect(syncJobIndexEntries(job('completed'))).toEqual({ ...LISTS, ...lookup });
    for (const status of ['pending', 'failed'] as const) {
      expect(syncJobIndexEntries(job('completed', { fulfillments: { 9001: entry(status) } }))).toEqual({
        ...LISTS,
        ...lookup,
        GSI3PK: inFlight.propagating.partition('sj_1'),
        GSI3SK: SORT,
      });
    }
    for (const status of ['delivered', 'dead'] as const)
      expect(syncJobIndexEntries(job('completed', { fulfillments: { 9001: entry(status) } }))).toEqual({
        ...LISTS,
        ...lookup,
      });
  });

  it('is what the moves give a job created pending, at every step of its life', () => {
    const lives: SyncJobStatus[][] = [
      ['pending', 'processing', 'failed', 'processing', 'completed'],
      ['pending', 'processing', 'failed', 'dead', 'pending', 'processing', 'pending', 'failed', 'completed'],
      ['pending', 'dead', 'pending', 'processing', 'dead'],
    ];
    for (const life of lives) {
      let item = indexPart(syncJobItem(job('pending')));
      for (const [i, status] of life.entries()) {
        if (i > 0) item = apply(item, indexChanges(job(life[i - 1]), status));
        const completion = status === 'completed' ? syncJobIndexEntries(job('completed')) : {};
        const sameState = indexPart({ ...item, GSI2PK: completion.GSI2PK, GSI2SK: completion.GSI2SK });
        expect(syncJobIndexEntries(job(status))).toEqual(sameState);
      }
      // A fulfillment on its way, then delivered: in the propagating set, then out of it.
      if (life.at(-1) === 'completed') {
        const completed = { ...syncJobIndexEntries(job('completed')) };
        const propagating = apply(completed, propagationIndex(job('completed'), true));
        expect(syncJobIndexEntries(job('completed', { fulfillments: { 9001: entry('pending') } }))).toEqual(
          propagating,
        );
        const delivered = apply(propagating, propagationIndex(job('completed'), false));
        expect(syncJobIndexEntries(job('completed', { fulfillments: { 9001: entry('delivered') } }))).toEqual(
          delivered,
        );
      }
    }
  });
});

describe('indexedItem and indexRepair', () => {
  const stripped = (item: Record<string, unknown>, names: string[]) =>
    Object.fromEntries(Object.entries(item).filter(([name]) => !names.includes(name)));

  it('sets what a job written before GSI3 and GSI4 lacks, and nothing else', () => {
    const legacy = stripped(syncJobItem(job('pending')), ['GSI3PK', 'GSI3SK', 'openPK', 'GSI4PK']);
    const indexed = indexedItem(legacy);
    expect(indexed?.kind).toBe('sync_job');
    expect(indexRepair(legacy, indexed?.wanted ?? {})).toEqual({
      set: { GSI3PK: OPEN, GSI3SK: SORT, openPK: OPEN, GSI4PK: LISTS.GSI4PK },
      remove: [],
    });
  });

  it('moves a failed job still among the open ones to the failed set, and removes keys its state has not', () => {
    const old = { ...syncJobItem(job('failed')), GSI3PK: OPEN };
    expect(indexRepair(old, indexedItem(old)?.wanted ?? {})).toEqual({
      set: { GSI3PK: inFlight.failed.partition('sj_1') },
      remove: [],
    });
    const dead = { ...syncJobItem(job('dead')), GSI3PK: OPEN, GSI3SK: SORT };
    expect(indexRepair(dead, indexedItem(dead)?.wanted ?? {})).toEqual({ set: {}, remove: ['GSI3PK', 'GSI3SK'] });
  });

  it('finds nothing to do on an item the current code wrote', () => {
    for (const status of ['pending', 'processing', 'failed', 'dead'] as const) {
      const item = syncJobItem(job(status));
      expect(indexRepair(item, indexedItem(item)?.wanted ?? {})).toBeUndefined();
    }
    const entryItem = auditEntryItem(
      seededAuditEntry(job('dead'), { id: 'aud_1', action: 'sync_job.dead', createdAt: CREATED }),
    );
    expect(indexRepair(entryItem, indexedItem(entryItem)?.wanted ?? {})).toBeUndefined();
  });

  it("gives an audit entry the keys of its filtered lists, as the entry's builder does", () => {
    const full = auditEntryItem(
      seededAuditEntry(job('dead'), { id: 'aud_1', action: 'sync_job.dead', createdAt: CREATED }),
    );
    const legacy = stripped(full, ['GSI4PK', 'GSI5PK', 'GSI6PK', 'GSI7PK']);
    const indexed = indexedItem(legacy);
    expect(indexed?.kind).toBe('audit_entry');
    expect(indexRepair(legacy, indexed?.wanted ?? {})).toEqual({
      set: {
        GSI4PK: 'RST#rst_1#AUD',
        GSI5PK: 'OWNER#owner_a#AUD#sync_job.dead',
        GSI6PK: 'RST#rst_1#AUD#sync_job.dead',
        GSI7PK: 'RES#sj_1#AUD',
      },
      remove: [],
    });
  });

  it('leaves other items alone, and throws for a job it cannot read', () => {
    expect(indexedItem({ PK: 'RST#rst_1', SK: 'RST', id: 'rst_1' })).toBeUndefined();
    expect(indexedItem({ PK: 'SJ#sj_1', SK: 'BODY#1' })).toBeUndefined();
    expect(() => indexedItem({ PK: 'SJ#sj_1', SK: 'SJ', id: 'sj_1', status: 'lost' })).toThrow();
  });
});

describe('backfillIndexes', () => {
  const legacyPending = () => {
    const { GSI3PK: _a, GSI3SK: _b, openPK: _c, GSI4PK: _d, ...rest } = syncJobItem(job('pending'));
    return rest;
  };
  const store = { PK: 'RST#rst_1', SK: 'RST', id: 'rst_1' };
  const right = { ...syncJobItem(job('dead', { id: 'sj_2' })) };

  it('scans every page and writes only index attributes, on condition the job has not moved', async () => {
    dynamo
      .on(ScanCommand)
      .resolvesOnce({ Items: [legacyPending(), store], LastEvaluatedKey: { PK: 'RST#rst_1', SK: 'RST' } })
      .resolvesOnce({ Items: [right] });
    dynamo.on(UpdateCommand).resolves({});
    const pages: number[] = [];
    const summary = await backfillIndexes({ onPage: (sofar) => pages.push(sofar.scanned) });

    expect(summary).toEqual({
      scanned: 3,
      updated: { sync_job: 1, audit_entry: 0 },
      alreadyRight: 1,
      others: 1,
      moved: [],
      unreadable: [],
    });
    expect(pages).toEqual([2, 3]);
    expect(dynamo.commandCalls(ScanCommand)[1].args[0].input).toMatchObject({
      ExclusiveStartKey: { PK: 'RST#rst_1', SK: 'RST' },
      ConsistentRead: true,
    });
    const [update] = dynamo.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(update.Key).toEqual({ PK: 'SJ#sj_1', SK: 'SJ' });
    const written = Object.keys(setsOf(update));
    expect(removesOf(update)).toEqual([]);
    expect([...written].sort()).toEqual(['GSI3PK', 'GSI3SK', 'GSI4PK', 'openPK']);
    expect(conditionOf(update)).toBe(
      [
        'attribute_exists(PK)',
        ...written.map((attribute) => `attribute_not_exists(${attribute})`),
        `status = "pending" AND generation = 1 AND updatedAt = "${CREATED}"`,
      ].join(' AND '),
    );
    expect(Object.entries(requiresOf(update))).toEqual([
      ['status', 'pending'],
      ['generation', 1],
      ['updatedAt', CREATED],
    ]);
  });

  it('conditions a completed job on its fulfillment entries as read', async () => {
    const {
      GSI3PK: _a,
      GSI3SK: _b,
      ...item
    } = {
      ...syncJobItem(job('completed', { fulfillments: { 9001: entry('pending') } })),
    };
    dynamo.on(ScanCommand).resolves({ Items: [item] });
    dynamo.on(UpdateCommand).resolves({});
    await backfillIndexes();
    const [update] = dynamo.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(conditionOf(update)).toContain('size(');
    const mentioned = [conditionOf(update), ...Object.keys(setsOf(update))].join(' ').split(/[^\w]+/);
    expect(mentioned).toEqual(expect.arrayContaining(['fulfillments', '9001', 'GSI2PK', 'GSI3PK']));
    expect(conditionOf(update)).toMatch(/\bfulfillments\.9001\.\w+ = \S+/);
  });

  it('reports an item that moved meanwhile as skipped, and goes on', async () => {
    dynamo.on(ScanCommand).resolves({ Items: [legacyPending(), { ...legacyPending(), PK: 'SJ#sj_3', id: 'sj_3' }] });
    dynamo
      .on(UpdateCommand)
      .rejectsOnce(new ConditionalCheckFailedException({ message: 'moved', $metadata: {} }))
      .resolves({});
    const summary = await backfillIndexes({ concurrency: 1 });
    expect(summary.moved).toEqual([{ PK: 'SJ#sj_1', SK: 'SJ' }]);
    expect(summary.updated.sync_job).toBe(1);
  });

  it('writes nothing with dryRun, and reports what it would write', async () => {
    dynamo.on(ScanCommand).resolves({ Items: [legacyPending(), { PK: 'SJ#sj_9', SK: 'SJ', id: 'sj_9' }] });
    const changes: unknown[] = [];
    const summary = await backfillIndexes({ dryRun: true, onChange: (change) => changes.push(change) });
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
    expect(summary.updated.sync_job).toBe(1);
    expect(summary.unreadable).toEqual([{ key: { PK: 'SJ#sj_9', SK: 'SJ' }, reason: expect.any(String) }]);
    expect(changes).toEqual([
      expect.objectContaining({ key: { PK: 'SJ#sj_1', SK: 'SJ' }, kind: 'sync_job', status: 'pending' }),
    ]);
  });
});
