import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { newId } from '../../shared/core/ids.js';
import { keys, listSortKey, lists } from '../../shared/dynamo/keys.js';
import {
  type ApiResponse,
  createResellerStore,
  REQUEST_ID,
  resellerStoreBody,
  scanAll,
  serviceForSuite,
  sourceStoreBody,
  unique,
} from './support.js';

/**
 * `Idempotency-Key` on every POST and PATCH of the API (CONTRACT.md §9), through the local HTTP
 * front against DynamoDB Local: replays, reuse with another request, concurrent duplicates, what is
 * kept and what is not.
 */

jest.setTimeout(60_000);

const B = () => service.api('owner_b');
const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });

const { service, api: A } = serviceForSuite({ simulator: false }, 120_000);

const resellerStoreCount = async () =>
  (await scanAll(service.doc, service.tableName)).filter(
    (item) => String(item.PK).startsWith('RST#') && item.SK === 'RST',
  ).length;

const expectReplayOf = (replay: ApiResponse, first: ApiResponse) => {
  expect(replay.status).toBe(first.status);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(replay.text).toBe(first.text);
  expect(replay.headers.get('request-id')).toBe(first.headers.get('request-id'));
};

/** A dead job of owner_a, as the DLQ handler leaves it. */
const seedDeadJob = async () => {
  // An id of the service's shape: a path id of another shape is a 404 before any read.
  const id = newId('sj');
  const at = new Date().toISOString();
  await service.doc.send(
    new PutCommand({
      TableName: service.tableName,
      Item: {
        ...keys.syncJob(id),
        GSI1PK: lists.syncJobs('owner_a').of(id),
        GSI1SK: listSortKey(at, id),
        id,
        ownerId: 'owner_a',
        resellerStoreId: 'rst_seeded',
        sourceStoreId: 'sst_seeded',
        status: 'dead',
        attempts: 3,
        generation: 1,
        externalOrderId: '1001',
        resellerShopDomain: 'seeded.myshopify.com',
        sourceOrderId: null,
        errorMessage: 'platform answered 500',
        completedAt: null,
        failedAt: at,
        deadAt: at,
        createdAt: at,
        updatedAt: at,
        fulfillments: {},
      },
    }),
  );
  return id;
};

