import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_JOB_RETENTION_DAYS } from '../../lib/config.js';
import { syncJobId } from '../../shared/core/ids.js';
import { keys } from '../../shared/dynamo/keys.js';
import { syncJobKey } from '../../shared/order-flow/order-sync-job.js';
import {
  createResellerStore,
  createSourceStore,
  itemsHolding,
  jobStatusWrite,
  serviceForSuite,
  unique,
} from './support.js';
import { eventually, jobReaches, orderPayload, sendOrder } from './webhooks.js';

/**
 * Ended jobs' retention (JOB_RETENTION_DAYS, the table's TTL `expiresAt`), and the retention sweep
 * (CONTRACT.md §13) on a short clock: PERSONAL_DATA_RETENTION_DAYS is four seconds here. An order
 * whose jobs all ended that long ago is erased by the sweep; one still at work is not; an order none
 * of whose items routed (it has no job) is erased that long after its receipt, its store deleted or not.
 */

jest.setTimeout(90_000);

/** Long enough that a job seen completed is still within it when a sweep runs on a loaded machine. */
const RETENTION_SECONDS = 4;

describe('the retention sweep', () => {
  const { service, api } = serviceForSuite({
    personalDataRetentionDays: RETENTION_SECONDS / 86_400,
    platformTimeoutMs: 1_000,
  });
  beforeAll(async () => {
    // Warm: a sweep's cold start does not eat into the retention the tests measure.
    await service.runtime.invoke('RetentionSweep', {});
  }, 90_000);

  /** Waits past the retention. */
  const pastRetention = () => new Promise((resolve) => setTimeout(resolve, (RETENTION_SECONDS + 1) * 1000));

  /**
   * An order none of whose items routes (no job) with a shopper's email and address, sent to a store
   * made with `secret`: the strings to look for, and a read of the order as the API shows it.
   */
  const sendUnrouted = async (reseller: { id: string; shopDomain: string }, secret: string) => {
    const strings = [`${unique('unrouted')}@example.org`, `${unique('Oak')} Avenue 3`];
    const body = orderPayload([{ vendor: unique('Nobody'), price: '4.00' }], {
      email: strings[0],
      shipping_address: { name: 'Ada Byron', address1: strings[1], city: 'X', zip: '1', country_code: 'US' },
    });
    const receipt = await sendOrder(service.runtime.apiUrl, reseller.shopDomain, secret, body);
    expect(receipt).toMatchObject({ status: 200, body: { syncJobIds: [] } });
    const read = async () => (await api().get(`/v1/reseller_stores/${reseller.id}/orders/${body.id}`)).body;
    return { strings, read };
  };

  it('erases an ended order’s personal data after the retention, and leaves an order still at work alone', async () => {
    const secret = unique('whsec_r');
    const reseller = await createResellerStore(api(), { webhookSecret: secret });
    const ok = await createSourceStore(api(), reseller.id, { vendorTag: unique('Ok') });
    const down = await createSourceStore(api(), reseller.id, { vendorTag: unique('Down'), accessToken: 'tok_fail429' });
    const send = async (vendor: string) => {
      const email = `${unique('kept')}@example.org`;
      const body = orderPayload([{ vendor, price: '3.00' }], { email });
      const receipt = await sendOrder(service.runtime.apiUrl, reseller.shopDomain, secret, body);
      return { order: body, jobId: receipt.body.syncJobIds[0] as string };
    };
    const ended = await send(ok.vendorTag);
    const working = await send(down.vendorTag);
    await jobReaches(api(), ended.jobId, 'completed');

    // Within the retention: the sweep keeps it.
    await service.runtime.invoke('RetentionSweep', {});
    expect((await api().get(`/v1/sync_jobs/${ended.jobId}`)).body.redactedAt).toBeNull();
    await pastRetention();
    await service.runtime.invoke('RetentionSweep', {});

    const order = (await api().get(`/v1/reseller_stores/${reseller.id}/orders/${ended.order.id}`)).body;
    expect(order.redactedAt).toEqual(expect.any(String));
    expect((await api().get(`/v1/sync_jobs/${ended.jobId}`)).body).toMatchObject({
      status: 'completed',
      redactedAt: order.redactedAt,
    });
    const still = (await api().get(`/v1/sync_jobs/${working.jobId}`)).body;
    expect(['pending', 'processing', 'failed']).toContain(still.status);
    expect(still.redactedAt).toBeNull();
  });

  it('erases an order none of whose items routed (no job) the retention after its receipt', async () => {
    const secret = unique('whsec_u');
    const reseller = await createResellerStore(api(), { webhookSecret: secret });
    const send = () => sendUnrouted(reseller, secret);

    const older = await send();
    await service.runtime.invoke('RetentionSweep', {});
    expect((await older.read()).redactedAt).toBeNull();
    expect(await itemsHolding(service, older.strings)).not.toEqual([]);

    await pastRetention();
    const newer = await send();
    await service.runtime.invoke('RetentionSweep', {});
    const erased = await older.read();
    expect(erased).toMatchObject({ redactedAt: expect.any(String), syncJobIds: [] });
    expect(erased.unroutedLineItems).toHaveLength(1);
    expect(await itemsHolding(service, older.strings)).toEqual([]);
    // Received within the retention: kept, then erased by a later run that reads on from the mark.
    expect((await newer.read()).redactedAt).toBeNull();
    expect(await itemsHolding(service, newer.strings)).not.toEqual([]);
    await pastRetention();
    await service.runtime.invoke('RetentionSweep', {});
    expect((await newer.read()).redactedAt).toEqual(expect.any(String));
    expect(await itemsHolding(service, newer.strings)).toEqual([]);
    expect((await older.read()).redactedAt).toBe(erased.redactedAt);
  });

  it('erases the unrouted orders of a reseller store deleted since, whose store no list shows', async () => {
    const secret = unique('whsec_d');
    const reseller = await createResellerStore(api(), { webhookSecret: secret });
    const { strings } = await sendUnrouted(reseller, secret);
    expect((await api().delete(`/v1/reseller_stores/${reseller.id}`)).status).toBe(204);
    const listed = (await api().get('/v1/reseller_stores?limit=100')).body.data.map(
      (store: { id: string }) => store.id,
    );
    expect(listed).not.toContain(reseller.id);

    await service.runtime.invoke('RetentionSweep', {});
    expect(await itemsHolding(service, strings)).not.toEqual([]);
    await pastRetention();
    await service.runtime.invoke('RetentionSweep', {});
    expect(await itemsHolding(service, strings)).toEqual([]);
  });

  it('gives an ended job expiresAt = its end + JOB_RETENTION_DAYS, taken off when it is retried', async () => {
    const secret = unique('whsec_t');
    const reseller = await createResellerStore(api(), { webhookSecret: secret });
    const ok = await createSourceStore(api(), reseller.id, { vendorTag: unique('Ttl') });
    const refusing = await createSourceStore(api(), reseller.id, {
      vendorTag: unique('Refuse'),
      accessToken: 'tok_fail422',
    });
    const send = async (vendor: string) =>
      (await sendOrder(service.runtime.apiUrl, reseller.shopDomain, secret, orderPayload([{ vendor, price: '4.00' }])))
        .body.syncJobIds[0] as string;
    const item = async (id: string) =>
      (
        await service.doc.send(
          new GetCommand({ TableName: service.tableName, Key: syncJobKey(id), ConsistentRead: true }),
        )
      ).Item!;
    const expiry = (at: string) => Math.floor(Date.parse(at) / 1000) + DEFAULT_JOB_RETENTION_DAYS * 86_400;

    const completedId = await send(ok.vendorTag);
    const completed = await jobReaches(api(), completedId, 'completed');
    expect((await item(completedId)).expiresAt).toBe(expiry(completed.completedAt));

    const deadId = await send(refusing.vendorTag);
    const dead = await jobReaches(api(), deadId, 'dead');
    expect((await item(deadId)).expiresAt).toBe(expiry(dead.deadAt));

    // The retried job is at work again: no expiry (its claim is held, so it stays pending to be read).
    const claim = service.runtime.faults.inject({ ...jobStatusWrite('processing', deadId), action: 'hold' });
    try {
      expect((await api().post(`/v1/sync_jobs/${deadId}/retry`)).status).toBe(200);
      await claim.reached;
      const retried = await item(deadId);
      expect(retried.status).toBe('pending');
      expect(retried).not.toHaveProperty('expiresAt');
    } finally {
      claim.release();
    }
    // Refused again, it ends again, with an expiry from its new end.
    const again = await eventually(async () => {
      const job = (await api().get(`/v1/sync_jobs/${deadId}`)).body;
      return job.status === 'dead' && job.deadAt !== dead.deadAt && job;
    });
    expect((await item(deadId)).expiresAt).toBe(expiry(again.deadAt));
  });
  it("gives an order's mark and an unrouted order's items their end (issue 44: no item kept forever)", async () => {
    const secret = unique('whsec_m');
    const reseller = await createResellerStore(api(), { webhookSecret: secret });
    const ok = await createSourceStore(api(), reseller.id, { vendorTag: unique('Mark') });
    const get = async (key: { PK: string; SK: string }) =>
      (await service.doc.send(new GetCommand({ TableName: service.tableName, Key: key, ConsistentRead: true }))).Item;
    const days = (at: string) => Math.floor(Date.parse(at) / 1000) + DEFAULT_JOB_RETENTION_DAYS * 86_400;

    // An order none of whose items routed: its record and its mark end JOB_RETENTION_DAYS after its receipt.
    const unrouted = orderPayload([{ vendor: unique('Nobody'), price: '2.00' }]);
    await sendOrder(service.runtime.apiUrl, reseller.shopDomain, secret, unrouted);
    const unroutedId = syncJobId(reseller.id, String(unrouted.id), 0);
    const record = (await get(keys.syncJob(unroutedId)))!;
    expect(record.expiresAt).toBe(days(String(record.unroutedOrderAt)));
    expect((await get(keys.unroutedOrderMark(unroutedId)))!.expiresAt).toBe(record.expiresAt);

    // An order with a job and an unrouted item: its mark has no end while the job works, and its jobs'
    // end once the sweep has erased it.
    const body = orderPayload([
      { vendor: ok.vendorTag, price: '3.00' },
      { vendor: unique('Nobody'), price: '1.00' },
    ]);
    const receipt = await sendOrder(service.runtime.apiUrl, reseller.shopDomain, secret, body);
    const jobId = receipt.body.syncJobIds[0] as string;
    expect((await get(keys.unroutedOrderMark(jobId)))!).not.toHaveProperty('expiresAt');
    const completed = await jobReaches(api(), jobId, 'completed');
    await pastRetention();
    await service.runtime.invoke('RetentionSweep', {});
    expect((await api().get(`/v1/sync_jobs/${jobId}`)).body.redactedAt).toEqual(expect.any(String));
    const mark = (await get(keys.unroutedOrderMark(jobId)))!;
    expect(mark.expiresAt).toBeGreaterThanOrEqual(days(completed.completedAt));
    // The job's own end is its last move's (a later write within `completed`, its tag's, moves it on).
    expect(mark.expiresAt).toBeLessThanOrEqual((await get(keys.syncJob(jobId)))!.expiresAt);
  });
});
