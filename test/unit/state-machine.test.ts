import { seededJob } from '../../bench/seed.js';
import { syncJobId } from '../../shared/core/ids.js';
import { ENDED_STATUSES, OPEN_STATUSES, SYNC_JOB_STATUSES, type SyncJobStatus } from '../../shared/domain/orders.js';
import { IN_FLIGHT_SHARDS, inFlight } from '../../shared/dynamo/keys.js';
import {
  IllegalMoveError,
  JobUpdate,
  MOVES,
  type MoveName,
  type MoveRule,
  moveUpdate,
} from '../../shared/order-flow/order-repository.js';
import { indexChanges, propagationIndex, syncJobFrom, syncJobItem } from '../../shared/order-flow/order-sync-job.js';
import { conditionOf, meaningOf, removesOf, requiresOf, setsAttribute, setsOf } from '../command-meaning.js';

const job = (status: SyncJobStatus) => ({
  id: 'sj_1',
  ownerId: 'owner_a',
  resellerStoreId: 'rst_1',
  createdAt: '2026-11-21T04:00:00.000Z',
  status,
  generation: 4,
});
const moves = Object.keys(MOVES).filter((m) => m !== 'create') as MoveName[];
const at = '2026-11-21T05:00:00.000Z';

describe('the sync job state machine (as data)', () => {
  it('moves from and to known states only, out of a final state only by a retry or a cancellation', () => {
    const outOfFinal: Record<string, SyncJobStatus[]> = {};
    for (const [name, rule] of Object.entries(MOVES)) {
      expect(SYNC_JOB_STATUSES).toContain(rule.to);
      for (const from of rule.from) expect(SYNC_JOB_STATUSES).toContain(from);
      const fromFinal = (rule.from as readonly SyncJobStatus[]).filter(
        (s) => (s === 'completed' || s === 'dead' || s === 'cancelled') && s !== rule.to,
      );
      if (fromFinal.length) outOfFinal[name] = fromFinal;
    }
    // A dead job may be retried or cancelled; a completed one only cancelled; a cancelled one never moves.
    expect(outOfFinal).toEqual({ retry: ['dead'], cancel: ['dead'], cancelPlaced: ['completed'] });
    expect(Object.values(MOVES).some((rule) => (rule.from as readonly string[]).includes('cancelled'))).toBe(false);
  });

  it('lets every open state reach an end: completed, or dead', () => {
    for (const status of OPEN_STATUSES) {
      const ends = Object.values(MOVES)
        .filter((rule) => (rule.from as readonly string[]).includes(status))
        .map((rule) => rule.to);
      expect(ends).toEqual(expect.arrayContaining(['completed', 'dead']));
    }
  });

  it('gives a new generation to exactly the moves that send a fresh message', () => {
    const sending = Object.entries(MOVES)
      .filter(([, rule]) => rule.newMessage)
      .map(([name]) => name);
    expect(sending.sort()).toEqual(['create', 'defer', 'flagResend', 'release', 'requestCancel', 'resend', 'retry']);
  });

  it('has a creation that starts pending, from nothing', () => {
    expect(MOVES.create).toMatchObject({ from: [], to: 'pending' });
  });

  it('can claim a job that is pending, processing (its worker died) or failed, and nothing else', () => {
    expect([...MOVES.claim.from].sort()).toEqual(['failed', 'pending', 'processing']);
    expect(MOVES.claim.to).toBe('processing');
  });

  it('lets only a manual retry take a failed or dead job back to pending', () => {
    expect(MOVES.retry).toMatchObject({ from: ['failed', 'dead'], to: 'pending' });
  });
});

