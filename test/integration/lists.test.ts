import { countByOperation, recordRoundTrips } from '../../bench/round-trips.js';
import { seededAuditEntry, seededJob, writeItems } from '../../bench/seed.js';
import type { SdkCall } from '../../lib/local/protocol.js';
import { newId } from '../../shared/core/ids.js';
import { SYNC_JOB_STATUSES, type SyncJobStatus } from '../../shared/domain/orders.js';
import { LIST_SHARDS } from '../../shared/dynamo/keys.js';
import {
  ACTIONS_LISTED_APART,
  AUDIT_ACTIONS,
  type AuditEntry,
  auditEntryItem,
} from '../../shared/entities/audit-entry.js';
import { type SyncJob, syncJobItem } from '../../shared/order-flow/order-sync-job.js';
import { resellerStoreBody, sourceStoreBody, startService, type TestService } from './support.js';

/**
 * Every list and filter combination of SPEC 4.6, 4.7 and CONTRACT.md §2 and §6, read through the
 * list functions of shared/ in this process (each page's DynamoDB requests counted with an SDK
 * middleware on the shared client) and through the API, whose list functions run in execution
 * environments of their own (their requests counted with the runtime's `onSdkCall`): order,
 * cursors across pages, items sharing a timestamp, jobs changing state while someone pages.
 */

jest.setTimeout(120_000);

type Page<T> = { data: T[]; hasMore: boolean };
type Lists = {
  syncJobs: typeof import('../../shared/order-flow/reading.js');
  moves: typeof import('../../shared/order-flow/order-job-moves.js');
  audit: typeof import('../../shared/entities/audit-entry.js');
  resellerStores: typeof import('../../shared/stores/stores.js');
  sourceStores: typeof import('../../shared/stores/stores.js');
};

let service: TestService;
let lists: Lists;
let recorder: ReturnType<typeof recordRoundTrips>;
/** The DynamoDB requests of the API's functions, as the local runtime reports them. */
const sdkCalls: SdkCall[] = [];

const OWNER = 'owner_a';
const OTHER = 'owner_b';
const BIG = newId('rst');
const SMALL = newId('rst');
const FOREIGN = newId('rst');

/** Newest first by (createdAt, id), as SPEC 8.1 orders every list. */
const newestFirst = <T extends { createdAt: string; id: string }>(items: T[]) =>
  [...items].sort((a, b) =>
    a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1,
  );

/** The ids, newest first, of the items that have each field `filters` names (an undefined filter is no filter). */
const idsMatching = <T extends { createdAt: string; id: string }>(
  items: T[],
  filters: Partial<Record<keyof T, unknown>>,
) =>
  newestFirst(
    items.filter((item) =>
      (Object.entries(filters) as [keyof T, unknown][]).every(
        ([field, value]) => value === undefined || item[field] === value,
      ),
    ),
  ).map((item) => item.id);

/** Six timestamps, each shared by many items, so every page boundary falls inside a tie. */
const at = (n: number) => `2026-11-2${Math.floor(n / 12) % 6}T10:00:00.000Z`;

const STATUS_CYCLE: SyncJobStatus[] = [
  'completed',
  'completed',
  'failed',
  'completed',
  'dead',
  'completed',
  'pending',
  'completed',
  'processing',
  'completed',
];

/**
 * 72 jobs, newest first in this order: ids are random, so states and stores are dealt out after
 * sorting, and between two completed jobs there is never more than one in another state, as on
 * a real list (jobs in flight, and the few that failed or died, among a history of completed ones).
 */
const jobs: SyncJob[] = newestFirst(
  Array.from({ length: 72 }, (_, n) => ({ id: newId('sj'), createdAt: at(71 - n) })),
).map((slot, n) =>
  seededJob({
    ...slot,
    ownerId: OWNER,
    resellerStoreId: n % 3 === 0 ? SMALL : BIG,
    status: STATUS_CYCLE[n % STATUS_CYCLE.length],
  }),
);
const foreignJobs: SyncJob[] = SYNC_JOB_STATUSES.map((status, n) =>
  seededJob({ id: newId('sj'), ownerId: OTHER, resellerStoreId: FOREIGN, createdAt: at(n), status }),
);

