import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import {
  createResellerStore,
  createSourceStore,
  jobStatusWrite,
  queueSend,
  replaceAccessToken,
  serviceForSuite,
} from './support.js';
import { eventually, orderPayload, sendWebhook, simulator, jobReaches as waitForJob } from './webhooks.js';

// Faults are injected by the local runtime into the functions' SDK calls (lib/local/faults.ts): a
// worker's environment dies at the worst moment, after the supplier has the order and before the
// job records it; the webhook's enqueue fails.
/** The worker's write that moves its job to `completed` (completeJob). */
const COMPLETE_JOB = jobStatusWrite('completed');

jest.setTimeout(60_000);

/**
 * The jobs' lease in this file: the reconciler (invoked by hand here) sends a job stalled this long.
 * Long enough that a webhook's answer and a reconciler run fit inside it on a loaded CI machine.
 */
const LEASE_SECONDS = 3;
const pastLease = () => new Promise((r) => setTimeout(r, LEASE_SECONDS * 1000 + 300));

describe('recovery: crashes, lost enqueues, stale messages, throttling', () => {
  let reseller: any;
  const secret = 'whsec_recovery';
  const job = async (id: string) => (await api().get(`/v1/sync_jobs/${id}`)).body;
  const jobReaches = (id: string, status: string, timeoutMs?: number) => waitForJob(api(), id, status, timeoutMs);
  const simOrders = (shopDomain: string) => simulator(service.runtime.simulator!.url).orders(shopDomain);
  const simCalls = async (shopDomain: string) =>
    (await simulator(service.runtime.simulator!.url).calls()).filter((c) => c.shopDomain === shopDomain);
  const order = (body: unknown) =>
    sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', { shopDomain: reseller.shopDomain, secret, body });

  /** Gives a source store a token the simulator accepts, as a supplier fixing its side would. */
  const healToken = (storeId: string) => replaceAccessToken(service, { kind: 'source', id: storeId }, 'tok_healed');

  const { service, api } = serviceForSuite({ leaseSeconds: LEASE_SECONDS });
  beforeAll(async () => {
    reseller = await createResellerStore(api(), { webhookSecret: secret });
    // Warm: a first reconciler run starts its environment, which must not eat a test's lease.
    await service.runtime.invoke('SyncReconciler');
  }, 90_000);
  afterEach(() => service.runtime.faults.clear());

  it('leaves exactly one supplier order when the worker dies between the platform call and the write', async () => {
    const supplier = await createSourceStore(api(), reseller.id, { vendorTag: 'Crash' });
    const crash = service.runtime.faults.inject({ ...COMPLETE_JOB, action: 'crash' });

    const receipt = await order(orderPayload([{ vendor: 'Crash', price: '10.00' }]));
    const done = await jobReaches(receipt.body.syncJobIds[0], 'completed');
    expect(crash.hits).toHaveLength(1);

    // The first receive placed the order and recorded nothing; the redelivery found the job still
    // `processing`, placed it again under the same idempotency key, and got the same order back.
    expect(done.attempts).toBe(2);
    expect(await simOrders(supplier.shopDomain)).toHaveLength(1);
    const posts = (await simCalls(supplier.shopDomain)).filter((c) => c.method === 'POST');
    expect(posts.map((c) => c.status)).toEqual([201, 200]);
    expect(done.sourceOrderId).toBe(String((await simOrders(supplier.shopDomain))[0].id));
  });

  it('sends a job whose enqueue failed its message once its lease is up, and completes it', async () => {
    const supplier = await createSourceStore(api(), reseller.id, { vendorTag: 'Lost' });
    const outage = service.runtime.faults.inject({
      ...queueSend('OrdersWebhook'),
      action: 'fail',
      message: 'SQS unavailable',
    });

    const receipt = await order(orderPayload([{ vendor: 'Lost', price: '10.00' }]));
    expect(receipt.status).toBe(200);
    expect(outage.hits).toHaveLength(1);
    const id = receipt.body.syncJobIds[0];
    // Within its lease the reconciler leaves it alone: its message may still be on its way.
    expect(await service.runtime.invoke('SyncReconciler')).toMatchObject({ resent: 0 });
    await pastLease();
    expect((await job(id)).status).toBe('pending');

    expect(await service.runtime.invoke('SyncReconciler')).toMatchObject({ resent: 1 });

    await jobReaches(id, 'completed');
    expect(await simOrders(supplier.shopDomain)).toHaveLength(1);
  });

  /**
   * An order of a new supplier, placed; then a webhook of the reseller's about it (`topic`, `body`)
   * whose message to the worker never leaves (dropped: nothing reports it).
   */
  const placedThenLost = async (vendorTag: string, topic: string, body: (payload: any) => unknown) => {
    const supplier = await createSourceStore(api(), reseller.id, { vendorTag });
    const payload = orderPayload([{ vendor: vendorTag, price: '10.00' }]);
    const [id] = (await order(payload)).body.syncJobIds;
    await jobReaches(id, 'completed');
    const lost = service.runtime.faults.inject({ ...queueSend('OrdersWebhook'), action: 'drop' });
    const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret,
      body: body(payload),
      topic,
    });
    expect(receipt.status).toBe(200);
    expect(lost.hits).toHaveLength(1);
    return { supplier, id };
  };

  it('cancels a placed order whose cancellation message was lost, once its lease is up', async () => {
    // The cancellation is recorded, and its message never leaves.
    const { supplier, id } = await placedThenLost('LostCancel', 'orders/cancelled', (payload) => ({
      id: payload.id,
      cancel_reason: 'customer',
    }));
    expect(await job(id)).toMatchObject({ status: 'completed', cancellation: { status: 'requested' } });

    expect(await service.runtime.invoke('SyncReconciler')).toMatchObject({ cancellationsResent: 0 });
    await pastLease();
    expect(await service.runtime.invoke('SyncReconciler')).toMatchObject({ cancellationsResent: 1 });
    await jobReaches(id, 'cancelled');
    expect((await simOrders(supplier.shopDomain))[0].cancelled_at).toEqual(expect.any(String));
    // Ended, it leaves the reconciler's view: a later run reads nothing of it.
    expect(await service.runtime.invoke('SyncReconciler')).toMatchObject({ cancellationsResent: 0 });
  });

  it('updates a placed order whose update message was lost, once its lease is up, then stops watching it', async () => {
    // The edit is kept, and its message to the worker never leaves.
    const { supplier, id } = await placedThenLost('LostUpdate', 'orders/updated', (payload) => ({
      ...payload,
      email: 'moved@example.com',
      updated_at: new Date(Date.now() + 5000).toISOString(),
    }));
    const item = async () =>
      (await service.doc.send(new GetCommand({ TableName: service.tableName, Key: { PK: `SJ#${id}`, SK: 'SJ' } })))
        .Item!;
    // Watched by the reconciler, as a cancellation on its way is.
    expect((await item()).GSI3PK).toMatch(/^PROPAGATING#/);

    expect(await service.runtime.invoke('SyncReconciler')).toMatchObject({ updatesResent: 0 });
    await pastLease();
    expect(await service.runtime.invoke('SyncReconciler')).toMatchObject({ updatesResent: 1 });
    await eventually(async () => (await simOrders(supplier.shopDomain))[0].email === 'moved@example.com');
    await eventually(async () => {
      const { orderEdits } = await item();
      return orderEdits.sentAt === orderEdits.updatedAt;
    });
    // Through, it leaves the reconciler's view: the next run takes it out.
    expect(await service.runtime.invoke('SyncReconciler')).toMatchObject({ updatesResent: 0 });
    expect((await item()).GSI3PK).toBeUndefined();
    expect(await job(id)).toMatchObject({ status: 'completed', attention: null });
    expect((await simCalls(supplier.shopDomain)).filter((c) => c.method === 'PUT')).toHaveLength(1);
  });

  it('completes an order whose function died between writing its job and sending the message', async () => {
    const supplier = await createSourceStore(api(), reseller.id, { vendorTag: 'Died' });
    // The send never happens and nothing reports it: what a crash right after the write leaves.
    const lost = service.runtime.faults.inject({ ...queueSend('OrdersWebhook'), action: 'drop' });

    const id = (await order(orderPayload([{ vendor: 'Died', price: '10.00' }]))).body.syncJobIds[0];
    expect(lost.hits).toHaveLength(1);
    await pastLease();
    await service.runtime.invoke('SyncReconciler');

    await jobReaches(id, 'completed');
    expect(await simOrders(supplier.shopDomain)).toHaveLength(1);
  });

  it('makes a job that never progresses dead after three messages re-sent by the reconciler', async () => {
    await createSourceStore(api(), reseller.id, { vendorTag: 'Void' });
    // Every message is lost on its way, the reconciler's too (no other job is in flight meanwhile).
    const lost = (fn: string, times: number) =>
      service.runtime.faults.inject({ function: fn, service: 'SQS', command: 'SendMessage', action: 'drop', times });
    const fromWebhook = lost('OrdersWebhook', 1);
    const fromReconciler = lost('SyncReconciler', 3);
    const id = (await order(orderPayload([{ vendor: 'Void', price: '10.00' }]))).body.syncJobIds[0];
    expect(fromWebhook.hits).toHaveLength(1);

    for (let resend = 1; resend <= 3; resend++) {
      await pastLease();
      expect(await service.runtime.invoke('SyncReconciler')).toMatchObject({ resent: 1 });
      expect(await job(id)).toMatchObject({ status: 'pending', attempts: 0 });
    }
    expect(fromReconciler.hits).toHaveLength(3);
    await pastLease();
    expect(await service.runtime.invoke('SyncReconciler')).toMatchObject({ resent: 0, killed: 1 });
    const dead = await job(id);
    expect(dead).toMatchObject({ status: 'dead', attempts: 0 });
    expect(dead.errorMessage).toBe('no progress after 3 messages re-sent by the reconciler');
    const audit = (await api().get('/v1/audit_log')).body.data.find((e: any) => e.resourceId === id);
    expect(audit).toMatchObject({ action: 'sync_job.dead', metadata: { reason: dead.errorMessage } });
  });

  it('never lets a message from before a retry move the job again', async () => {
    const supplier = await createSourceStore(api(), reseller.id, { vendorTag: 'Stale', accessToken: 'tok_fail401' });
    const receipt = await order(orderPayload([{ vendor: 'Stale', price: '10.00' }]));
    const id = receipt.body.syncJobIds[0];
    await jobReaches(id, 'dead');
    await healToken(supplier.id);
    expect((await api().post(`/v1/sync_jobs/${id}/retry`)).status).toBe(200);
    const completed = await jobReaches(id, 'completed');

    // Replay the first enqueue's message on the queue and on the DLQ.
    const stale = JSON.stringify({ jobId: id, generation: 1 });
    const { sqs } = await import('../../shared/aws/batch.js');
    await sqs.send(new SendMessageCommand({ QueueUrl: service.runtime.queues.sync.url, MessageBody: stale }));
    await sqs.send(new SendMessageCommand({ QueueUrl: service.runtime.queues.syncDlq.url, MessageBody: stale }));
    await new Promise((r) => setTimeout(r, 2500));

    const after = await job(id);
    expect(after).toMatchObject({
      status: 'completed',
      attempts: completed.attempts,
      updatedAt: completed.updatedAt,
      deadAt: null,
    });
    expect(await simOrders(supplier.shopDomain)).toHaveLength(1);
  });

  it('waits out a 429 for Retry-After without failing the job, then completes', async () => {
    const supplier = await createSourceStore(api(), reseller.id, { vendorTag: 'Busy', accessToken: 'tok_fail429' });
    const receipt = await order(orderPayload([{ vendor: 'Busy', price: '10.00' }]));
    const id = receipt.body.syncJobIds[0];
    await eventually(async () => (await simCalls(supplier.shopDomain)).length >= 2, 10_000);

    const calls = await simCalls(supplier.shopDomain);
    const gap = Date.parse(calls[1].at) - Date.parse(calls[0].at);
    expect(gap).toBeGreaterThanOrEqual(950);
    const throttled = await job(id);
    expect(['pending', 'processing']).toContain(throttled.status);
    expect(throttled.failedAt).toBeNull();

    await healToken(supplier.id);
    await jobReaches(id, 'completed', 15_000);
    expect(await simOrders(supplier.shopDomain)).toHaveLength(1);
  });
});