describe('moveUpdate: every conditional update of a job', () => {
  it('conditions on the generation held and the status read, and sets the target status and updatedAt', () => {
    const update = moveUpdate({ move: 'fail', job: job('processing'), at, set: { errorMessage: 'down' } });
    expect(update.Key).toEqual({ PK: 'SJ#sj_1', SK: 'SJ' });
    expect(conditionOf(update)).toBe('generation = 4 AND status = "processing"');
    expect(requiresOf(update)).toEqual({ generation: 4, status: 'processing' });
    expect(setsOf(update)).toMatchObject({ status: 'failed', updatedAt: at, errorMessage: 'down' });
    expect(update.generation).toBe(4);
  });

  it('types what a move sets against the job: a field the job does not have fails to compile (tsc)', () => {
    // @ts-expect-error: `errorMesage` is no field of SyncJob (a renamed field fails the same way)
    const misspelt = moveUpdate({ move: 'fail', job: job('processing'), at, set: { errorMesage: 'down' } });
    // @ts-expect-error: a field is set to a value of its own type only
    const mistyped = moveUpdate({ move: 'fail', job: job('processing'), at, set: { failedAt: 7 } });
    // The entity modules' composed attributes (index entries) go apart, in `entries`, typed too:
    // @ts-expect-error: an entry is an index key of the job item or a name it keeps beside the record's
    const held = moveUpdate({ move: 'fail', job: job('processing'), at, entries: { listEntry: 'x' } });
    expect(setsOf(misspelt)).toHaveProperty('errorMesage');
    expect(setsOf(mistyped)).toMatchObject({ failedAt: 7 });
    expect(setsOf(held)).toMatchObject({ listEntry: 'x' });
  });

  it('types what a move removes and adds against the job: a renamed field fails to compile (tsc)', () => {
    // @ts-expect-error: `waitUntill` is no attribute of the job item
    const removed = moveUpdate({ move: 'fail', job: job('processing'), at, remove: ['waitUntil', 'waitUntill'] });
    // @ts-expect-error: only a numeric field of the job is increased
    const added = moveUpdate({ move: 'defer', job: job('processing'), at, add: { errorMessage: 1 } });
    expect(removesOf(removed)).toEqual(expect.arrayContaining(['waitUntil', 'waitUntill']));
    expect(setsOf(added)).toHaveProperty('errorMessage');
    // Every other update of the job item names its attributes against the record the same way.
    // @ts-expect-error: `orderEdit` is no attribute of the job item
    const edits = new JobUpdate().setAttributes({ orderEdit: null }).of('sj_1');
    const update = new JobUpdate('f1');
    // @ts-expect-error: `resend` is no field of a fulfillment entry
    const entry = update.remove(update.field('resend')).of('sj_1');
    expect(setsOf(edits)).toHaveProperty('orderEdit');
    expect(entry.UpdateExpression).toBe('REMOVE #fulfillments.#fid.#resend');
    // A loose record names any attribute (its string index): it fails as a renamed field does, given or spread.
    const loose: Record<string, unknown> = { orderEdit: null };
    // @ts-expect-error: a `Record<string, unknown>` is no attribute of the job item
    const given = new JobUpdate().setAttributes(loose).of('sj_1');
    // @ts-expect-error: nor is it spread into the update
    const spread = new JobUpdate().setAttributes({ ...loose }).of('sj_1');
    expect(setsOf(given)).toHaveProperty('orderEdit');
    expect(setsOf(spread)).toHaveProperty('orderEdit');
  });

  it('takes the next generation for a move that sends a fresh message', () => {
    const update = moveUpdate({ move: 'defer', job: job('processing'), at });
    expect(update.generation).toBe(5);
    expect(setsOf(update)).toHaveProperty('generation');
    expect(setsAttribute(update, 'generation')).toBe(5);
  });

  it('refuses a move from a state it does not start from', () => {
    expect(() => moveUpdate({ move: 'complete', job: job('pending'), at })).toThrow(IllegalMoveError);
    expect(() => moveUpdate({ move: 'retry', job: job('completed'), at })).toThrow(IllegalMoveError);
  });

  it('claims a job known only by its message from any of the claimable states, counting the attempt', () => {
    const update = moveUpdate({ move: 'claim', job: { id: 'sj_1', generation: 2 }, at, add: { attempts: 1 } });
    // A held job is never claimed (CONTRACT.md §11): its message, if any, is dropped as stale.
    expect(conditionOf(update)).toBe(
      'attribute_not_exists(hold) AND generation = 2 AND status IN ("pending", "processing", "failed")',
    );
    expect(setsAttribute(update, 'attempts')).toBe('if_not_exists(attempts, 0) + 1');
    // It sets no index key (it does not know them); removing the failed lists' keys needs none.
    // It knows no key value: it copies its open partition back (a failed job waits apart) and
    // removes the failed lists' keys, the same from every state it may start from.
    expect(setsAttribute(update, 'GSI3PK')).toBe('if_not_exists(openPK, GSI3PK)');
    expect(JSON.stringify(meaningOf(update))).not.toContain(inFlight.open.partition('sj_1'));
    expect(removesOf(update)).toEqual(['GSI5PK', 'GSI6PK']);
  });

  it('refuses to move a job known only by its message where the index keys may change', () => {
    // A retry puts a dead job back among the open jobs, but not a failed one (it is there already).
    expect(() => moveUpdate({ move: 'retry', job: { id: 'sj_1', generation: 2 }, at })).toThrow(IllegalMoveError);
  });

  describe('the ended job’s expiry (the table’s TTL, JOB_RETENTION_DAYS)', () => {
    const days = (n: number) => n * 86_400;
    const atSeconds = Date.parse(at) / 1000;
    afterEach(() => {
      delete process.env.JOB_RETENTION_DAYS;
    });

    it('sets expiresAt to the move’s time + the retention on every move that leaves the job ended', () => {
      process.env.JOB_RETENTION_DAYS = '30';
      const ending = moves.filter((name) => ENDED_STATUSES.includes(MOVES[name].to as never));
      expect(ending.sort()).toEqual([
        'cancel',
        'cancelPlaced',
        'complete',
        'declineCancel',
        'found',
        'kill',
        'requestCancel',
      ]);
      for (const name of ending)
        for (const from of MOVES[name].from)
          expect(setsAttribute(moveUpdate({ move: name, job: job(from), at }), 'expiresAt')).toBe(atSeconds + days(30));
    });

    it('is 365 days when the retention is not set', () => {
      const update = moveUpdate({ move: 'kill', job: job('failed'), at, set: { deadAt: at } });
      expect(setsAttribute(update, 'expiresAt')).toBe(atSeconds + days(365));
    });

    it('is removed by a retry of a dead job, and neither set nor removed by the moves of a job at work', () => {
      const retried = moveUpdate({ move: 'retry', job: job('dead'), at });
      expect(removesOf(retried)).toContain('expiresAt');
      expect(setsOf(retried)).not.toHaveProperty('expiresAt');
      for (const name of moves.filter((m) => m !== 'retry' && !ENDED_STATUSES.includes(MOVES[m].to as never)))
        for (const from of MOVES[name].from) {
          const update = moveUpdate({ move: name, job: job(from), at });
          expect(setsOf(update)).not.toHaveProperty('expiresAt');
          expect(removesOf(update)).not.toContain('expiresAt');
        }
    });

    it('keeps a completed job’s completion time as its updatedAt, copied by the first move from completed', () => {
      for (const name of ['requestCancel', 'cancelPlaced', 'declineCancel'] as const)
        expect(setsAttribute(moveUpdate({ move: name, job: job('completed'), at }), 'completedAt')).toBe(
          'if_not_exists(completedAt, updatedAt)',
        );
      expect(setsOf(moveUpdate({ move: 'complete', job: job('processing'), at }))).not.toHaveProperty('completedAt');
      const seeded = seededJob({
        id: 'sj_1',
        ownerId: 'owner_a',
        resellerStoreId: 'rst_1',
        createdAt: at,
        status: 'completed',
      });
      const { completedAt: _dropped, ...item } = syncJobItem({ ...seeded, updatedAt: '2026-11-21T06:00:00.000Z' });
      expect(syncJobFrom(item).completedAt).toBe('2026-11-21T06:00:00.000Z');
      expect(syncJobFrom({ ...item, completedAt: at }).completedAt).toBe(at);
      expect(syncJobFrom({ ...item, status: 'dead' }).completedAt).toBeNull();
    });

    it('is on a job created ended (an order cancelled before it arrived), and not on one created at work', () => {
      process.env.JOB_RETENTION_DAYS = '2';
      const created = seededJob({
        id: 'sj_1',
        ownerId: 'owner_a',
        resellerStoreId: 'rst_1',
        createdAt: at,
        status: 'pending',
      });
      expect(syncJobItem({ ...created, status: 'cancelled', updatedAt: at }).expiresAt).toBe(atSeconds + days(2));
      expect(syncJobItem({ ...created, status: 'pending', updatedAt: at })).not.toHaveProperty('expiresAt');
    });
  });

  it.each(moves)('builds %s from every state it starts from', (name) => {
    for (const from of MOVES[name].from) expect(() => moveUpdate({ move: name, job: job(from), at })).not.toThrow();
  });
});