/** Entries about eight of the jobs, alternating dead and retried, sharing timestamps like the jobs. */
const entries: AuditEntry[] = Array.from({ length: 40 }, (_, n) =>
  seededAuditEntry(jobs[(n % 8) * 3 + (n % 2)], {
    id: newId('aud'),
    action: AUDIT_ACTIONS[n % 2 === 0 ? 1 : 0],
    createdAt: at(n),
  }),
);
const foreignEntries: AuditEntry[] = foreignJobs.map((job, n) =>
  seededAuditEntry(job, { id: newId('aud'), action: 'sync_job.dead', createdAt: at(n) }),
);

beforeAll(async () => {
  service = await startService({
    simulator: false,
    onSdkCall: (call) => {
      if (call.service === 'DynamoDB') sdkCalls.push(call);
    },
  });
  lists = {
    syncJobs: await import('../../shared/order-flow/reading.js'),
    moves: await import('../../shared/order-flow/order-job-moves.js'),
    audit: await import('../../shared/entities/audit-entry.js'),
    resellerStores: await import('../../shared/stores/stores.js'),
    sourceStores: await import('../../shared/stores/stores.js'),
  };
  recorder = recordRoundTrips((await import('../../shared/dynamo/table.js')).dynamo);
  await writeItems(service.doc, service.tableName, [
    ...[...jobs, ...foreignJobs].map(syncJobItem),
    ...[...entries, ...foreignEntries].map(auditEntryItem),
  ]);
}, 90_000);

afterAll(() => service?.stop());

/**
 * Reads a list to its end, page by page, and checks each page's requests: at most one cursor
 * GetItem (none on the first page), one Query per partition of the list (side by side: every
 * shard of a sharded list, keys.ts LIST_SHARDS), one BatchGetItem; and never an empty page that
 * says more follow.
 */
const walk = async <T extends { id: string }>(
  page: (limit: number, startingAfter: string | undefined) => Promise<Page<T>>,
  limit: number,
  queries = 1,
) => {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 100; n++) {
    const { result, trips } = await recorder.during(() => page(limit, cursor));
    const counts = countByOperation(trips);
    expect(counts.GetItem ?? 0).toBe(cursor === undefined ? 0 : 1);
    expect(counts.Query).toBe(queries);
    expect(counts.BatchGetItem ?? 0).toBeLessThanOrEqual(1);
    expect(trips).toHaveLength((counts.GetItem ?? 0) + queries + (counts.BatchGetItem ?? 0));
    expect(result.data.length).toBeLessThanOrEqual(limit);
    ids.push(...result.data.map((item) => item.id));
    if (!result.hasMore) return ids;
    expect(result.data.length).toBeGreaterThan(0);
    cursor = result.data.at(-1)?.id;
  }
  throw new Error('the list did not end');
};

const LIST_FUNCTIONS: Record<string, string> = { '/v1/sync_jobs': 'ListSyncJobs', '/v1/audit_log': 'ListAuditLog' };

/**
 * The same list through the API, following `has_more` and the last id, with the list function's
 * DynamoDB requests per page held to the same bound. A function reports its calls before it
 * answers (one message port, in order), so they are all in by the time the response is.
 */
const walkApi = async (path: string, query: Record<string, string | undefined>, limit: number, queries = 1) => {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 100; n++) {
    const params = new URLSearchParams({ limit: String(limit) });
    for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, value);
    if (cursor) params.set('starting_after', cursor);
    sdkCalls.length = 0;
    const res = await service.api(OWNER).get(`${path}?${params}`);
    expect(res.status).toBe(200);
    const calls = sdkCalls.filter((call) => call.functionName === LIST_FUNCTIONS[path]);
    const counts = countBy(calls.map((call) => call.command));
    expect(counts).toEqual({
      ...(cursor === undefined ? {} : { GetItem: 1 }),
      Query: queries,
      ...(counts.BatchGetItem ? { BatchGetItem: 1 } : {}),
    });
    ids.push(...res.body.data.map((item: { id: string }) => item.id));
    if (!res.body.has_more) return ids;
    cursor = res.body.data.at(-1).id;
  }
  throw new Error('the list did not end');
};