describe('Idempotency-Key', () => {
  describe('a request sent again with the same key, method, path and body', () => {
    it('runs once and replays the first answer, with its request id and Idempotent-Replayed: true', async () => {
      const key = unique('create');
      const body = resellerStoreBody();
      const before = await resellerStoreCount();

      const first = await A().post('/v1/reseller_stores', body, withKey(key));
      const replay = await A().post('/v1/reseller_stores', body, withKey(key));

      expect(first.status).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(first.body.request_id).toMatch(REQUEST_ID);
      expectReplayOf(replay, first);
      expect(await resellerStoreCount()).toBe(before + 1);
    });

    it('replays a source store create instead of answering 409 vendor_tag_conflict', async () => {
      const reseller = await createResellerStore(A());
      const key = unique('source');
      const body = sourceStoreBody();
      const path = `/v1/reseller_stores/${reseller.id}/source_stores`;

      const first = await A().post(path, body, withKey(key));
      const replay = await A().post(path, body, withKey(key));
      const withoutKey = await A().post(path, body);

      expect(first.status).toBe(201);
      expectReplayOf(replay, first);
      expect(withoutKey.status).toBe(409);
      expect(withoutKey.body.error.code).toBe('vendor_tag_conflict');
    });

    it('replays a rename (PATCH)', async () => {
      const reseller = await createResellerStore(A());
      const key = unique('rename');
      const first = await A().patch(`/v1/reseller_stores/${reseller.id}`, { name: 'Renamed' }, withKey(key));
      await A().patch(`/v1/reseller_stores/${reseller.id}`, { name: 'Renamed again' });
      const replay = await A().patch(`/v1/reseller_stores/${reseller.id}`, { name: 'Renamed' }, withKey(key));

      expect(first.status).toBe(200);
      expectReplayOf(replay, first);
      expect((await A().get(`/v1/reseller_stores/${reseller.id}`)).body.name).toBe('Renamed again');
    });

    it('replays a retry of a dead job, which ran and was audited once', async () => {
      const jobId = await seedDeadJob();
      const key = unique('retry');

      const first = await A().post(`/v1/sync_jobs/${jobId}/retry`, undefined, withKey(key));
      const replay = await A().post(`/v1/sync_jobs/${jobId}/retry`, undefined, withKey(key));

      expect(first.status).toBe(200);
      expect(first.body.status).toBe('pending');
      expectReplayOf(replay, first);
      const audit = await A().get(`/v1/audit_log?resource_id=${jobId}&action=sync_job.retried`);
      expect(audit.body.data).toHaveLength(1);
    });

    it('replays a kept refusal: a 404 stays a 404', async () => {
      const key = unique('missing');
      const first = await A().post('/v1/sync_jobs/sj_nosuchjob/retry', undefined, withKey(key));
      const replay = await A().post('/v1/sync_jobs/sj_nosuchjob/retry', undefined, withKey(key));

      expect(first.status).toBe(404);
      expect(first.body.error.code).toBe('resource_missing');
      expectReplayOf(replay, first);
    });
  });

  describe('the same key with another request', () => {
    it('answers 400 idempotency_key_reused for another body, and creates nothing', async () => {
      const key = unique('reuse');
      await A().post('/v1/reseller_stores', resellerStoreBody(), withKey(key));
      const before = await resellerStoreCount();

      const res = await A().post('/v1/reseller_stores', resellerStoreBody(), withKey(key));

      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({
        type: 'invalid_request_error',
        code: 'idempotency_key_reused',
        message: expect.stringContaining('Idempotency-Key'),
        param: 'Idempotency-Key',
      });
      expect(res.headers.get('idempotent-replayed')).toBeNull();
      expect(await resellerStoreCount()).toBe(before);
    });

    it('answers 400 idempotency_key_reused for another path or another method', async () => {
      const reseller = await createResellerStore(A());
      const key = unique('elsewhere');
      const body = { name: 'Same body' };
      expect((await A().patch(`/v1/reseller_stores/${reseller.id}`, body, withKey(key))).status).toBe(200);

      const otherStore = await createResellerStore(A());
      const otherPath = await A().patch(`/v1/reseller_stores/${otherStore.id}`, body, withKey(key));
      const otherMethod = await A().post(`/v1/reseller_stores/${reseller.id}/source_stores`, body, withKey(key));

      expect(otherPath.status).toBe(400);
      expect(otherPath.body.error.code).toBe('idempotency_key_reused');
      expect(otherMethod.status).toBe(400);
      expect(otherMethod.body.error.code).toBe('idempotency_key_reused');
      expect((await A().get(`/v1/reseller_stores/${otherStore.id}`)).body.name).toBe('Reseller Shop');
    });

    it('is another owner’s own key: the same key and body from owner_b run for owner_b', async () => {
      const key = unique('shared');
      const body = resellerStoreBody();
      const mine = await A().post('/v1/reseller_stores', body, withKey(key));
      const theirs = await B().post('/v1/reseller_stores', body, withKey(key));

      expect(mine.status).toBe(201);
      expect(theirs.status).toBe(201);
      expect(theirs.headers.get('idempotent-replayed')).toBeNull();
      expect(theirs.body.id).not.toBe(mine.body.id);
      expect(theirs.body.ownerId).toBe('owner_b');
    });
  });

  describe('concurrent requests with one key', () => {
    it('execute once: one 201, the others replays of it or 409 idempotency_key_in_progress', async () => {
      const key = unique('burst');
      const body = resellerStoreBody();
      const before = await resellerStoreCount();

      const answers = await Promise.all(
        Array.from({ length: 8 }, () => A().post('/v1/reseller_stores', body, withKey(key))),
      );

      const ran = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null);
      const replayed = answers.filter((a) => a.headers.get('idempotent-replayed') === 'true');
      const busy = answers.filter((a) => a.status === 409);
      expect(ran).toHaveLength(1);
      expect(replayed.length + busy.length).toBe(answers.length - 1);
      for (const r of replayed) expect(r.text).toBe(ran[0].text);
      for (const b of busy) expect(b.body.error.code).toBe('idempotency_key_in_progress');
      expect(await resellerStoreCount()).toBe(before + 1);
      // Once the first has answered, the key replays.
      expectReplayOf(await A().post('/v1/reseller_stores', body, withKey(key)), ran[0]);
    });
  });

  describe('what is not kept', () => {
    it('a 400 validation_failed: the key runs the corrected request', async () => {
      const key = unique('invalid');
      const bad = await A().post('/v1/reseller_stores', resellerStoreBody({ platform: 'nope' }), withKey(key));
      const good = await A().post('/v1/reseller_stores', resellerStoreBody(), withKey(key));

      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('validation_failed');
      expect(good.status).toBe(201);
      expect(good.headers.get('idempotent-replayed')).toBeNull();
    });

    it('an unauthenticated request claims nothing', async () => {
      const key = unique('anonymous');
      const body = resellerStoreBody();
      expect((await service.api(null).post('/v1/reseller_stores', body, withKey(key))).status).toBe(401);
      const res = await A().post('/v1/reseller_stores', body, withKey(key));
      expect(res.status).toBe(201);
      expect(res.headers.get('idempotent-replayed')).toBeNull();
    });
  });

  describe('the key itself', () => {
    it.each([
      ['too long', 'k'.repeat(256)],
      ['not printable ASCII', 'clé-ü'],
    ])('answers 400 validation_failed for a key %s', async (_why, key) => {
      const res = await A().post('/v1/reseller_stores', resellerStoreBody(), {
        headers: { 'idempotency-key': Buffer.from(key, 'utf8').toString('latin1') },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_failed', param: 'Idempotency-Key' });
    });

    it('accepts 255 printable characters', async () => {
      const key = `${unique('long')}-${'x'.repeat(255)}`.slice(-255);
      const res = await A().post('/v1/reseller_stores', resellerStoreBody(), withKey(key));
      expect(res.status).toBe(201);
    });

    it('is ignored on GET and DELETE', async () => {
      const reseller = await createResellerStore(A());
      const key = unique('ignored');
      expect((await A().get(`/v1/reseller_stores/${reseller.id}`, withKey(key))).status).toBe(200);
      expect((await A().delete(`/v1/reseller_stores/${reseller.id}`, withKey(key))).status).toBe(204);
      expect((await A().delete(`/v1/reseller_stores/${reseller.id}`, withKey(key))).status).toBe(404);
    });

    it('is kept in the one table for 24 hours, scoped to its owner, without the key in clear', async () => {
      const key = unique('stored');
      const started = Math.floor(Date.now() / 1000);
      await A().post('/v1/reseller_stores', resellerStoreBody(), withKey(key));

      const records = (await scanAll(service.doc, service.tableName)).filter((item) =>
        keys.idempotentRequest('').PK.startsWith(String(item.PK).slice(0, 5)),
      );
      expect(records.length).toBeGreaterThan(0);
      for (const record of records) expect(JSON.stringify(record)).not.toContain(key);
      const newest = Math.max(...records.map((item) => Number(item.expiresAt)));
      expect(newest).toBeGreaterThanOrEqual(started + 24 * 3600);
      expect(newest).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 24 * 3600);
    });
  });
});
