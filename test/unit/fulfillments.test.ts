import { DecryptCommand } from '@aws-sdk/client-kms';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { fulfillmentPayload } from '../../bench/common.js';
import { inFlight } from '../../shared/dynamo/keys.js';
import { presentSyncJob } from '../../shared/http/present.js';
import { syncJobFrom, syncJobKey } from '../../shared/order-flow/order-sync-job.js';
import { releaseKeptFulfillments } from '../../shared/order-flow/propagating.js';
import { processDeadFulfillmentMessage } from '../../shared/order-flow/propagating-dead-letter.js';
import { acceptFulfillment } from '../../shared/order-flow/propagating-intake.js';
import { processFulfillmentMessage } from '../../shared/order-flow/propagating-worker.js';
import { PlatformError } from '../../shared/platforms/http.js';
import { conditionOf, removesOf, requiresOf, requiring, setsAttribute, setsOf, setsUnder } from '../command-meaning.js';
import { dynamo, kms as kmsMock, sqs } from './aws-mocks.js';
import { fakeDeps } from './fake-deps.js';
import { jobFields, storeFields } from './job-fixtures.js';

const createFulfillment = jest.fn();
const updateFulfillmentTracking = jest.fn();
const cancelFulfillment = jest.fn();

const deps = fakeDeps({ createFulfillment, updateFulfillmentTracking, cancelFulfillment });

const tracking = {
  company: 'UPS',
  number: '1Z999',
  numbers: ['1Z999'],
  url: 'https://ups.example/1Z999',
  urls: ['https://ups.example/1Z999'],
};
const entry = (overrides: Record<string, unknown> = {}) => ({
  sourceFulfillmentId: '9001',
  status: 'pending',
  trackingCompany: 'UPS',
  trackingNumber: '1Z999',
  trackingNumbers: ['1Z999'],
  trackingUrl: 'https://ups.example/1Z999',
  resellerFulfillmentId: null,
  attempts: 0,
  errorMessage: null,
  receivedAt: '2026-11-21T04:00:00.000Z',
  updatedAt: '2026-11-21T04:00:00.000Z',
  deliveredAt: null,
  ...overrides,
});
const job = (fulfillment?: Record<string, unknown>) => ({
  ...syncJobKey('sj_1'),
  id: 'sj_1',
  ...jobFields('completed', 1),
  resellerShopDomain: 'reseller.myshopify.com',
  order: { currency: 'USD', line_items: [] },
  sourceOrderId: '7002',
  createdAt: '2026-11-21T03:00:00.000Z',
  updatedAt: '2026-11-21T03:00:00.000Z',
  ...(fulfillment ? { fulfillments: { [fulfillment.sourceFulfillmentId as string]: fulfillment } } : {}),
});
const resellerStore = {
  id: 'rst_1',
  name: 'Reseller',
  ...storeFields('storeplatform_b', 'reseller.myshopify.com'),
};
/** Where the job item keeps the entry of source fulfillment 9001, the one these tests propagate. */
const ENTRY = 'fulfillments.9001';
const JOB_KEY = { Key: { PK: 'SJ#sj_1', SK: 'SJ' } };
const RESELLER_KEY = { Key: { PK: 'RST#rst_1', SK: 'RST' } };

const message = (overrides: Record<string, unknown> = {}) => ({
  jobId: 'sj_1',
  sourceFulfillmentId: '9001',
  tracking,
  ...overrides,
});
const record = (body: unknown, receiveCount = '1'): SQSRecord =>
  ({
    messageId: 'm-1',
    body: JSON.stringify(body),
    attributes: { ApproximateReceiveCount: receiveCount },
  }) as unknown as SQSRecord;
const conditionFailed = () => Object.assign(new Error('condition'), { name: 'ConditionalCheckFailedException' });
const platformError = (status: number, retryable: boolean, extra: Record<string, unknown> = {}) =>
  new PlatformError({
    platform: 'storeplatform_b',
    status,
    retryable,
    message: `storeplatform_b answered ${status}`,
    ...extra,
  });
const update = (index = 0) => dynamo.commandCalls(UpdateCommand)[index].args[0].input;