const countBy = (names: string[]) => {
  const counts: Record<string, number> = {};
  for (const name of names) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
};

const statuses: (SyncJobStatus | undefined)[] = [undefined, ...SYNC_JOB_STATUSES];
const stores = [undefined, BIG, SMALL];
const jobCombos = statuses.flatMap((status) => stores.map((resellerStoreId) => ({ status, resellerStoreId })));

describe('sync job lists: every filter combination', () => {
  const expected = (f: { status?: SyncJobStatus; resellerStoreId?: string }) =>
    idsMatching(jobs, { status: f.status, resellerStoreId: f.resellerStoreId });

  it.each(jobCombos)(
    'status $status, store $resellerStoreId: pages of 3 steps, every shard queried',
    async (filters) => {
      for (const limit of [1, 4, 100]) {
        const page = (l: number, after?: string) => lists.syncJobs.listSyncJobs({ ownerId: OWNER }, l, after, filters);
        const ids = await walk(page, limit, LIST_SHARDS);
        expect(ids).toEqual(expected(filters));
      }
    },
  );

  it.each(jobCombos)('status $status, store $resellerStoreId: the same answer through the API', async (filters) => {
    const query = { status: filters.status, reseller_store_id: filters.resellerStoreId };
    expect(await walkApi('/v1/sync_jobs', query, 5, LIST_SHARDS)).toEqual(expected(filters));
  });

  it("answers an empty list for another owner's store, without reading it", async () => {
    for (const status of statuses) {
      const { result } = await recorder.during(() =>
        lists.syncJobs.listSyncJobs({ ownerId: OWNER }, 20, undefined, { status, resellerStoreId: FOREIGN }),
      );
      expect(result).toEqual({ data: [], hasMore: false });
    }
    const res = await service.api(OWNER).get(`/v1/sync_jobs?reseller_store_id=${FOREIGN}`);
    expect(res.body).toMatchObject({ data: [], has_more: false });
  });

  it('takes any job of the owner as a cursor of a status list, and only the store its own', async () => {
    const cursor = newestFirst(jobs).find((j) => j.status === 'completed' && j.resellerStoreId === SMALL) as SyncJob;
    const after = await lists.syncJobs.listSyncJobs({ ownerId: OWNER }, 100, cursor.id, { status: 'dead' });
    expect(after.data.map((j) => j.id)).toEqual(
      expected({ status: 'dead' }).filter((id) => {
        const job = jobs.find((j) => j.id === id) as SyncJob;
        return job.createdAt < cursor.createdAt || (job.createdAt === cursor.createdAt && job.id < cursor.id);
      }),
    );
    const res = await service.api(OWNER).get(`/v1/sync_jobs?reseller_store_id=${BIG}&starting_after=${cursor.id}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
    const foreign = await service.api(OWNER).get(`/v1/sync_jobs?status=dead&starting_after=${foreignJobs[4].id}`);
    expect(foreign.body.error).toMatchObject({ code: 'invalid_cursor' });
  });
});

describe('audit log lists: every filter combination', () => {
  const actions = [undefined, ...AUDIT_ACTIONS];
  const resources = [undefined, entries[0].resourceId, entries[5].resourceId, foreignJobs[0].id];
  const combos = actions.flatMap((action) =>
    stores.flatMap((resellerStoreId) =>
      resources.flatMap((resourceId) =>
        [undefined, 'sync_job' as const].map((resourceType) => ({ action, resellerStoreId, resourceId, resourceType })),
      ),
    ),
  );
  const expected = (f: (typeof combos)[number]) =>
    idsMatching(entries, { action: f.action, resellerStoreId: f.resellerStoreId, resourceId: f.resourceId });

  it.each(combos)(
    'action $action, store $resellerStoreId, resource $resourceId, type $resourceType: a Query a partition',
    async (filters) => {
      // Unfiltered by action or resource, the list merges the actions listed apart (issue 42's budget).
      const queries =
        filters.action === undefined && filters.resourceId === undefined ? 1 + ACTIONS_LISTED_APART.length : 1;
      for (const limit of [2, 100]) {
        const owner = { ownerId: OWNER };
        const ids = await walk((l, after) => lists.audit.listAuditEntries(owner, l, after, filters), limit, queries);
        expect(ids).toEqual(expected(filters));
      }
    },
  );

  it.each(combos.filter((c) => c.resourceType === undefined))(
    'action $action, store $resellerStoreId, resource $resourceId: the same answer through the API',
    async (f) => {
      const query = { action: f.action, reseller_store_id: f.resellerStoreId, resource_id: f.resourceId };
      const queries = f.action === undefined && f.resourceId === undefined ? 1 + ACTIONS_LISTED_APART.length : 1;
      expect(await walkApi('/v1/audit_log', query, 3, queries)).toEqual(expected(f));
    },
  );

  it('refuses as a cursor an entry that was never in the filtered list', async () => {
    const retried = entries.find((e) => e.action === 'sync_job.retried') as AuditEntry;
    const res = await service.api(OWNER).get(`/v1/audit_log?action=sync_job.dead&starting_after=${retried.id}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
  });
});

describe('lists while jobs change state', () => {
  const STORE = newId('rst');
  const OWNER_MOVING = 'owner_moving';
  // Ten failed jobs, two at each timestamp, and two processing jobs: one newer than all, one older.
  const failed = Array.from({ length: 10 }, (_, n) =>
    seededJob({
      id: newId('sj'),
      ownerId: OWNER_MOVING,
      resellerStoreId: STORE,
      createdAt: `2026-11-10T10:00:0${Math.floor(n / 2)}.000Z`,
      status: 'failed',
    }),
  );
  const newer = seededJob({
    id: newId('sj'),
    ownerId: OWNER_MOVING,
    resellerStoreId: STORE,
    createdAt: '2026-11-10T11:00:00.000Z',
    status: 'processing',
  });
  const older = seededJob({
    id: newId('sj'),
    ownerId: OWNER_MOVING,
    resellerStoreId: STORE,
    createdAt: '2026-11-10T09:00:00.000Z',
    status: 'processing',
  });

  beforeAll(() => writeItems(service.doc, service.tableName, [...failed, newer, older].map(syncJobItem)));

  it.each([{}, { resellerStoreId: STORE }])(
    'keeps every job that stays failed exactly once, and a cursor that left the state marks its place (%o)',
    async (scope) => {
      const { listSyncJobs } = lists.syncJobs;
      const { claimJob, failJob } = lists.moves;
      const attempt = {
        trigger: 'redelivery',
        outcome: 'failed',
        platformStatus: 503,
        errorMessage: 'supplier answered 503',
        startedAt: new Date().toISOString(),
      } as const;
      const filters = { status: 'failed' as const, ...scope };
      const order = newestFirst(failed).map((j) => j.id);
      const page = async (after?: string) => {
        const owner = { ownerId: OWNER_MOVING };
        const { result, trips } = await recorder.during(() => listSyncJobs(owner, 3, after, filters));
        // A cursor's GetItem, a Query per shard, one BatchGet.
        expect(trips.length).toBeLessThanOrEqual(2 + LIST_SHARDS);
        return result;
      };

      const first = await page();
      expect(first.data.map((j) => j.id)).toEqual(order.slice(0, 3));
      // The cursor job and one job of the next page are claimed again; a newer and an older job fail.
      const moved = [order[2], order[4]];
      for (const id of moved) expect(await claimJob({ jobId: id, generation: 1 })).toBeDefined();
      const claimedNewer = await claimJob({ jobId: newer.id, generation: 1 });
      const claimedOlder = await claimJob({ jobId: older.id, generation: 1 });
      await failJob(claimedNewer as SyncJob, 'supplier answered 503', 60, attempt);
      await failJob(claimedOlder as SyncJob, 'supplier answered 503', 60, attempt);

      const seen = [...first.data.map((j) => j.id)];
      let cursor = first.data.at(-1)?.id;
      for (let n = 0; n < 10 && cursor; n++) {
        const next = await page(cursor);
        seen.push(...next.data.map((j) => j.id));
        cursor = next.hasMore ? next.data.at(-1)?.id : undefined;
      }
      expect(seen).toEqual([...order.filter((id) => id !== order[4]), older.id]);
      expect(seen).not.toContain(newer.id);

      // Back where they were, for the next scope.
      for (const job of [...failed.filter((j) => moved.includes(j.id)), newer, older]) {
        await writeItems(service.doc, service.tableName, [syncJobItem(job)]);
      }
    },
  );
});

describe('store lists', () => {
  it('pages reseller and source stores in 3 round trips at most', async () => {
    const api = service.api(OWNER);
    const created: string[] = [];
    for (let n = 0; n < 5; n++) created.push((await api.post('/v1/reseller_stores', resellerStoreBody())).body.id);
    const parent = created[0];
    const sources: string[] = [];
    for (let n = 0; n < 5; n++) {
      const res = await api.post(
        `/v1/reseller_stores/${parent}/source_stores`,
        sourceStoreBody({ vendorTag: `V${n}` }),
      );
      expect(res.status).toBe(201);
      sources.push(res.body.id);
    }
    const owner = { ownerId: OWNER };
    const resellers = await walk((l, after) => lists.resellerStores.listResellerStores(owner, l, after), 2);
    expect(resellers).toEqual([...created].reverse());
    // Without a cursor the reseller store is read to check it is the caller's; with one, the cursor proves it.
    const { trips } = await recorder.during(() => lists.sourceStores.listSourceStores(owner, parent, 2));
    expect(countByOperation(trips)).toEqual({ GetItem: 1, Query: 1, BatchGetItem: 1 });
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const { result, trips: pageTrips } = await recorder.during(() =>
        lists.sourceStores.listSourceStores(owner, parent, 2, cursor),
      );
      expect(countByOperation(pageTrips)).toEqual({ GetItem: 1, Query: 1, BatchGetItem: 1 });
      ids.push(...result.data.map((s) => s.id));
      cursor = result.hasMore ? result.data.at(-1)?.id : undefined;
    } while (cursor);
    expect(ids).toEqual([...sources].reverse());
  });
});

