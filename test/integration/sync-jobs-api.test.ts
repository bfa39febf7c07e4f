import { seededJob, writeItems } from '../../bench/seed.js';
import type { SyncJobStatus } from '../../shared/domain/orders.js';
import { syncJobItem } from '../../shared/order-flow/order-sync-job.js';
import { startService, type TestService } from './support.js';

jest.setTimeout(60_000);

/** An id of the service's shape (prefix, 24 characters of its alphabet) readable in failures. */
const idOf = (prefix: string, name: string) => `${prefix}_${name.padEnd(24, '0')}`;
const RST_ONE = idOf('rst', 'n1');
const RST_TWO = idOf('rst', 'n2');
const SJ_NEWER = idOf('sj', 'newer');
const SJ_OLDER = idOf('sj', 'prev');
const SJ_FOREIGN = idOf('sj', 'xtra');

/** A job as the service stores it; only the fields the list reads matter here. */
const seedJob = (ownerId: string, id: string, createdAt: string, status: SyncJobStatus, resellerStoreId: string) =>
  seededJob({ id, ownerId, createdAt, status, resellerStoreId });

let service: TestService;

/** GET `path` with `query` is refused: 400 validation_failed naming `param`. */
const refusesQuery = async (path: string, query: string, param: string) => {
  const res = await service.api('owner_a').get(`${path}?${query}`);
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ code: 'validation_failed', param });
};

describe('GET /v1/sync_jobs', () => {
  const SAME = '2026-11-20T10:00:00.000Z';
  const seeded: ReturnType<typeof seedJob>[] = [];

  beforeAll(async () => {
    service = await startService({ simulator: false });
    for (let i = 0; i < 40; i++) {
      const id = idOf('sj', `same${String(i).padStart(3, '0')}`);
      seeded.push(seedJob('owner_a', id, SAME, i % 4 === 0 ? 'dead' : 'completed', i % 2 ? RST_ONE : RST_TWO));
    }
    seeded.push(seedJob('owner_a', SJ_NEWER, '2026-11-20T11:00:00.000Z', 'pending', RST_ONE));
    seeded.push(seedJob('owner_a', SJ_OLDER, '2026-11-19T10:00:00.000Z', 'failed', RST_TWO));
    seeded.push(seedJob('owner_b', SJ_FOREIGN, SAME, 'completed', idOf('rst', 'b')));
    await writeItems(service.doc, service.tableName, seeded.map(syncJobItem));
  }, 90_000);

  const walk = async (query: string, limit: number) => {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 50; page++) {
      const res = await service
        .api('owner_a')
        .get(`/v1/sync_jobs?limit=${limit}${query}${cursor ? `&starting_after=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'list', url: '/v1/sync_jobs' });
      ids.push(...res.body.data.map((j: any) => j.id));
      if (!res.body.has_more) return ids;
      cursor = res.body.data.at(-1).id;
    }
    throw new Error('pagination did not end');
  };

  const expected = (filter: (j: ReturnType<typeof seedJob>) => boolean) =>
    seeded
      .filter((j) => j.ownerId === 'owner_a' && filter(j))
      .sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1))
      .map((j) => j.id);

  it('pages newest first by (createdAt, id) without skipping or repeating jobs that share a timestamp', async () => {
    const ids = await walk('', 7);
    expect(ids).toEqual(expected(() => true));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).not.toContain(SJ_FOREIGN);
  });

  it('answers 20 jobs by default, each a sync_job carrying the request id', async () => {
    const res = await service.api('owner_a').get('/v1/sync_jobs');
    expect(res.body.data).toHaveLength(20);
    expect(res.body.has_more).toBe(true);
    expect(res.body.data[0]).toMatchObject({ object: 'sync_job', id: SJ_NEWER, request_id: res.body.request_id });
  });

  it('filters by status and by reseller store, keeping the order and the cursor rules', async () => {
    expect(await walk('&status=dead', 3)).toEqual(expected((j) => j.status === 'dead'));
    expect(await walk(`&reseller_store_id=${RST_ONE}`, 6)).toEqual(expected((j) => j.resellerStoreId === RST_ONE));
    expect(await walk(`&status=completed&reseller_store_id=${RST_TWO}`, 4)).toEqual(
      expected((j) => j.status === 'completed' && j.resellerStoreId === RST_TWO),
    );
  });

  it.each([
    ['status=lost', 'status'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['sort=asc', 'sort'],
  ])('refuses %s with 400 validation_failed naming %s', (query, param) => refusesQuery('/v1/sync_jobs', query, param));

  it('refuses a cursor of another owner with 400 invalid_cursor', async () => {
    const res = await service.api('owner_a').get(`/v1/sync_jobs?starting_after=${SJ_FOREIGN}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
  });

  it('shows owner B only its own jobs', async () => {
    const res = await service.api('owner_b').get('/v1/sync_jobs');
    expect(res.body.data.map((j: any) => j.id)).toEqual([SJ_FOREIGN]);
  });
});

describe('GET /v1/audit_log', () => {
  it.each([
    ['action=sync_job.exploded', 'action'],
    ['resource_type=store', 'resource_type'],
    ['verbose=1', 'verbose'],
  ])('refuses %s with 400 validation_failed naming %s', (query, param) => refusesQuery('/v1/audit_log', query, param));

  it('answers an empty list envelope for a new owner', async () => {
    const res = await service.api('owner_b').get('/v1/audit_log');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', data: [], has_more: false, url: '/v1/audit_log' });
  });
});

afterAll(() => service?.stop());
