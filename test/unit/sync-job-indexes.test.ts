import { seededJob } from '../../bench/seed.js';
import { SYNC_JOB_STATUSES, type SyncJobStatus } from '../../shared/domain/orders.js';
import { LIST_SHARDS, lists } from '../../shared/dynamo/keys.js';
import { type IndexedJob, indexChanges, syncJobItem } from '../../shared/order-flow/order-sync-job.js';

const job = (status: SyncJobStatus | null): IndexedJob => ({
  id: 'sj_1',
  ownerId: 'owner_a',
  resellerStoreId: 'rst_1',
  createdAt: '2026-11-20T10:00:00.000Z',
  status,
});

/** The lists' part of a move's index changes (GSI3's rules are test/unit/state-machine.test.ts's). */
const LISTS = /^GSI[456]PK$/;
const listed = (changes: { set: Record<string, string>; remove: string[] }) => ({
  set: Object.fromEntries(Object.entries(changes.set).filter(([name]) => LISTS.test(name))),
  remove: changes.remove.filter((name) => LISTS.test(name)),
});

// 'sj_1' is in shard 12 of every sharded list (keys.ts LIST_SHARDS): `<list>#12`.
describe('sync job indexes', () => {
  it('spreads one owner’s jobs over the shards of its lists, shard 0 keeping the unsharded name', () => {
    const list = lists.syncJobs('owner_a');
    expect(list.all()).toHaveLength(LIST_SHARDS);
    expect(list.all()[0]).toBe('OWNER#owner_a#SJ');
    expect(list.all().slice(1)).toEqual(Array.from({ length: LIST_SHARDS - 1 }, (_, n) => `OWNER#owner_a#SJ#${n + 1}`));
    const ids = Array.from({ length: 3200 }, (_, i) => `sj_${i}`);
    const perShard = new Map<string, number>();
    for (const id of ids) perShard.set(list.of(id), (perShard.get(list.of(id)) ?? 0) + 1);
    expect([...perShard.keys()].sort()).toEqual([...list.all()].sort());
    // 10,000 job writes a second for one owner: each shard's share stays under 1,000 a second.
    for (const n of perShard.values()) expect((n / ids.length) * 10_000).toBeLessThan(1_000);
  });

  it('puts a new job in its store list and in no state list', () => {
    expect(listed(indexChanges(job(null), 'pending'))).toEqual({ set: { GSI4PK: 'RST#rst_1#SJ#12' }, remove: [] });
  });

  it.each(['failed', 'dead'] as const)('puts a %s job in its owner and store lists of that state', (to) => {
    for (const from of ['processing', 'pending', 'failed'] as const) {
      expect(listed(indexChanges(job(from), to))).toEqual({
        set: { GSI5PK: `OWNER#owner_a#SJ#${to}#12`, GSI6PK: `RST#rst_1#SJ#${to}#12` },
        remove: [],
      });
    }
  });

  it.each(['pending', 'processing', 'completed'] as const)(
    'takes a job moving to %s out of the state lists, the same from every state (moves made unread)',
    (to) => {
      for (const from of SYNC_JOB_STATUSES) {
        expect(listed(indexChanges(job(from), to))).toEqual({ set: {}, remove: ['GSI5PK', 'GSI6PK'] });
      }
    },
  );

  it('never changes a list key a job keeps for life, so the happy path writes no index beyond creation', () => {
    const moves: [SyncJobStatus, SyncJobStatus][] = [
      ['pending', 'processing'],
      ['processing', 'completed'],
    ];
    for (const [from, to] of moves) expect(listed(indexChanges(job(from), to)).set).toEqual({});
  });

  it('writes a seeded failed job with the index keys the move to failed would have given it', () => {
    const item = syncJobItem(
      seededJob({
        id: 'sj_1',
        ownerId: 'owner_a',
        resellerStoreId: 'rst_1',
        createdAt: job(null).createdAt,
        status: 'failed',
      }),
    );
    expect(item).toMatchObject({
      GSI1PK: 'OWNER#owner_a#SJ#12',
      GSI1SK: '2026-11-20T10:00:00.000Z#sj_1',
      GSI4PK: 'RST#rst_1#SJ#12',
      GSI5PK: 'OWNER#owner_a#SJ#failed#12',
      GSI6PK: 'RST#rst_1#SJ#failed#12',
    });
    expect(Object.values(item)).not.toContain(null);
  });
});