/** The GSI3 part of a move's index changes (the lists' rules are test/unit/sync-job-indexes.test.ts's). */
const IN_FLIGHT = /^(GSI3PK|GSI3SK|openPK)$/;
const open = (changes: { set: Record<string, string>; remove: string[]; copy?: Record<string, string> }) => ({
  set: Object.fromEntries(Object.entries(changes.set).filter(([name]) => IN_FLIGHT.test(name))),
  remove: changes.remove.filter((name) => IN_FLIGHT.test(name)),
  ...(changes.copy ? { copy: changes.copy } : {}),
});

describe('indexChanges: the open jobs of GSI3', () => {
  it('puts a new job among the open jobs of its id’s shard', () => {
    expect(open(indexChanges({ ...job('pending'), status: null }, 'pending'))).toEqual({
      set: {
        GSI3PK: inFlight.open.partition('sj_1'),
        GSI3SK: 'owner_a#2026-11-21T04:00:00.000Z#sj_1',
        openPK: inFlight.open.partition('sj_1'),
      },
      remove: [],
    });
  });

  it('keeps a pending or processing job where it is: claims and deferrals copy the partition it has', () => {
    for (const from of OPEN_STATUSES)
      for (const to of ['pending', 'processing'] as const)
        expect(open(indexChanges(job(from), to))).toEqual({ set: {}, remove: [], copy: { GSI3PK: 'openPK' } });
  });

  it('moves a failed job apart, in the same shard and order, until its next attempt', () => {
    expect(open(indexChanges(job('processing'), 'failed'))).toEqual({
      set: { GSI3PK: inFlight.failed.partition('sj_1') },
      remove: [],
    });
    expect(inFlight.failed.partition('sj_1')).not.toBe(inFlight.open.partition('sj_1'));
    expect(inFlight.failed.partition('sj_1').split('#')[1]).toBe(inFlight.open.partition('sj_1').split('#')[1]);
  });

  it('removes a job that ends, and puts back a dead job that is retried', () => {
    const ended = { set: {}, remove: ['GSI3PK', 'GSI3SK', 'openPK'] };
    expect(open(indexChanges(job('processing'), 'completed'))).toEqual(ended);
    expect(open(indexChanges(job('failed'), 'dead'))).toEqual(ended);
    expect(Object.keys(open(indexChanges(job('dead'), 'pending')).set)).toEqual(['GSI3PK', 'GSI3SK', 'openPK']);
  });

  it('keeps a job in one shard, and spreads one owner’s jobs over every shard (no hot key)', () => {
    expect(inFlight.open.partition('sj_1')).toBe(inFlight.open.partition('sj_1'));
    // One owner's orders of a sale: each shard takes about its share (100 of 1,600).
    const ids = Array.from({ length: 1600 }, (_, i) => syncJobId('rst_1', `order_${i}`, 0));
    const counts = new Map<string, number>();
    for (const id of ids) counts.set(inFlight.open.partition(id), (counts.get(inFlight.open.partition(id)) ?? 0) + 1);
    for (const n of counts.values()) expect(n).toBeGreaterThan(60);
    for (const n of counts.values()) expect(n).toBeLessThan(140);
    const shards = new Set(counts.keys());
    expect(shards.size).toBe(IN_FLIGHT_SHARDS);
    expect([...shards].sort()).toEqual(inFlight.open.allPartitions().sort());
  });

  it('keeps completed jobs with a fulfillment on its way apart from the open jobs', () => {
    const { set } = propagationIndex(job('completed'), true);
    expect(set.GSI3PK).toBe(inFlight.propagating.partition('sj_1'));
    expect(set.GSI3PK).not.toBe(inFlight.open.partition('sj_1'));
    expect(propagationIndex(job('completed'), false)).toEqual({ set: {}, remove: ['GSI3PK', 'GSI3SK'] });
  });
});

describe('follow-ups, declared beside the moves', () => {
  it('follows every move that places a job (into completed, from a state before it) by the same follow-ups', () => {
    const rules: [string, MoveRule][] = Object.entries(MOVES);
    const placing = rules.filter(
      ([, rule]) => rule.to === 'completed' && !(rule.from as readonly string[]).includes('completed'),
    );
    expect(placing.map(([name]) => name).sort()).toEqual(['complete', 'found']);
    for (const [, rule] of placing) expect(rule.after).toEqual(['releaseKeptFulfillments', 'requestTag']);
  });

  it('declares none for a move that does not place the job', () => {
    const rules: [string, MoveRule][] = Object.entries(MOVES);
    const others = rules.filter(([, rule]) => rule.to !== 'completed' || rule.from.includes('completed'));
    expect(others.filter(([, rule]) => rule.after !== undefined).map(([name]) => name)).toEqual([]);
  });
});
