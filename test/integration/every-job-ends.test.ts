import { PurgeQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createResellerStore, createSourceStore, queueSend, replaceAccessToken, serviceForSuite } from './support.js';
import { eventually, orderPayload, sendWebhook, jobReaches as waitForJob } from './webhooks.js';

jest.setTimeout(90_000);

/**
 * CONTRACT.md §6, "every job ends", through the local runtime: bounded throttling, unknown
 * outcomes looked up, messages lost and the reconciler, the attempt history read through the API.
 */

/** Small timings, so that what lasts a day on AWS lasts seconds here. */
const BUDGET_SECONDS = 4;
const LEASE_SECONDS = 2;
/** Long enough that a message is not delivered twice while its worker waits for a slow platform. */
const VISIBILITY_SECONDS = 3;

describe('every sync job ends, and what it says agrees with the supplier', () => {
  let reseller: any;
  const secret = 'whsec_every_job_ends';
  const job = async (id: string) => (await api().get(`/v1/sync_jobs/${id}`)).body;
  const jobReaches = (id: string, status: string, timeoutMs?: number) => waitForJob(api(), id, status, timeoutMs);
  const callsTo = async (shopDomain: string) => (await sim().calls()).filter((c) => c.shopDomain === shopDomain);
  const order = async (vendor: string) => {
    const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret,
      body: orderPayload([{ vendor, price: '13.00' }]),
    });
    expect(receipt.status).toBe(200);
    return receipt.body.syncJobIds[0] as string;
  };
  const attempts = async (id: string, query = '') => (await api().get(`/v1/sync_jobs/${id}/attempts${query}`)).body;

  /** The sync queue's messages of a job, ready, delayed or in flight (the emulator's own inspection). */
  const messagesOf = async (jobId: string) => {
    const res = await fetch(`${service.runtime.endpoints.sqs}/_fauxqs/queues/sync`);
    const { messages } = (await res.json()) as {
      messages: { ready: { body: string }[]; delayed: { body: string }[]; inflight: { message: { body: string } }[] };
    };
    const mine = (body: string) => JSON.parse(body).jobId === jobId;
    return {
      waiting: [...messages.ready, ...messages.delayed].filter((m) => mine(m.body)).length,
      inFlight: messages.inflight.filter((m) => mine(m.message.body)).length,
    };
  };

  /** Gives a source store a token the simulator accepts, as a supplier fixing its side would. */
  const healToken = (storeId: string) => replaceAccessToken(service, { kind: 'source', id: storeId }, 'tok_healed');

  const { service, api, sim } = serviceForSuite(
    {
      throttleBudgetSeconds: BUDGET_SECONDS,
      leaseSeconds: LEASE_SECONDS,
      visibilityTimeoutSeconds: VISIBILITY_SECONDS,
      platformTimeoutMs: 1_500,
    },
    120_000,
  );
  beforeAll(async () => {
    reseller = await createResellerStore(api(), { webhookSecret: secret });
  }, 120_000);
  afterEach(() => service.runtime.faults.clear());

  describe('a reseller’s shop that answers 429 for ever to the tracking of a parcel', () => {
    it('is called no faster than Retry-After allows, until the parcel is dead with the 429 reason', async () => {
      const busySecret = 'whsec_busy_reseller';
      const busy = await createResellerStore(api(), { webhookSecret: busySecret, accessToken: 'tok_fail429' });
      const supplier = await createSourceStore(api(), busy.id, { vendorTag: 'Ships', webhookSecret: 'whsec_ships' });
      const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
        shopDomain: busy.shopDomain,
        secret: busySecret,
        body: orderPayload([{ vendor: 'Ships', price: '13.00' }]),
      });
      const [id] = receipt.body.syncJobIds;
      const placed = await jobReaches(id, 'completed');
      const shipped = await sendWebhook(service.runtime.apiUrl, '/v1/fulfillments/webhook', {
        shopDomain: supplier.shopDomain,
        secret: 'whsec_ships',
        body: { id: 9_800_001, order_id: placed.sourceOrderId, tracking_number: '1ZBUSY', tracking_company: 'UPS' },
      });
      expect(shipped.status).toBe(200);

      const parcel = await eventually(
        async () => {
          const [entry] = (await job(id)).fulfillments;
          return entry?.status === 'dead' && entry;
        },
        BUDGET_SECONDS * 1000 + 20_000,
        100,
      );

      expect(parcel.errorMessage).toBe(`storeplatform_a answered 429: Too Many Requests; throttled for more than 4 s`);
      const calls = await callsTo(busy.shopDomain);
      expect(calls.length).toBeGreaterThan(1);
      // Retry-After: 1 between calls, and the budget ends it: a few calls, never a burst.
      for (let i = 1; i < calls.length; i++)
        expect(Date.parse(calls[i].at) - Date.parse(calls[i - 1].at)).toBeGreaterThanOrEqual(950);
      expect(calls.every((c) => c.status === 429)).toBe(true);
      // Ended, it calls no more.
      await new Promise((r) => setTimeout(r, 2500));
      expect(await callsTo(busy.shopDomain)).toHaveLength(calls.length);
    });
  });

  describe('a supplier that answers 429 for ever', () => {
    it('is called no faster than Retry-After allows, with one message at a time, until the job is dead', async () => {
      const supplier = await createSourceStore(api(), reseller.id, { vendorTag: 'Busy', accessToken: 'tok_fail429' });
      const id = await order('Busy');

      let mostWaiting = 0;
      let mostInFlight = 0;
      const dead = await eventually(
        async () => {
          const { waiting, inFlight } = await messagesOf(id);
          mostWaiting = Math.max(mostWaiting, waiting);
          mostInFlight = Math.max(mostInFlight, inFlight);
          const current = await job(id);
          return current.status === 'dead' && current;
        },
        BUDGET_SECONDS * 1000 + 20_000,
        50,
      );

      expect(dead.errorMessage).toBe(`storeplatform_a answered 429: Too Many Requests; throttled for more than 4 s`);
      expect(dead.failedAt).toBeNull();
      const posts = (await callsTo(supplier.shopDomain)).filter((c) => c.method === 'POST');
      // Retry-After: 1 between calls, and the budget ends it: a few calls, never a burst.
      for (let i = 1; i < posts.length; i++)
        expect(Date.parse(posts[i].at) - Date.parse(posts[i - 1].at)).toBeGreaterThanOrEqual(950);
      const spanSeconds = (Date.parse(posts.at(-1).at) - Date.parse(posts[0].at)) / 1000;
      expect(posts.length).toBeLessThanOrEqual(Math.floor(spanSeconds) + 1);
      // It ended once it had been throttled for the budget, not before.
      const [end, run] = (await attempts(id)).data;
      expect(run).toMatchObject({ outcome: 'throttled', count: posts.length - 1 });
      expect(end).toMatchObject({ outcome: 'dead', platformStatus: 429 });
      expect(Date.parse(end.endedAt) - Date.parse(run.startedAt)).toBeGreaterThanOrEqual(BUDGET_SECONDS * 1000);
      // At most one message waits for the job; the one in flight is the one being finished.
      expect(mostWaiting).toBeLessThanOrEqual(1);
      expect(mostInFlight).toBeLessThanOrEqual(1);
      expect(await messagesOf(id)).toEqual({ waiting: 0, inFlight: 0 });
      expect(await sim().orders(supplier.shopDomain)).toHaveLength(0);
    });

    it('starts a fresh budget on a manual retry; the history shows the throttled run, its end, the retry', async () => {
      const supplier = await createSourceStore(api(), reseller.id, { vendorTag: 'Later', accessToken: 'tok_fail429' });
      const id = await order('Later');
      await jobReaches(id, 'dead', BUDGET_SECONDS * 1000 + 20_000);
      await healToken(supplier.id);

      expect((await api().post(`/v1/sync_jobs/${id}/retry`)).status).toBe(200);
      const completed = await jobReaches(id, 'completed');

      const history = await attempts(id);
      expect(history).toMatchObject({ object: 'list', url: `/v1/sync_jobs/${id}/attempts`, has_more: false });
      expect(history.data.map((a: any) => [a.trigger, a.outcome, a.platformStatus])).toEqual([
        ['retry', 'completed', 201],
        [expect.any(String), 'dead', 429],
        ['webhook', 'throttled', 429],
      ]);
      const [done, dead, throttled] = history.data;
      expect(throttled.count).toBeGreaterThanOrEqual(2);
      expect(Date.parse(throttled.endedAt)).toBeGreaterThan(Date.parse(throttled.startedAt));
      expect(dead.errorMessage).toMatch(/429.*throttled for more than 4 s/);
      expect(done).toMatchObject({ errorMessage: null, count: 1, number: 3, syncJobId: id });
      expect(completed.sourceOrderId).toBe(String((await sim().orders(supplier.shopDomain))[0].id));
    });
  });

  describe('a create call whose answer never comes', () => {
    it.each([
      ['storeplatform_a', 'tok_slow'],
      ['storeplatform_b', 'tok_lost'],
      ['custom', 'tok_lost'],
      ['storeplatform_b', 'tok_slow'],
    ])('on %s (%s) is looked up, and the job completes with the one supplier order', async (platform, token) => {
      const vendor = `${platform}-${token}`;
      const supplier = await createSourceStore(api(), reseller.id, { vendorTag: vendor, platform, accessToken: token });
      const id = await order(vendor);

      const completed = await jobReaches(id, 'completed');

      const placed = await sim().orders(supplier.shopDomain);
      expect(placed).toHaveLength(1);
      expect(completed.sourceOrderId).toMatch(new RegExp(`(^|/)${placed[0].id}$`));
      const [found] = (await attempts(id)).data;
      expect(found).toMatchObject({ outcome: 'found_existing', platformStatus: null });
      expect(found.errorMessage).toMatch(/the supplier has the order/);
    });
  });

  describe('a job whose message was deleted from the queue by hand', () => {
    it('is sent a new one by the reconciler once its lease is up, and completes exactly once', async () => {
      const supplier = await createSourceStore(api(), reseller.id, { vendorTag: 'Purged', accessToken: 'tok_flaky' });
      const id = await order('Purged');
      // Its first attempt failed (flaky: 503): its message now waits out the backoff in the queue.
      await jobReaches(id, 'failed');
      const sqs = new SQSClient({
        endpoint: service.runtime.endpoints.sqs,
        region: 'us-east-1',
        credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
      });
      await sqs.send(new PurgeQueueCommand({ QueueUrl: service.runtime.queues.sync.url }));
      sqs.destroy();

      // Not before the backoff and the lease are over: the message might only be waiting.
      expect(await service.runtime.invoke('SyncReconciler')).toMatchObject({ resent: 0 });
      await eventually(
        async () => ((await service.runtime.invoke('SyncReconciler')) as { resent: number }).resent === 1,
        VISIBILITY_SECONDS * 1000 + LEASE_SECONDS * 1000 + 5_000,
        250,
      );

      await jobReaches(id, 'completed');
      expect(await sim().orders(supplier.shopDomain)).toHaveLength(1);
      expect((await attempts(id)).data.map((a: any) => [a.trigger, a.outcome])).toEqual([
        ['reconciler', 'completed'],
        ['webhook', 'failed'],
      ]);
    });
  });

  describe('a fulfillment whose message was lost after its state was written', () => {
    it('is sent again by the reconciler once its lease is up, and reaches the reseller once', async () => {
      const supplier = await createSourceStore(api(), reseller.id, {
        vendorTag: 'Ships',
        webhookSecret: 'whsec_ships',
      });
      const id = await order('Ships');
      const placed = await jobReaches(id, 'completed');
      // The message is lost between the state written on the job and its send (docs/propagation.md).
      const outage = service.runtime.faults.inject({
        ...queueSend('FulfillmentsWebhook'),
        action: 'fail',
        message: 'SQS unavailable',
      });

      const shipped = await sendWebhook(service.runtime.apiUrl, '/v1/fulfillments/webhook', {
        shopDomain: supplier.shopDomain,
        secret: 'whsec_ships',
        body: { id: 9_900_001, order_id: placed.sourceOrderId, tracking_number: '1ZLOST', tracking_company: 'UPS' },
      });
      // The state is on the job, the message is not on its way: the platform would redeliver the
      // webhook; the reconciler does not need it to.
      expect(shipped.status).toBe(500);
      expect(outage.hits).toHaveLength(1);
      expect((await job(id)).fulfillment).toMatchObject({ status: 'pending', trackingNumber: '1ZLOST' });

      expect(await service.runtime.invoke('SyncReconciler')).toMatchObject({ propagating: 1, propagationsResent: 0 });
      const resent = await eventually(
        async () => {
          const report = (await service.runtime.invoke('SyncReconciler')) as { propagationsResent: number };
          return report.propagationsResent === 1;
        },
        LEASE_SECONDS * 1000 + 5_000,
        250,
      );
      expect(resent).toBe(true);

      const delivered = await eventually(async () => {
        const { fulfillment } = await job(id);
        return fulfillment.status === 'delivered' && fulfillment;
      });
      expect(delivered).toMatchObject({ trackingNumber: '1ZLOST', attempts: 1, errorMessage: null });
      const resellerOrders = await sim().orders(reseller.shopDomain);
      const fulfillments = resellerOrders.flatMap((o: any) => o.fulfillments);
      expect(fulfillments.filter((f: any) => f.tracking_number === '1ZLOST')).toHaveLength(1);
      // Delivered, the job has left the propagating jobs: the reconciler reads nothing of it.
      expect(await service.runtime.invoke('SyncReconciler')).toMatchObject({ propagating: 0 });
    });
  });

  describe('GET /v1/sync_jobs/{id}/attempts', () => {
    let flakyJob: string;

    beforeAll(async () => {
      await createSourceStore(api(), reseller.id, { vendorTag: 'Flaky', accessToken: 'tok_flaky' });
      flakyJob = await order('Flaky');
      await jobReaches(flakyJob, 'completed');
    });

    it('lists a flaky job’s attempts newest first: the redelivery that completed, the one that failed', async () => {
      const res = await api().get(`/v1/sync_jobs/${flakyJob}/attempts`);
      expect(res.status).toBe(200);
      const [completed, failed] = res.body.data;
      expect(res.body.data).toHaveLength(2);
      expect(failed).toEqual({
        id: expect.stringMatching(/^sja_/),
        object: 'sync_job_attempt',
        syncJobId: flakyJob,
        number: 1,
        trigger: 'webhook',
        outcome: 'failed',
        platformStatus: 503,
        errorMessage: 'storeplatform_a answered 503: Service Unavailable',
        startedAt: expect.any(String),
        endedAt: expect.any(String),
        durationMs: expect.any(Number),
        count: 1,
        request_id: res.body.request_id,
      });
      expect(completed).toMatchObject({ number: 2, trigger: 'redelivery', outcome: 'completed', platformStatus: 201 });
      expect(Date.parse(completed.startedAt)).toBeGreaterThanOrEqual(Date.parse(failed.endedAt));
    });

    it('pages by starting_after, and refuses a cursor that is not an attempt of this job', async () => {
      const first = await attempts(flakyJob, '?limit=1');
      expect(first).toMatchObject({ has_more: true, data: [{ number: 2 }] });
      const second = await attempts(flakyJob, `?limit=1&starting_after=${first.data[0].id}`);
      expect(second).toMatchObject({ has_more: false, data: [{ number: 1 }] });

      for (const cursor of ['sja_nope_1', first.data[0].id.replace(/_2$/, '_3'), 'sj_x']) {
        const res = await api().get(`/v1/sync_jobs/${flakyJob}/attempts?starting_after=${cursor}`);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
      }
    });

    it('answers 404 for another owner’s job and for an unknown one, and 400 for a bad limit', async () => {
      expect((await service.api('owner_b').get(`/v1/sync_jobs/${flakyJob}/attempts`)).status).toBe(404);
      expect((await api().get('/v1/sync_jobs/sj_unknown/attempts')).status).toBe(404);
      const res = await api().get(`/v1/sync_jobs/${flakyJob}/attempts?limit=0`);
      expect(res.body.error).toMatchObject({ code: 'validation_failed', param: 'limit' });
    });

    it('is not part of the job object', async () => {
      expect(Object.keys(await job(flakyJob))).not.toContain('attemptLog');
    });
  });

  describe('the reconciler', () => {
    it('reads as much with many completed jobs as with none: its reads grow with the jobs in flight', async () => {
      await eventually(
        async () => ((await service.runtime.invoke('SyncReconciler')) as any).inFlight === 0,
        30_000,
        500,
      );
      const idle = (await service.runtime.invoke('SyncReconciler')) as { readUnits: number; inFlight: number };

      await createSourceStore(api(), reseller.id, { vendorTag: 'Many' });
      const ids = await Promise.all(Array.from({ length: 20 }, () => order('Many')));
      for (const id of ids) await jobReaches(id, 'completed');
      const afterMany = (await service.runtime.invoke('SyncReconciler')) as { readUnits: number; inFlight: number };

      expect(afterMany).toMatchObject({ inFlight: 0, readUnits: idle.readUnits });

      // Jobs in flight are read: a supplier that keeps failing holds three open for a while.
      await createSourceStore(api(), reseller.id, { vendorTag: 'Down', accessToken: 'tok_fail500' });
      const open = await Promise.all(Array.from({ length: 3 }, () => order('Down')));
      await Promise.all(open.map((id) => jobReaches(id, 'failed')));
      const busy = (await service.runtime.invoke('SyncReconciler')) as { readUnits: number; inFlight: number };
      expect(busy.inFlight).toBe(3);
      expect(busy.readUnits).toBeGreaterThan(idle.readUnits);
    });
  });
});
