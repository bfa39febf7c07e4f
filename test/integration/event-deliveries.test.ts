import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { main as events } from '../../bin/events.js';
import { newId } from '../../shared/core/ids.js';
import { transactWrite } from '../../shared/dynamo/table.js';
import { type EventType, eventId, getEvent } from '../../shared/entities/event.js';
import { eventWrites } from '../../shared/events/events.js';
import { forgetEndpoints, scheduleDeliveries } from '../../shared/events/schedule-deliveries.js';
import { scanAll, startService, TEST_KEYS, type TestService } from './support.js';
import { eventually } from './webhooks.js';

/**
 * Event delivery (CONTRACT.md §14) through the local runtime: events recorded as the pipeline
 * records them (`eventWrites`), their deliveries scheduled by `scheduleDeliveries`, sent by the
 * delivery worker to receivers on 127.0.0.1, and verified by the `standardwebhooks` package.
 */

jest.setTimeout(90_000);

let service: TestService;
const A = () => service.api('owner_a');

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on 127.0.0.1: every request by path, answered with the next status of its path's script (200 after). */
const received = new Map<string, Received[]>();
const scripts = new Map<string, number[]>();
let receiver: Server;
let receiverUrl: string;

const receiving = (path: string) => received.get(path) ?? [];
const forEvent = (path: string, eventId: string) => receiving(path).filter((r) => r.headers['webhook-id'] === eventId);

beforeAll(async () => {
  service = await startService({ simulator: false, deliveryRetrySeconds: [1, 1, 1] });
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const path = req.url ?? '/';
      received.set(path, [...receiving(path), { headers: req.headers, body }]);
      res.writeHead(scripts.get(path)?.shift() ?? 200).end();
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
}, 120_000);
afterAll(async () => {
  await new Promise((done) => receiver?.close(done));
  await service?.stop();
});

const createEndpoint = async (url: string, enabledEvents: string[] = ['*']) => {
  const res = await A().post('/v1/webhook_endpoints', { url, enabledEvents });
  expect(res.status).toBe(201);
  // The test process schedules deliveries itself: its cache must see the new endpoint.
  forgetEndpoints();
  return res.body as { id: string; secret: string };
};

/** An event recorded as the pipeline records one, then its deliveries scheduled (the stream recorder's call). */
const recordEvent = async (type: EventType = 'sync_job.completed') => {
  const createdAt = new Date().toISOString();
  const id = eventId(type, createdAt);
  const object = { id: newId('sj'), object: 'sync_job', status: 'completed' };
  await transactWrite(eventWrites({ id, ownerId: 'owner_a', type, object, createdAt }, []));
  const event = (await getEvent('owner_a', id, true))!;
  await scheduleDeliveries(event);
  return event;
};

const deliveryOf = async (eventId: string, endpointId: string) => {
  const res = await A().get(`/v1/events/${eventId}`);
  return res.body.deliveries.find((d: { endpointId: string }) => d.endpointId === endpointId);
};

const cleanUp = async (...ids: string[]) => {
  for (const id of ids) await A().delete(`/v1/webhook_endpoints/${id}`);
  forgetEndpoints();
};

