import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { newId } from '../../shared/core/ids.js';
import { transactWrite } from '../../shared/dynamo/table.js';
import { type EventType, eventExpiry, eventId } from '../../shared/entities/event.js';
import { endpointsOf } from '../../shared/entities/webhook-endpoint.js';
import { deliveryDelivered, deliveryFailed } from '../../shared/events/deliveries.js';
import { eventWrites } from '../../shared/events/events.js';
import { ISO_MS, REQUEST_ID, serviceForSuite } from './support.js';

/**
 * Events and webhook endpoints (CONTRACT.md §14) through the local HTTP front against DynamoDB
 * Local: endpoints' CRUD, tenancy, the limit of 16, idempotent replays, rotate and recover; the
 * events list's filters and pages, with events seeded by the pipeline's own `eventWrites`.
 */

jest.setTimeout(90_000);

const B = () => service.api('owner_b');
const RECEIVER = 'http://127.0.0.1:9/hooks';
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

const { service, api: A } = serviceForSuite({ simulator: false }, 120_000);

const createEndpoint = async (body: Record<string, unknown> = {}) => {
  const res = await A().post('/v1/webhook_endpoints', { url: RECEIVER, enabledEvents: ['*'], ...body });
  expect(res.status).toBe(201);
  return res.body;
};

