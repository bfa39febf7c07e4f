import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { BatchGetCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { seededJob } from '../../bench/seed.js';
import { IN_FLIGHT_SHARDS, INDEX_KEYS } from '../../shared/dynamo/keys.js';
import { type ReconcilePass, reconcilePassFrom, reconcilePassItem } from '../../shared/entities/reconcile-pass.js';
import { syncJobItem, syncJobKey } from '../../shared/order-flow/order-sync-job.js';
import { reconcile } from '../../shared/order-flow/placing-reconciler.js';
import { requiring } from '../command-meaning.js';
import { dynamo, sqs } from './aws-mocks.js';
import { jobFields } from './job-fixtures.js';

const deps = { cipher: { encrypt: jest.fn(), decrypt: jest.fn() }, platforms: jest.fn() } as never;

/** A pending job that has not moved for an hour: past any lease, its message presumed lost. */
const stalled = (id: string) => ({
  ...syncJobKey(id),
  id,
  ...jobFields(),
  createdAt: new Date(Date.now() - 3_600_000).toISOString(),
  updatedAt: new Date(Date.now() - 3_600_000).toISOString(),
});

describe('the reconciler', () => {
  beforeEach(() => {
    dynamo.reset();
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({});
    // No pass under way: every run reads each partition from its head.
    dynamo.on(GetCommand).resolves({});
  });

  it('goes on with a shard’s later pages when one job fails, then fails so the error alarm tells', async () => {
    const [broken, fine] = [stalled('sj_broken'), stalled('sj_fine')];
    const key = ({ PK, SK }: { PK: string; SK: string }) => ({ PK, SK });
    dynamo
      .on(QueryCommand)
      .resolves({ Items: [] })
      .on(QueryCommand, requiring({ GSI3PK: 'OPEN#0' }))
      .resolvesOnce({ Items: [key(broken)], LastEvaluatedKey: key(broken) })
      .resolvesOnce({ Items: [key(fine)] });
    dynamo.on(BatchGetCommand).callsFake((input) => {
      const [table] = Object.keys(input.RequestItems);
      const wanted = input.RequestItems[table].Keys.map((k: { PK: string }) => k.PK);
      return { Responses: { [table]: [broken, fine].filter((job) => wanted.includes(job.PK)) } };
    });
    dynamo
      .on(UpdateCommand)
      .callsFake((input) => ({ Attributes: { ...fine, generation: 2, resends: 1, ...input.Key } }))
      .on(UpdateCommand, { Key: { PK: 'SJ#sj_broken' } })
      .rejects(Object.assign(new Error('throughput exceeded'), { name: 'ProvisionedThroughputExceededException' }));

    await expect(reconcile(deps, 60)).rejects.toThrow('the reconciler could not handle 1 job(s)');

    const sent = sqs.commandCalls(SendMessageCommand).map((call) => JSON.parse(call.args[0].input.MessageBody!));
    expect(sent).toEqual([expect.objectContaining({ jobId: 'sj_fine', generation: 2, trigger: 'reconciler' })]);
  });

  it('answers its report when every job ended', async () => {
    dynamo.on(QueryCommand).resolves({ Items: [] });

    await expect(reconcile(deps, 60)).resolves.toMatchObject({ inFlight: 0, resent: 0, errors: 0 });
  });
  describe('under a time budget', () => {
    const { pk: GSI3PK, sk: GSI3SK } = INDEX_KEYS.inFlight;
    /** The table as the fakes below keep it: jobs by PK, and the pass item. */
    let table: Map<string, Record<string, any>>;
    let pass: Record<string, unknown> | undefined;
    /** Queries of the current run, with where each began. */
    let queries: { pk: string; start?: Record<string, unknown> }[];

    /** 300 pending jobs of three owners, stalled an hour ago, built by the entity's own `syncJobItem`. */
    const seed = () => {
      const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
      table = new Map();
      for (let i = 0; i < 300; i++) {
        const id = `sj_${String(i).padStart(26, '0')}`;
        const job = seededJob({
          id,
          ownerId: `owner_${i % 3}`,
          resellerStoreId: 'rst_1',
          createdAt: hourAgo,
          status: 'pending',
        });
        const item = syncJobItem(job);
        table.set(String(item.PK), item);
      }
    };

    /** GSI3 as DynamoDB pages it: one partition, ordered by its sort key, `Limit` entries after the start key. */
    const query = (input: any) => {
      const pk = input.ExpressionAttributeValues[':pk'];
      const start = input.ExclusiveStartKey;
      queries.push({ pk, start });
      const entries = [...table.values()]
        .filter((item) => item[GSI3PK] === pk && (!start || item[GSI3SK] > start[GSI3SK]))
        .sort((a, b) => a[GSI3SK].localeCompare(b[GSI3SK]));
      const page = entries.slice(0, input.Limit);
      const keysOf = (item: any) => ({ PK: item.PK, SK: item.SK, [GSI3PK]: item[GSI3PK], [GSI3SK]: item[GSI3SK] });
      const more = entries.length > input.Limit;
      return { Items: page.map(keysOf), ...(more ? { LastEvaluatedKey: keysOf(page.at(-1)) } : {}) };
    };

    beforeEach(() => {
      seed();
      pass = undefined;
      dynamo.on(GetCommand).callsFake(() => ({ Item: pass && structuredClone(pass) }));
      dynamo.on(PutCommand).callsFake((input) => {
        pass = structuredClone(input.Item);
        return {};
      });
      dynamo.on(QueryCommand).callsFake(query);
      dynamo.on(BatchGetCommand).callsFake((input) => {
        const [name] = Object.keys(input.RequestItems);
        const wanted = input.RequestItems[name].Keys.map((k: { PK: string }) => table.get(k.PK));
        return { Responses: { [name]: wanted.filter(Boolean) } };
      });
      // The re-send's conditional update, as DynamoDB would answer it: the job moved, now.
      dynamo.on(UpdateCommand).callsFake((input) => {
        const job = table.get(input.Key.PK)!;
        const moved = { ...job, generation: job.generation + 1, resends: 1, updatedAt: new Date().toISOString() };
        table.set(input.Key.PK, moved);
        return { Attributes: moved };
      });
    });

    /** A run that may read `pages` pages of 10 keys; the jobs of a page read past them wait for the next run. */
    const runWithBudget = (pages: number) => {
      queries = [];
      const remainingMs = () => (pages - queries.length) * 1000;
      return reconcile(deps, 60, { remainingMs, marginMs: 1, pageKeys: 10 });
    };

    const messagedJobs = () =>
      sqs.commandCalls(SendMessageCommand).map((call) => JSON.parse(call.args[0].input.MessageBody!).jobId);

    it('goes on where the run before stopped, and reaches every stalled job once within a few runs', async () => {
      const reports = [await runWithBudget(14)];
      const kept = structuredClone(pass) as { partitions: Record<string, { after: Record<string, unknown> }> };
      expect(reports[0]).toMatchObject({ passComplete: false, passRuns: 1 });
      expect(reports[0].resent).toBeGreaterThan(0);
      expect(reports[0].resent).toBeLessThan(300);

      reports.push(await runWithBudget(14));
      // Each partition the first run left half read, the second begins at its mark, not at its head.
      const halfRead = Object.entries(kept.partitions).filter(([, mark]) => typeof mark === 'object');
      expect(halfRead.length).toBeGreaterThan(0);
      for (const [pk, mark] of halfRead) expect(queries.find((q) => q.pk === pk)?.start).toEqual(mark.after);

      while (!reports.at(-1)!.passComplete && reports.length < 20) reports.push(await runWithBudget(14));
      expect(reports.at(-1)).toMatchObject({ passComplete: true, passRuns: reports.length });
      expect(reports.length).toBeGreaterThan(2);
      const messaged = messagedJobs();
      expect(new Set(messaged).size).toBe(300);
      expect(messaged).toHaveLength(300);
      expect(reports.reduce((sum, r) => sum + r.resent, 0)).toBe(300);
    });

    it('starts a new pass at every partition’s head once a pass is done', async () => {
      await expect(runWithBudget(1_000)).resolves.toMatchObject({ passComplete: true, passRuns: 1, resent: 300 });
      // Done in the run that began it: nothing to keep.
      expect(dynamo.commandCalls(PutCommand)).toHaveLength(0);

      await expect(runWithBudget(1_000)).resolves.toMatchObject({ passComplete: true, passRuns: 1, inFlight: 300 });
      expect(queries.filter((q) => q.start === undefined)).toHaveLength(3 * IN_FLIGHT_SHARDS);
    });

    it('reads a pass item as kept, and a mark it cannot read as a partition to read from its head', () => {
      const after = { PK: 'SJ#sj_1', SK: 'SJ', [GSI3PK]: 'OPEN#1', [GSI3SK]: 'owner_1#2026-01-01T00:00:00.000Z#sj_1' };
      const kept: ReconcilePass = {
        startedAt: '2026-01-01T00:00:00.000Z',
        runs: 2,
        partitions: { 'OPEN#1': { after }, 'FAILED#0': 'done' },
      };
      expect(reconcilePassFrom(reconcilePassItem(kept))).toEqual(kept);
      const item = { ...reconcilePassItem(kept), partitions: { 'OPEN#1': { after }, 'OPEN#2': 'half' } };
      expect(reconcilePassFrom(item).partitions).toEqual({ 'OPEN#1': { after } });
    });
  });
});