describe('event delivery', () => {
  it('delivers an event to a receiver, signed so that standardwebhooks verifies it', async () => {
    const endpoint = await createEndpoint(`${receiverUrl}/plain`);
    const event = await recordEvent();
    const [got] = await eventually(async () => forEvent('/plain', event.id).length > 0 && forEvent('/plain', event.id));
    const verified = new Webhook(endpoint.secret).verify(got.body, got.headers as Record<string, string>);
    expect(verified).toMatchObject({ id: event.id, object: 'event', type: 'sync_job.completed' });
    expect(await eventually(async () => (await deliveryOf(event.id, endpoint.id))?.status === 'delivered')).toBe(true);
    expect(await deliveryOf(event.id, endpoint.id)).toMatchObject({ attempts: 1, lastResponseStatus: 200 });

    // Scheduled again (a stream record delivered twice): nothing new is written, nothing sent again.
    const before = (await scanAll(service.doc, service.tableName)).length;
    await scheduleDeliveries(event);
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await scanAll(service.doc, service.tableName)).length).toBe(before);
    expect(forEvent('/plain', event.id)).toHaveLength(1);
    await cleanUp(endpoint.id);
  });

  it('tries a receiver that answers 500 twice again: the same webhook-id three times, then delivered', async () => {
    const endpoint = await createEndpoint(`${receiverUrl}/flaky`);
    scripts.set('/flaky', [500, 500]);
    const event = await recordEvent();
    await eventually(async () => forEvent('/flaky', event.id).length >= 3);
    const shown = await eventually(async () => {
      const delivery = await deliveryOf(event.id, endpoint.id);
      return delivery?.status === 'delivered' && delivery;
    });
    expect(shown).toMatchObject({ attempts: 3, lastResponseStatus: 200, nextAttemptAt: null });
    expect(forEvent('/flaky', event.id).map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id, event.id]);
    await cleanUp(endpoint.id);
  });

  it('sends what failed while the receiver was down once the endpoint is recovered', async () => {
    // A port nothing listens on, until the receiver comes back on it.
    const probe = createServer();
    await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
    const { port } = probe.address() as AddressInfo;
    await new Promise((done) => probe.close(done));
    const endpoint = await createEndpoint(`http://127.0.0.1:${port}/down`);
    const event = await recordEvent();
    const failed = await eventually(async () => {
      const delivery = await deliveryOf(event.id, endpoint.id);
      return delivery?.status === 'failed' && delivery;
    });
    expect(failed).toMatchObject({ attempts: 4, lastResponseStatus: null, nextAttemptAt: null });
    const back = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.set('/down', [...receiving('/down'), { headers: req.headers, body: '' }]);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((done) => back.listen(port, '127.0.0.1', done));
    try {
      const since = new Date(Date.now() - 600_000).toISOString();
      const recovered = await A().post(`/v1/webhook_endpoints/${endpoint.id}/recover`, { since });
      expect(recovered.body.deliveries).toBe(1);
      await eventually(async () => (await deliveryOf(event.id, endpoint.id))?.status === 'delivered');
      expect(forEvent('/down', event.id)).toHaveLength(1);
    } finally {
      await new Promise((done) => back.close(done));
    }
    await cleanUp(endpoint.id);
  });

  it('signs with both secrets during a rotation: each verifies', async () => {
    const endpoint = await createEndpoint(`${receiverUrl}/rotated`);
    const rotated = await A().post(`/v1/webhook_endpoints/${endpoint.id}/rotate_secret`);
    forgetEndpoints();
    const event = await recordEvent();
    const [got] = await eventually(
      async () => forEvent('/rotated', event.id).length > 0 && forEvent('/rotated', event.id),
    );
    const headers = got.headers as Record<string, string>;
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(endpoint.secret).verify(got.body, headers)).toMatchObject({ id: event.id });
    expect(new Webhook(rotated.body.secret).verify(got.body, headers)).toMatchObject({ id: event.id });
    await cleanUp(endpoint.id);
  });

  it('sends nothing to an endpoint of enabledEvents ["sync_job.dead"] for a completed event', async () => {
    const all = await createEndpoint(`${receiverUrl}/all`);
    const dead = await createEndpoint(`${receiverUrl}/dead-only`, ['sync_job.dead']);
    const event = await recordEvent('sync_job.completed');
    await eventually(async () => forEvent('/all', event.id).length > 0);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(forEvent('/dead-only', event.id)).toEqual([]);
    expect(
      (await A().get(`/v1/events/${event.id}`)).body.deliveries.map((d: { endpointId: string }) => d.endpointId),
    ).toEqual([all.id]);
    const deadEvent = await recordEvent('sync_job.dead');
    await eventually(async () => forEvent('/dead-only', deadEvent.id).length > 0);
    await cleanUp(all.id, dead.id);
  });
});

describe('idempotent answers that carry a secret', () => {
  it('keeps them with the secret encrypted, and replays them exactly', async () => {
    const key = { headers: { 'idempotency-key': newId('req') } };
    const body = { url: `${receiverUrl}/kept`, enabledEvents: ['*'] };
    const created = await A().post('/v1/webhook_endpoints', body, key);
    expect(created.status).toBe(201);
    const rotateKey = { headers: { 'idempotency-key': newId('req') } };
    const rotated = await A().post(`/v1/webhook_endpoints/${created.body.id}/rotate_secret`, undefined, rotateKey);
    expect(rotated.status).toBe(200);

    const table = JSON.stringify(await scanAll(service.doc, service.tableName));
    expect(table).not.toContain('whsec_');
    expect(table).not.toContain(created.body.secret.slice(6));

    const replayed = await A().post('/v1/webhook_endpoints', body, key);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(created.body);
    const rotatedAgain = await A().post(`/v1/webhook_endpoints/${created.body.id}/rotate_secret`, undefined, rotateKey);
    expect(rotatedAgain.body).toEqual(rotated.body);
    await cleanUp(created.body.id);
  });
});

describe('npm run events', () => {
  const cli = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const env = { API_URL: service.runtime.apiUrl, API_KEY: TEST_KEYS.owner_a };
    const code = await events(argv, { out: (line) => out.push(line), err: (line) => err.push(line), env });
    return { code, out: out.join('\n'), err: err.join('\n') };
  };

  it('creates, lists, rotates and recovers endpoints, and lists and shows events', async () => {
    const created = await cli('endpoints', 'create', `${receiverUrl}/cli`, '--events', 'sync_job.completed', '--json');
    expect(created).toMatchObject({ code: 0, err: '' });
    const endpoint = JSON.parse(created.out);
    expect(endpoint.secret).toMatch(/^whsec_/);
    forgetEndpoints();
    expect((await cli('endpoints', 'list')).out).toContain(endpoint.id);
    const rotated = await cli('endpoints', 'rotate', endpoint.id);
    expect(rotated.out).toMatch(/secret: whsec_/);
    const event = await recordEvent();
    await eventually(async () => forEvent('/cli', event.id).length > 0);
    expect((await cli('list', '--type', 'sync_job.*')).out).toContain(event.id);
    const shown = await eventually(async () => {
      const result = await cli('show', event.id);
      return result.out.includes(`${endpoint.id}  delivered`) && result;
    });
    expect(shown.code).toBe(0);
    expect((await cli('endpoints', 'recover', endpoint.id)).out).toMatch(/^0 failed deliveries since /);
    await cleanUp(endpoint.id);
  });
});