beforeEach(() => {
  dynamo.reset();
  // No carrier report kept for any parcel (an accepted parcel reads its kept reports: propagating.ts).
  dynamo.on(GetCommand).resolves({});
  sqs.reset();
  kmsMock.reset();
  createFulfillment.mockReset();
  kmsMock
    .on(DecryptCommand)
    .callsFake((input) => ({ Plaintext: Buffer.from(`plain-${input.EncryptionContext.field}`) }));
  sqs.on(SendMessageCommand).resolves({});
});

describe('fulfillment worker: processFulfillmentMessage', () => {
  beforeEach(() => {
    dynamo.on(GetCommand, JOB_KEY).resolves({ Item: job(entry()) });
    dynamo.on(GetCommand, RESELLER_KEY).resolves({ Item: resellerStore });
    dynamo.on(UpdateCommand).resolves({});
  });

  it(
    'creates the fulfillment on the reseller order with the source fulfillment as idempotency key, ' +
      'then records it delivered',
    async () => {
      createFulfillment.mockResolvedValue({ fulfillmentId: 'gid://platform/Fulfillment/9100' });

      const outcome = await processFulfillmentMessage(deps, record(message()));

      expect(outcome).toBe('done');
      expect(createFulfillment).toHaveBeenCalledWith(
        {
          platform: 'storeplatform_b',
          shopDomain: 'reseller.myshopify.com',
          accessToken: 'plain-accessToken',
          webhookSecret: 'plain-webhookSecret',
          onApiVersion: expect.any(Function),
        },
        '5551234',
        tracking,
        'ful:sst_1:9001',
        { resend: false },
      );
      expect(kmsMock.commandCalls(DecryptCommand).map((c) => c.args[0].input.EncryptionContext)).toEqual([
        { storeId: 'rst_1', field: 'accessToken' },
        { storeId: 'rst_1', field: 'webhookSecret' },
      ]);
      const delivered = update();
      expect(setsUnder(delivered, ENTRY)).toMatchObject({
        status: 'delivered',
        resellerFulfillmentId: 'gid://platform/Fulfillment/9100',
        errorMessage: null,
        attempts: 1,
      });
      expect(Object.keys(setsOf(delivered))).toContain(`${ENTRY}.status`);
      // Conditional on the entry as read: a concurrent write makes it read again. Its last entry on its
      // way delivered, the job leaves GSI3's propagating jobs, unless an entry was added meanwhile.
      expect(conditionOf(delivered)).toBe(
        `${ENTRY}.attempts = 0 AND ${ENTRY}.status = "pending" AND size(fulfillments) = 1`,
      );
      expect(removesOf(delivered).slice(-2)).toEqual(['GSI3PK', 'GSI3SK']);
    },
  );

  describe('a parcel the supplier voided before the reseller’s fulfillment of it was recorded', () => {
    const voided = (overrides: Record<string, unknown>) =>
      dynamo.on(GetCommand, JOB_KEY).resolves({ Item: job(entry({ cancelRequested: true, ...overrides })) });
    beforeEach(() => cancelFulfillment.mockReset());

    it('calls nothing when no create was ever sent', async () => {
      voided({});
      expect(await processFulfillmentMessage(deps, record(message()))).toBe('done');
      expect(createFulfillment).not.toHaveBeenCalled();
      expect(cancelFulfillment).not.toHaveBeenCalled();
      expect(setsUnder(update(), ENTRY)).toMatchObject({ status: 'cancelled' });
    });

    it('finds the one an earlier create may have made (its answer lost), and cancels it', async () => {
      voided({ attempts: 1, status: 'failed', errorMessage: 'storeplatform_b: no answer (timeout)' });
      createFulfillment.mockResolvedValue({ fulfillmentId: 'gid://platform/Fulfillment/9100' });

      expect(await processFulfillmentMessage(deps, record(message()))).toBe('done');
      // The same key: the fulfillment the lost answer was about, never a second one.
      expect(createFulfillment).toHaveBeenCalledWith(
        expect.anything(),
        '5551234',
        tracking,
        'ful:sst_1:9001',
        expect.objectContaining({ resend: true }),
      );
      expect(cancelFulfillment).toHaveBeenCalledWith(
        expect.anything(),
        'gid://platform/Fulfillment/9100',
        'ful:sst_1:9001:cancel',
      );
      expect(setsUnder(update(), ENTRY)).toMatchObject({ status: 'cancelled' });
    });

    it('takes a refusal of that create (nothing left to fulfil) for none made', async () => {
      voided({ attempts: 1, status: 'failed', errorMessage: 'answered 500' });
      createFulfillment.mockRejectedValue(platformError(422, false));

      expect(await processFulfillmentMessage(deps, record(message()))).toBe('done');
      expect(cancelFulfillment).not.toHaveBeenCalled();
      expect(setsUnder(update(), ENTRY)).toMatchObject({ status: 'cancelled' });
    });
  });

  it('records a retryable platform failure as failed and leaves the message to SQS', async () => {
    createFulfillment.mockRejectedValue(platformError(500, true));

    const outcome = await processFulfillmentMessage(deps, record(message(), '2'));

    expect(outcome).toBe('retry');
    expect(setsUnder(update(), ENTRY)).toMatchObject({
      status: 'failed',
      errorMessage: 'storeplatform_b answered 500',
      attempts: 1,
    });
  });

  it('puts the job back among the propagating jobs when a dead entry fails again (a message still live)', async () => {
    dynamo.on(GetCommand, JOB_KEY).resolves({ Item: job(entry({ status: 'dead', errorMessage: 'answered 500' })) });
    createFulfillment.mockRejectedValue(platformError(500, true));

    expect(await processFulfillmentMessage(deps, record(message(), '2'))).toBe('retry');

    expect(setsUnder(update(), ENTRY)).toMatchObject({ status: 'failed' });
    expect(setsOf(update())).toMatchObject({ GSI3PK: expect.stringMatching(/^PROPAGATING#\d+$/) });
    expect(Object.keys(setsOf(update()))).toEqual(expect.arrayContaining(['GSI3PK', 'GSI3SK']));
  });

  it.each([401, 404, 422])(
    'makes the fulfillment dead at once, with the reason, when the platform answers %i',
    async (status) => {
      createFulfillment.mockRejectedValue(platformError(status, false));

      const outcome = await processFulfillmentMessage(deps, record(message()));

      expect(outcome).toBe('done');
      expect(setsUnder(update(), ENTRY)).toMatchObject({
        status: 'dead',
        errorMessage: `storeplatform_b answered ${status}`,
        attempts: 1,
      });
      expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
    },
  );

  it(
    'defers a throttled fulfillment in a fresh message delayed by Retry-After, ' + 'without recording a failure',
    async () => {
      createFulfillment.mockRejectedValue(platformError(429, true, { retryAfterSeconds: 7 }));

      const outcome = await processFulfillmentMessage(deps, record(message({ redrives: 2 })));

      expect(outcome).toBe('done');
      const sent = sqs.commandCalls(SendMessageCommand)[0].args[0].input;
      expect(sent).toMatchObject({
        QueueUrl: process.env.FULFILLMENT_QUEUE_URL,
        MessageBody: JSON.stringify(message({ redrives: 2 })),
      });
      // Retry-After, and up to a quarter more of jitter.
      expect(sent.DelaySeconds).toBeGreaterThanOrEqual(7);
      expect(sent.DelaySeconds).toBeLessThanOrEqual(9);
      // No failure is recorded: the entry only notes the wait (and when its throttled run began).
      expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(1);
      expect(Object.keys(setsOf(update()))).toEqual([`${ENTRY}.waitUntil`, `${ENTRY}.throttledSince`]);
      expect(removesOf(update())).toEqual([`${ENTRY}.resends`]);
      expect(Date.parse(setsAttribute(update(), `${ENTRY}.waitUntil`))).toBeGreaterThan(Date.now() + 6000);
    },
  );

  it('never puts an internal error text into the job', async () => {
    createFulfillment.mockRejectedValue(new Error('socket hang up at 10.0.0.1 with token abc'));

    expect(await processFulfillmentMessage(deps, record(message()))).toBe('retry');
    expect(setsAttribute(update(), `${ENTRY}.errorMessage`)).toBe('internal error while creating the fulfillment');
  });

  it('makes the fulfillment dead when the reseller store no longer exists, without calling a platform', async () => {
    dynamo.on(GetCommand, RESELLER_KEY).resolves({});

    expect(await processFulfillmentMessage(deps, record(message()))).toBe('done');
    expect(createFulfillment).not.toHaveBeenCalled();
    expect(setsUnder(update(), ENTRY)).toMatchObject({
      status: 'dead',
      errorMessage: 'reseller store rst_1 no longer exists',
    });
    expect(setsUnder(update(), ENTRY)).not.toHaveProperty('attempts');
  });

  it.each([
    ['already delivered', job(entry({ status: 'delivered' }))],
    ['without its entry', job()],
    ['of a job that is gone', undefined],
  ])('drops a message %s without calling the platform', async (_, item) => {
    dynamo.on(GetCommand, JOB_KEY).resolves({ Item: item });

    expect(await processFulfillmentMessage(deps, record(message()))).toBe('done');
    expect(createFulfillment).not.toHaveBeenCalled();
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('drops a malformed message', async () => {
    expect(await processFulfillmentMessage(deps, { messageId: 'm', body: '{"jobId":"sj_1"}' } as SQSRecord)).toBe(
      'done',
    );
    expect(dynamo.calls()).toHaveLength(0);
  });

  it('treats a duplicate that finds the entry delivered by another worker as done', async () => {
    createFulfillment.mockResolvedValue({ fulfillmentId: '9100' });
    dynamo.on(UpdateCommand).rejects(conditionFailed());
    dynamo
      .on(GetCommand, JOB_KEY)
      .resolvesOnce({ Item: job(entry()) })
      .resolves({ Item: job(entry({ status: 'delivered' })) });

    await expect(processFulfillmentMessage(deps, record(message()))).resolves.toBe('done');
  });
});

describe('fulfillment dead letters: processDeadFulfillmentMessage', () => {
  beforeEach(() => {
    dynamo
      .on(GetCommand, JOB_KEY)
      .resolves({ Item: job(entry({ status: 'failed', attempts: 3, errorMessage: 'storeplatform_b answered 503' })) });
    dynamo.on(UpdateCommand).resolves({});
  });

  it('puts the message back on the queue, 15 minutes later, while redrives remain', async () => {
    await processDeadFulfillmentMessage(record(message({ redrives: 1 })), 3);

    expect(sqs.commandCalls(SendMessageCommand)[0].args[0].input).toMatchObject({
      DelaySeconds: 900,
      MessageBody: JSON.stringify(message({ redrives: 2 })),
    });
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('makes the fulfillment dead with the last reason once the redrives are used up', async () => {
    await processDeadFulfillmentMessage(record(message({ redrives: 3 })), 3);

    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
    expect(setsUnder(update(), ENTRY)).toMatchObject({
      status: 'dead',
      errorMessage: 'storeplatform_b answered 503; gave up after 3 attempts',
    });
    expect(setsUnder(update(), ENTRY)).not.toHaveProperty('attempts');
  });

  it('leaves a delivered fulfillment alone', async () => {
    dynamo.on(GetCommand, JOB_KEY).resolves({ Item: job(entry({ status: 'delivered' })) });

    await processDeadFulfillmentMessage(record(message({ redrives: 9 })), 3);

    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
  });
});

describe('fulfillments webhook: acceptFulfillment', () => {
  const payload = fulfillmentPayload();
  const sources = [{ id: 'sst_1' }, { id: 'sst_2' }];
  const jobLookup = (sourceStoreId: string, orderId: string) =>
    requiring(
      { GSI2PK: `SRCORDER#${sourceStoreId}#${orderId}`, GSI2SK: { begins_with: 'SJ#' } },
      { IndexName: 'GSI2' },
    );
  const sent = () => sqs.commandCalls(SendMessageCommand).map((c) => JSON.parse(c.args[0].input.MessageBody!));

  beforeEach(() => {
    dynamo.on(QueryCommand).resolves({ Items: [] });
    dynamo.on(UpdateCommand).resolves({});
  });

  it(
    'records the fulfillment on the matching job (creating its map) and enqueues it; ' + 'the other store gets nothing',
    async () => {
      dynamo.on(QueryCommand, jobLookup('sst_1', '7002')).resolves({ Items: [{ id: 'sj_1' }] });
      dynamo.on(GetCommand, JOB_KEY).resolves({ Item: job() });

      await acceptFulfillment(sources, payload);

      const accepted = update();
      // The job joins GSI3's propagating jobs while the fulfillment is on its way.
      expect(Object.keys(setsOf(accepted))).toEqual(['GSI3PK', 'GSI3SK', 'fulfillments']);
      expect(removesOf(accepted)).toEqual([]);
      expect(setsAttribute(accepted, 'GSI3PK')).toBe(inFlight.propagating.partition('sj_1'));
      expect(setsAttribute(accepted, 'fulfillments')).toEqual({
        9001: expect.objectContaining({
          sourceFulfillmentId: '9001',
          status: 'pending',
          trackingNumber: '1Z999',
          trackingCompany: 'UPS',
          attempts: 0,
          resellerFulfillmentId: null,
        }),
      });
      expect(sent()).toEqual([{ jobId: 'sj_1', sourceFulfillmentId: '9001', tracking }]);
      expect(dynamo.commandCalls(PutCommand)).toHaveLength(0);
    },
  );

  it('finds a job that recorded the GraphQL id of the order the webhook names by number', async () => {
    dynamo.on(QueryCommand, jobLookup('sst_1', 'gid://platform/Order/7002')).resolves({ Items: [{ id: 'sj_1' }] });
    dynamo.on(GetCommand, JOB_KEY).resolves({ Item: job() });

    await acceptFulfillment([{ id: 'sst_1' }], payload);

    expect(sent()).toEqual([expect.objectContaining({ jobId: 'sj_1' })]);
  });

  it('adds a second fulfillment of the order beside the first, and re-arms one that is not delivered', async () => {
    dynamo.on(QueryCommand, jobLookup('sst_1', '7002')).resolves({ Items: [{ id: 'sj_1' }] });
    dynamo.on(GetCommand, JOB_KEY).resolves({ Item: job(entry({ sourceFulfillmentId: '9000', status: 'delivered' })) });
    await acceptFulfillment([{ id: 'sst_1' }], payload);
    expect(Object.keys(setsOf(update()))).toEqual(['GSI3PK', 'GSI3SK', ENTRY]);
    expect(removesOf(update())).toEqual([]);
    expect(conditionOf(update())).toBe(`attribute_exists(fulfillments) AND attribute_not_exists(${ENTRY})`);

    dynamo.on(GetCommand, JOB_KEY).resolves({ Item: job(entry({ status: 'dead', attempts: 2 })) });
    await acceptFulfillment([{ id: 'sst_1' }], payload);
    expect(setsUnder(update(1), ENTRY)).toMatchObject({
      status: 'pending',
      errorMessage: null,
      trackingNumber: '1Z999',
    });
    const touched = [...Object.keys(setsOf(update(1))), ...removesOf(update(1))];
    expect(touched.filter((path) => /(^|\.)(attempts|receivedAt)$/.test(path))).toEqual([]);
    expect(conditionOf(update(1))).toBe(`${ENTRY}.status <> "delivered"`);
    expect(sent()).toHaveLength(2);
  });

  it('sends nothing again for a fulfillment already delivered (a redelivered webhook)', async () => {
    dynamo.on(QueryCommand, jobLookup('sst_1', '7002')).resolves({ Items: [{ id: 'sj_1' }] });
    dynamo.on(GetCommand, JOB_KEY).resolves({ Item: job(entry({ status: 'delivered' })) });

    await acceptFulfillment([{ id: 'sst_1' }], payload);

    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
    expect(sent()).toHaveLength(0);
  });

  it('re-reads the job and tries again when another writer changed it first', async () => {
    dynamo.on(QueryCommand, jobLookup('sst_1', '7002')).resolves({ Items: [{ id: 'sj_1' }] });
    dynamo
      .on(GetCommand, JOB_KEY)
      .resolvesOnce({ Item: job() })
      .resolves({ Item: job(entry({ sourceFulfillmentId: '9000' })) });
    dynamo.on(UpdateCommand).rejectsOnce(conditionFailed()).resolves({});

    await acceptFulfillment([{ id: 'sst_1' }], payload);

    expect(Object.keys(setsOf(update(1)))).toEqual(['GSI3PK', 'GSI3SK', ENTRY]);
    expect(removesOf(update(1))).toEqual([]);
    expect(sent()).toHaveLength(1);
  });

  it('keeps a fulfillment that matches no job, for each verified store, for seven days', async () => {
    const before = Math.floor(Date.now() / 1000);
    await acceptFulfillment(sources, payload);

    const kept = dynamo.commandCalls(PutCommand).map((c) => c.args[0].input.Item!);
    expect(kept.map((item) => [item.PK, item.SK])).toEqual([
      ['FULORDER#sst_1#7002', 'KEPT#9001'],
      ['FULORDER#sst_2#7002', 'KEPT#9001'],
    ]);
    expect(kept[0]).toMatchObject({
      sourceStoreId: 'sst_1',
      sourceOrderId: '7002',
      sourceFulfillmentId: '9001',
      tracking,
    });
    expect(kept[0].expiresAt).toBeGreaterThanOrEqual(before + 7 * 24 * 3600);
    // Nothing goes to a reseller: only each kept fulfillment's delayed recheck is queued.
    expect(sent()).toEqual([
      { recheck: { sourceStoreId: 'sst_1', sourceOrderId: '7002', sourceFulfillmentId: '9001' } },
      { recheck: { sourceStoreId: 'sst_2', sourceOrderId: '7002', sourceFulfillmentId: '9001' } },
    ]);
    expect(sqs.commandCalls(SendMessageCommand)[0].args[0].input.DelaySeconds).toBe(60);
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it.each(['cancelled', 'failure', 'error'])(
    'passes on nothing for a fulfillment whose status is %s',
    async (status) => {
      await acceptFulfillment(sources, { ...payload, status });
      expect(dynamo.calls()).toHaveLength(0);
    },
  );

  it('refuses a payload without an order id with validation_failed naming order_id', async () => {
    await expect(acceptFulfillment(sources, { id: 1 })).rejects.toMatchObject({
      code: 'validation_failed',
      param: 'order_id',
    });
  });
});

/** A fulfillment kept for order 7002 of sst_1 until its job records the supplier order. */
const kept = {
  PK: 'FULORDER#sst_1#7002',
  SK: 'KEPT#9001',
  sourceStoreId: 'sst_1',
  sourceOrderId: '7002',
  sourceFulfillmentId: '9001',
  tracking,
  receivedAt: '2026-11-21T04:00:00.000Z',
  expiresAt: 4_000_000_000,
};

describe('releaseKeptFulfillments (sync worker hook)', () => {
  beforeEach(() => {
    dynamo.on(QueryCommand).resolves({ Items: [kept] });
    dynamo.on(GetCommand, JOB_KEY).resolves({ Item: job() });
    dynamo.on(UpdateCommand).resolves({});
  });

  it('sends each fulfillment kept for the supplier order to the job, then deletes it', async () => {
    await releaseKeptFulfillments({ id: 'sj_1', sourceStoreId: 'sst_1', sourceOrderId: 'gid://platform/Order/7002' });

    const query = dynamo.commandCalls(QueryCommand)[0].args[0].input;
    expect(query).toMatchObject({ ConsistentRead: true });
    expect(requiresOf(query)).toEqual({ PK: 'FULORDER#sst_1#7002', SK: { begins_with: 'KEPT#' } });
    expect(dynamo.commandCalls(PutCommand)).toHaveLength(0);
    expect(setsAttribute(update(), 'fulfillments')).toEqual({
      9001: expect.objectContaining({ receivedAt: kept.receivedAt, status: 'pending' }),
    });
    expect(JSON.parse(sqs.commandCalls(SendMessageCommand)[0].args[0].input.MessageBody!)).toEqual({
      jobId: 'sj_1',
      sourceFulfillmentId: '9001',
      tracking,
    });
    expect(dynamo.commandCalls(DeleteCommand)[0].args[0].input.Key).toEqual({ PK: kept.PK, SK: kept.SK });
  });

  it('skips a kept fulfillment whose time to live has passed', async () => {
    dynamo.on(QueryCommand).resolves({ Items: [{ ...kept, expiresAt: 1 }] });

    await releaseKeptFulfillments({ id: 'sj_1', sourceStoreId: 'sst_1', sourceOrderId: '7002' });

    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
  });

  it('never fails the sync job: an error is logged and the fulfillment stays kept', async () => {
    sqs.on(SendMessageCommand).rejects(new Error('SQS unavailable'));

    await expect(
      releaseKeptFulfillments({ id: 'sj_1', sourceStoreId: 'sst_1', sourceOrderId: '7002' }),
    ).resolves.toBeUndefined();
    expect(dynamo.commandCalls(DeleteCommand)).toHaveLength(0);
  });

  it('does nothing for a job without a supplier order', async () => {
    await releaseKeptFulfillments({ id: 'sj_1', sourceStoreId: 'sst_1', sourceOrderId: null });
    expect(dynamo.calls()).toHaveLength(0);
  });
});

describe('presentSyncJob: propagation', () => {
  it('shows null and an empty list before any fulfillment, the latest and all of them after', () => {
    expect(presentSyncJob(syncJobFrom(job()))).toMatchObject({ fulfillment: null, fulfillments: [] });

    const first = entry({ sourceFulfillmentId: '9001', receivedAt: '2026-11-21T04:00:00.000Z', status: 'delivered' });
    const second = entry({ sourceFulfillmentId: '9002', receivedAt: '2026-11-21T05:00:00.000Z' });
    const shown = presentSyncJob(syncJobFrom({ ...job(), fulfillments: { 9002: second, 9001: first } }));

    expect(shown.fulfillments.map((f) => f.sourceFulfillmentId)).toEqual(['9001', '9002']);
    expect(shown.fulfillment).toEqual({ ...second, lineItems: null, shipmentStatus: null, firstScanAt: null });
  });
});

describe('the delayed recheck of a kept fulfillment', () => {
  const recheck = record({ recheck: { sourceStoreId: 'sst_1', sourceOrderId: '7002', sourceFulfillmentId: '9001' } });
  const KEPT_KEY = { Key: { PK: 'FULORDER#sst_1#7002', SK: 'KEPT#9001' } };

  beforeEach(() => {
    dynamo.on(QueryCommand).resolves({ Items: [] });
    dynamo.on(UpdateCommand).resolves({});
  });

  it('sends the fulfillment to a job that completed around the moment it was kept, then deletes it', async () => {
    dynamo.on(GetCommand, KEPT_KEY).resolves({ Item: kept });
    dynamo.on(GetCommand, JOB_KEY).resolves({ Item: job() });
    dynamo
      .on(
        QueryCommand,
        requiring({ GSI2PK: 'SRCORDER#sst_1#7002', GSI2SK: { begins_with: 'SJ#' } }, { IndexName: 'GSI2' }),
      )
      .resolves({ Items: [{ id: 'sj_1' }] });

    expect(await processFulfillmentMessage(deps, recheck)).toBe('done');

    expect(JSON.parse(sqs.commandCalls(SendMessageCommand)[0].args[0].input.MessageBody!)).toEqual({
      jobId: 'sj_1',
      sourceFulfillmentId: '9001',
      tracking,
    });
    expect(dynamo.commandCalls(DeleteCommand)[0].args[0].input.Key).toEqual(KEPT_KEY.Key);
    expect(createFulfillment).not.toHaveBeenCalled();
  });

  it('leaves a fulfillment kept while no job has placed its order', async () => {
    dynamo.on(GetCommand, KEPT_KEY).resolves({ Item: kept });

    expect(await processFulfillmentMessage(deps, recheck)).toBe('done');

    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
    expect(dynamo.commandCalls(DeleteCommand)).toHaveLength(0);
  });

  it('does nothing when the job released it meanwhile', async () => {
    dynamo.on(GetCommand, KEPT_KEY).resolves({});

    expect(await processFulfillmentMessage(deps, recheck)).toBe('done');

    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(0);
  });

  it('is not a fulfillment to mark dead when it ends in the dead-letter queue', async () => {
    await processDeadFulfillmentMessage(recheck, 3);
    expect(dynamo.calls()).toHaveLength(0);
    expect(sqs.calls()).toHaveLength(0);
  });
});