describe('sharded lists (keys.ts LIST_SHARDS)', () => {
  const OWNER_SHARDED = 'owner_sharded';
  const STORE = newId('rst');
  // Twelve jobs a second apart, every third written as before the shards (its lists' unsharded names).
  const jobs = Array.from({ length: 12 }, (_, n) =>
    seededJob({
      id: newId('sj'),
      ownerId: OWNER_SHARDED,
      resellerStoreId: STORE,
      createdAt: `2026-11-12T10:00:${String(n).padStart(2, '0')}.000Z`,
      status: n % 4 === 0 ? 'dead' : 'completed',
    }),
  );
  const legacy = (item: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(item).map(([name, value]) =>
        /^GSI[1456]PK$/.test(name) && typeof value === 'string' ? [name, value.replace(/#\d+$/, '')] : [name, value],
      ),
    );

  beforeAll(() =>
    writeItems(
      service.doc,
      service.tableName,
      jobs.map((job, n) => (n % 3 === 0 ? legacy(syncJobItem(job)) : syncJobItem(job))),
    ),
  );

  it('spreads one owner’s jobs over several shards, and keeps the entries written before them in shard 0', () => {
    const partitions = new Set(jobs.map((job, n) => (n % 3 === 0 ? undefined : syncJobItem(job).GSI1PK)));
    expect(partitions.size).toBeGreaterThan(3);
  });

  it.each([{}, { resellerStoreId: STORE }, { status: 'dead' as const }])(
    'lists them newest first, each once, across every shard and the unsharded partition (%o)',
    async (filters) => {
      const want = newestFirst(jobs)
        .filter((job) => filters.status === undefined || job.status === filters.status)
        .map((job) => job.id);
      for (const limit of [1, 5, 100]) {
        const page = (l: number, after?: string) =>
          lists.syncJobs.listSyncJobs({ ownerId: OWNER_SHARDED }, l, after, filters);
        expect(await walk(page, limit, LIST_SHARDS)).toEqual(want);
      }
    },
  );
});