describe('webhook endpoints', () => {
  it('creates an endpoint with its secret shown once, then reads, lists, updates and deletes it', async () => {
    const created = await createEndpoint({ description: 'orders', enabledEvents: ['sync_job.dead'] });
    expect(created).toMatchObject({
      object: 'webhook_endpoint',
      url: RECEIVER,
      status: 'enabled',
      description: 'orders',
    });
    expect(created.id).toMatch(/^we_/);
    expect(created.secret).toMatch(SECRET);
    expect(created.createdAt).toMatch(ISO_MS);

    const got = await A().get(`/v1/webhook_endpoints/${created.id}`);
    expect(got.status).toBe(200);
    expect(got.body.secret).toBeUndefined();
    expect(got.text).not.toContain(created.secret.slice(6));

    const list = await A().get('/v1/webhook_endpoints');
    expect(list.body.data.map((e: { id: string }) => e.id)).toContain(created.id);
    expect(list.body.data.every((e: { secret?: string }) => e.secret === undefined)).toBe(true);

    const patched = await A().patch(`/v1/webhook_endpoints/${created.id}`, {
      status: 'disabled',
      enabledEvents: ['sync_job.completed', 'sync_job.dead'],
      description: null,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ status: 'disabled', description: null });
    expect((await A().get(`/v1/webhook_endpoints/${created.id}`)).body.enabledEvents).toEqual([
      'sync_job.completed',
      'sync_job.dead',
    ]);

    expect((await A().delete(`/v1/webhook_endpoints/${created.id}`)).status).toBe(204);
    expect((await A().get(`/v1/webhook_endpoints/${created.id}`)).status).toBe(404);
    expect((await A().delete(`/v1/webhook_endpoints/${created.id}`)).status).toBe(404);
  });

  it('answers another owner’s endpoint as missing, for every operation', async () => {
    const { id } = await createEndpoint();
    const path = `/v1/webhook_endpoints/${id}`;
    for (const res of [
      await B().get(path),
      await B().patch(path, { description: 'x' }),
      await B().delete(path),
      await B().post(`${path}/rotate_secret`),
      await B().post(`${path}/recover`, { since: new Date(Date.now() - 60_000).toISOString() }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('resource_missing');
    }
    expect((await B().get('/v1/webhook_endpoints')).body.data).toEqual([]);
    expect((await A().get(path)).body.description).toBeNull();
  });

  it.each([
    ['https://10.0.0.1/hooks', /private/],
    ['https://169.254.169.254/latest', /metadata/],
    ['https://[::1]/hooks', /loopback/],
    ['http://hooks.example.com/in', /https/],
    ['not a url', /absolute URL/],
  ])('refuses %s with 400 validation_failed on url', async (url, message) => {
    const res = await A().post('/v1/webhook_endpoints', { url, enabledEvents: ['*'] });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', param: 'url' });
    expect(res.body.error.message).toMatch(message);
    const { id } = await createEndpoint();
    const patch = await A().patch(`/v1/webhook_endpoints/${id}`, { url });
    expect(patch.body.error).toMatchObject({ code: 'validation_failed', param: 'url' });
    await A().delete(`/v1/webhook_endpoints/${id}`);
  });

  it('refuses unknown event types and fields', async () => {
    for (const body of [
      { url: RECEIVER, enabledEvents: ['sync_job.exploded'] },
      { url: RECEIVER, enabledEvents: [] },
      { url: RECEIVER, enabledEvents: ['*'], secret: 'whsec_mine' },
    ]) {
      const res = await A().post('/v1/webhook_endpoints', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
  });

  it('holds an owner to 16 endpoints, also when created at once, and frees a place on delete', async () => {
    for (const { id } of (await B().get('/v1/webhook_endpoints?limit=100')).body.data)
      await B().delete(`/v1/webhook_endpoints/${id}`);
    const body = { url: RECEIVER, enabledEvents: ['*'] };
    const answers = await Promise.all(Array.from({ length: 20 }, () => B().post('/v1/webhook_endpoints', body)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(16);
    const refused = answers.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(4);
    for (const r of refused) expect(r.body.error.code).toBe('webhook_endpoint_limit_reached');
    const list = await B().get('/v1/webhook_endpoints?limit=10');
    expect(list.body.data).toHaveLength(10);
    expect(list.body.has_more).toBe(true);
    const rest = await B().get(`/v1/webhook_endpoints?limit=10&starting_after=${list.body.data[9].id}`);
    expect(rest.body.data).toHaveLength(6);
    expect(rest.body.has_more).toBe(false);
    await B().delete(`/v1/webhook_endpoints/${list.body.data[0].id}`);
    expect((await B().post('/v1/webhook_endpoints', body)).status).toBe(201);
    expect((await B().get('/v1/webhook_endpoints?starting_after=we_0000000000000000000000')).body.error.code).toBe(
      'invalid_cursor',
    );
  });

  it('replays a create sent again with its Idempotency-Key, and creates nothing more', async () => {
    const key = { headers: { 'idempotency-key': newId('req') } };
    const body = { url: RECEIVER, enabledEvents: ['order.unrouted'] };
    const first = await A().post('/v1/webhook_endpoints', body, key);
    const again = await A().post('/v1/webhook_endpoints', body, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    const mine = (await A().get('/v1/webhook_endpoints?limit=100')).body.data.filter(
      (e: { enabledEvents: string[] }) => e.enabledEvents[0] === 'order.unrouted',
    );
    expect(mine).toHaveLength(1);
    const reused = await A().post('/v1/webhook_endpoints', { ...body, description: 'other' }, key);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
  });

  it('rotates the secret: a new one shown once, the old one signing beside it for 24 hours', async () => {
    const created = await createEndpoint();
    const before = Date.now();
    const rotated = await A().post(`/v1/webhook_endpoints/${created.id}/rotate_secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(SECRET);
    expect(rotated.body.secret).not.toBe(created.secret);
    const [endpoint] = (await endpointsOf('owner_a')).filter((e) => e.id === created.id);
    const overlap = Date.parse(endpoint.previousSecret?.expiresAt ?? '') - before;
    expect(overlap).toBeGreaterThan(86_390_000);
    expect(overlap).toBeLessThan(86_410_000);
    const audit = await A().get(`/v1/audit_log?resource_id=${created.id}`);
    expect(audit.body.data.map((e: { action: string }) => e.action)).toEqual([
      'webhook_endpoint.secret_rotated',
      'webhook_endpoint.created',
    ]);
    expect(audit.body.data[0]).toMatchObject({ resourceType: 'webhook_endpoint', resellerStoreId: null });
    expect(audit.text).not.toContain(rotated.body.secret.slice(6));
  });
});

const seed = async (type: EventType, createdAt: string, ownerId = 'owner_a') => {
  const id = eventId(type, createdAt);
  const endpoints = await endpointsOf(ownerId);
  await transactWrite(
    eventWrites({ id, ownerId, type, createdAt, object: { id: 'sj_x', object: 'sync_job' } }, endpoints),
  );
  return id;
};

/**
 * An event as the first layout wrote it (`EVT#<id>`/`EVT`, its entry in its type's list on GSI5, a
 * random id): kept until its TTL, listed and shown beside the events of its list's key.
 */
const seedLegacy = async (type: EventType, createdAt: string, ownerId = 'owner_a') => {
  const id = newId('evt');
  const Item = {
    PK: `EVT#${id}`,
    SK: 'EVT',
    GSI5PK: `OWNER#${ownerId}#EVT#${type}`,
    GSI1SK: `${createdAt}#${id}`,
    id,
    ownerId,
    type,
    createdAt,
    object: JSON.stringify({ id: 'sj_x', object: 'sync_job' }),
    expiresAt: eventExpiry(createdAt),
  };
  await service.doc.send(new PutCommand({ TableName: service.tableName, Item }));
  return id;
};

const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((e) => e.id);

describe('events', () => {
  const base = Date.parse('2026-11-01T00:00:00.000Z');
  const at = (minute: number) => new Date(base + minute * 60_000).toISOString();
  const seeded: { id: string; type: EventType; createdAt: string }[] = [];

  beforeAll(async () => {
    const types: EventType[] = ['sync_job.completed', 'sync_job.dead', 'fulfillment.delivered', 'order.unrouted'];
    for (let i = 0; i < 24; i++) {
      // Pairs share a timestamp: the list orders them by id.
      const createdAt = at(Math.floor(i / 2));
      const type = types[i % types.length];
      // One in five as the first layout wrote it: the lists merge both until those expire.
      const id = i % 5 === 2 ? await seedLegacy(type, createdAt) : await seed(type, createdAt);
      seeded.push({ id, type, createdAt });
    }
    await seed('sync_job.completed', at(5), 'owner_b');
  });

  const newestFirst = (list: typeof seeded) =>
    [...list].sort((a, b) => (`${a.createdAt}#${a.id}` < `${b.createdAt}#${b.id}` ? 1 : -1)).map((e) => e.id);

  const pages = async (query: string, limit = 5) => {
    const all: string[] = [];
    let after = '';
    for (;;) {
      const res = await A().get(`/v1/events?limit=${limit}${query}${after}`);
      expect(res.status).toBe(200);
      all.push(...ids(res));
      if (!res.body.has_more) return all;
      after = `&starting_after=${res.body.data.at(-1).id}`;
    }
  };

  it('lists the owner’s events newest first, page after page, none skipped or repeated', async () => {
    const res = await A().get('/v1/events?limit=3');
    expect(res.body).toMatchObject({ object: 'list', url: '/v1/events', has_more: true });
    expect(res.body.data[0]).toMatchObject({ object: 'event', data: { object: { object: 'sync_job' } } });
    expect(res.body.data[0].created).toMatch(ISO_MS);
    expect(res.body.data[0].request_id).toMatch(REQUEST_ID);
    const mine = seeded.filter((e) => e.createdAt >= at(0));
    expect((await pages('')).filter((id) => mine.some((e) => e.id === id))).toEqual(newestFirst(mine));
  });

  it('filters by type, by a group of types and by created', async () => {
    const of = (pred: (e: (typeof seeded)[number]) => boolean) => newestFirst(seeded.filter(pred));
    expect(await pages('&type=sync_job.dead')).toEqual(of((e) => e.type === 'sync_job.dead'));
    const group = await pages('&type=sync_job.*', 4);
    expect(group.filter((id) => seeded.some((e) => e.id === id))).toEqual(of((e) => e.type.startsWith('sync_job.')));
    const range = `&created_gte=${encodeURIComponent(at(3))}&created_lt=${encodeURIComponent(at(7))}`;
    expect(await pages(range, 3)).toEqual(of((e) => e.createdAt >= at(3) && e.createdAt < at(7)));
    expect(await pages(`${range}&type=order.unrouted`, 1)).toEqual(
      of((e) => e.createdAt >= at(3) && e.createdAt < at(7) && e.type === 'order.unrouted'),
    );
    expect(await pages(`&created_lt=${encodeURIComponent(at(0))}`)).toEqual([]);
  });

  it('shows an event by id with one read of the key its id spells, and one of the first layout', async () => {
    for (const { id, type, createdAt } of seeded) {
      expect((await A().get(`/v1/events/${id}`)).body).toMatchObject({ id, type, created: createdAt, object: 'event' });
      expect((await B().get(`/v1/events/${id}`)).status).toBe(404);
    }
    expect((await A().get(`/v1/events/${eventId('sync_job.completed', at(1))}`)).status).toBe(404);
  });

  it('refuses bad filters and foreign cursors', async () => {
    for (const query of ['type=sync_job', 'type=nope.*', 'created_gte=yesterday', 'delivery_success=true']) {
      const res = await A().get(`/v1/events?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
    const [theirs] = ids(await B().get('/v1/events'));
    expect((await A().get(`/v1/events?starting_after=${theirs}`)).body.error.code).toBe('invalid_cursor');
    const dead = seeded.find((e) => e.type === 'sync_job.dead')?.id;
    expect((await A().get(`/v1/events?type=order.unrouted&starting_after=${dead}`)).body.error.code).toBe(
      'invalid_cursor',
    );
    expect((await A().get(`/v1/events/${theirs}`)).status).toBe(404);
  });

  it('shows an event with its deliveries; delivery_success=false lists those whose delivery fails', async () => {
    const endpoint = await createEndpoint({ enabledEvents: ['sync_job.failed'] });
    const other = await createEndpoint({ enabledEvents: ['order.unrouted'] });
    const failedOne = await seed('sync_job.failed', new Date().toISOString());
    const got = await A().get(`/v1/events/${failedOne}`);
    expect(got.body.type).toBe('sync_job.failed');
    const delivery = got.body.deliveries.find((d: { endpointId: string }) => d.endpointId === endpoint.id);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 0, lastResponseStatus: null });
    expect(got.body.deliveries.some((d: { endpointId: string }) => d.endpointId === other.id)).toBe(false);

    const ref = { eventId: failedOne, endpointId: endpoint.id, ownerId: 'owner_a', attempts: 0 };
    const eventCreatedAt = got.body.created;
    const event = { id: failedOne, ownerId: 'owner_a', type: 'sync_job.failed' as const, createdAt: eventCreatedAt };
    await deliveryFailed({ event, delivery: { ...ref, eventCreatedAt } }, 500, null);
    expect(ids(await A().get('/v1/events?delivery_success=false'))).toEqual([failedOne]);
    expect(ids(await A().get('/v1/events?delivery_success=false&type=order.unrouted'))).toEqual([]);
    const shown = (await A().get(`/v1/events/${failedOne}`)).body.deliveries[0];
    expect(shown).toMatchObject({ status: 'failed', attempts: 1, lastResponseStatus: 500, nextAttemptAt: null });

    const since = new Date(Date.now() - 3_600_000).toISOString();
    const recovered = await A().post(`/v1/webhook_endpoints/${endpoint.id}/recover`, { since });
    expect(recovered.status).toBe(200);
    expect(recovered.body).toMatchObject({
      object: 'webhook_endpoint_recovery',
      endpointId: endpoint.id,
      deliveries: 1,
    });
    expect((await A().get(`/v1/events/${failedOne}`)).body.deliveries[0].status).toBe('pending');
    const again = await A().post(`/v1/webhook_endpoints/${endpoint.id}/recover`, { since });
    expect(again.body.deliveries).toBe(0);

    await deliveryDelivered({ event, delivery: { ...ref, eventCreatedAt, attempts: 1 } }, 204);
    expect(ids(await A().get('/v1/events?delivery_success=false'))).toEqual([]);
    expect((await A().get(`/v1/events/${failedOne}`)).body.deliveries[0]).toMatchObject({
      status: 'delivered',
      attempts: 2,
      lastResponseStatus: 204,
    });
    const old = await A().post(`/v1/webhook_endpoints/${endpoint.id}/recover`, { since: '2020-01-01T00:00:00Z' });
    expect(old.body.error).toMatchObject({ code: 'validation_failed', param: 'since' });
  });
});
