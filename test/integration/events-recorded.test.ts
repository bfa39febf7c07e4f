import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { createResellerStore, createSourceStore, serviceForSuite } from './support.js';
import { eventually, jobReaches, orderPayload, sendWebhook } from './webhooks.js';

/**
 * Events as the pipeline records them (CONTRACT.md §14): a real order's writes, read from the table's
 * change stream by the event recorder, listed by GET /v1/events with the object its GET answers, and
 * delivered to a receiver on 127.0.0.1 that verifies them with the `standardwebhooks` package.
 */

jest.setTimeout(120_000);

const secret = 'whsec_events_recorded';
let reseller: any;

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}
const received = new Map<string, Received[]>();
let receiver: Server;
let receiverUrl: string;
const at = (path: string) => received.get(path) ?? [];

let everything: { id: string; secret: string };
let deadOnly: { id: string; secret: string };

const { service, api: A } = serviceForSuite({}, 120_000);
beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const path = req.url ?? '/';
      received.set(path, [...at(path), { headers: req.headers, body }]);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  // Made before any event: the recorder's endpoint cache sees both from its first event.
  everything = (await A().post('/v1/webhook_endpoints', { url: `${receiverUrl}/all`, enabledEvents: ['*'] })).body;
  deadOnly = (await A().post('/v1/webhook_endpoints', { url: `${receiverUrl}/dead`, enabledEvents: ['sync_job.dead'] }))
    .body;
  reseller = await createResellerStore(A(), { webhookSecret: secret });
  await createSourceStore(A(), reseller.id, { vendorTag: 'Acme' });
  await createSourceStore(A(), reseller.id, { vendorTag: 'Broken', accessToken: 'tok_fail422' });
}, 120_000);
afterAll(async () => {
  await new Promise((done) => receiver?.close(done));
});

const send = (body: unknown) =>
  sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', { shopDomain: reseller.shopDomain, secret, body });

/** A GET's answer as the object it shows, without the request's own `request_id`. */
const shown = async (path: string) => {
  const { request_id: _, ...object } = (await A().get(path)).body;
  return object;
};

/** The owner's events of the filter, as they are delivered (without each list entry's `request_id`). */
const eventsOf = async (query: string) =>
  ((await A().get(`/v1/events?limit=100&${query}`)).body.data as any[]).map(({ request_id: _, ...event }) => event);
const eventFor = (type: string, objectId: string) =>
  eventually(async () => (await eventsOf(`type=${type}`)).find((e) => e.data.object.id === objectId), 30_000);

describe('events recorded from the pipeline', () => {
  let jobId: string;
  let completed: any;

  it('records sync_job.completed for an order, with the job as GET /v1/sync_jobs/{id} answers it', async () => {
    const receipt = await send(orderPayload([{ vendor: 'Acme', price: '10.00' }]));
    expect(receipt.status).toBe(200);
    jobId = receipt.body.syncJobIds[0];
    await jobReaches(A(), jobId, 'completed');
    completed = await eventFor('sync_job.completed', jobId);

    expect(completed).toMatchObject({
      object: 'event',
      type: 'sync_job.completed',
      id: expect.stringMatching(/^evt_/),
    });
    // The reseller order's tag (CONTRACT.md §12.5) is tried before the completion, whose write records its
    // outcome: the event has the job as it completed, `tagged` included (null when the tag was left to its
    // message, whose outcome a later GET may have).
    const { tagged, ...job } = await shown(`/v1/sync_jobs/${jobId}`);
    const { tagged: taggedThen, ...asCompleted } = completed.data.object;
    expect(asCompleted).toEqual(job);
    expect([null, true, false]).toContain(tagged);
    expect(taggedThen === null ? [null, true, false] : [taggedThen]).toContain(tagged);
    // No personal data (§13): the order's shopper is nowhere in the event.
    const text = JSON.stringify(completed);
    expect(text).not.toContain('customer@example.com');
    expect(text).not.toContain('1 Main St');
    // Recorded once.
    expect((await eventsOf('type=sync_job.*')).filter((e) => e.data.object.id === jobId)).toHaveLength(1);
  });

  it('delivers it to a receiver on 127.0.0.1, verified by standardwebhooks; none to a sync_job.dead one', async () => {
    const [got] = await eventually(async () => {
      const hits = at('/all').filter((r) => r.headers['webhook-id'] === completed.id);
      return hits.length > 0 && hits;
    });
    const verified = new Webhook(everything.secret).verify(got.body, got.headers as Record<string, string>);
    expect(verified).toEqual(completed);
    await eventually(async () => {
      const shown = (await A().get(`/v1/events/${completed.id}`)).body;
      return shown.deliveries.length === 1 && shown.deliveries[0].status === 'delivered';
    });
    expect((await A().get(`/v1/events/${completed.id}`)).body.deliveries).toEqual([
      expect.objectContaining({ endpointId: everything.id, status: 'delivered', attempts: 1 }),
    ]);
    expect(at('/dead').filter((r) => r.headers['webhook-id'] === completed.id)).toEqual([]);
  });

  it('records sync_job.dead for a job its supplier refuses, delivered to the sync_job.dead endpoint too', async () => {
    const receipt = await send(orderPayload([{ vendor: 'Broken', price: '3.00' }]));
    const deadJob = receipt.body.syncJobIds[0];
    await jobReaches(A(), deadJob, 'dead', 60_000);
    const dead = await eventFor('sync_job.dead', deadJob);
    expect(dead.data.object).toEqual(await shown(`/v1/sync_jobs/${deadJob}`));
    const [got] = await eventually(async () => {
      const hits = at('/dead').filter((r) => r.headers['webhook-id'] === dead.id);
      return hits.length > 0 && hits;
    });
    expect(new Webhook(deadOnly.secret).verify(got.body, got.headers as Record<string, string>)).toEqual(dead);
  });

  it('records order.unrouted for an order with an item no supplier takes, as its GET answers it', async () => {
    const payload = orderPayload([
      { vendor: 'Acme', price: '10.00' },
      { vendor: 'Nobody', price: '2.00' },
    ]);
    const receipt = await send(payload);
    expect(receipt.status).toBe(200);
    const event = await eventually(
      async () =>
        (await eventsOf('type=order.unrouted')).find((e) => e.data.object.externalOrderId === String(payload.id)),
      30_000,
    );
    const order = await shown(`/v1/reseller_stores/${reseller.id}/orders/${payload.id}`);
    expect(event.data.object).toEqual(order);
    expect(order.unroutedLineItems).toEqual([expect.objectContaining({ resellerLineItemId: '2' })]);
  });
});
