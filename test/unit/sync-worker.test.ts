import { brotliCompressSync } from 'node:zlib';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DecryptCommand } from '@aws-sdk/client-kms';
import { ChangeMessageVisibilityCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { stringifyExact } from '../../shared/domain/orders.js';
import { processSyncMessage } from '../../shared/order-flow/placing-worker.js';
import { PlatformError } from '../../shared/platforms/http.js';
import { conditionOf, removesOf, requiresOf, requiring, setsAttribute, setsOf, writing } from '../command-meaning.js';
import { dynamo, kms as kmsMock, sqs } from './aws-mocks.js';
import { fakeDeps } from './fake-deps.js';
import { storeFields } from './job-fixtures.js';

/** What storeplatform_a's adapter throws. */
const platformAError = (fields: Omit<ConstructorParameters<typeof PlatformError>[0], 'platform'>) =>
  new PlatformError({ platform: 'storeplatform_a', ...fields });

const createOrder = jest.fn();
const findOrder = jest.fn();

const deps = fakeDeps({ createOrder, findOrder });

const record = (body: unknown, receiveCount = '1'): SQSRecord =>
  ({
    messageId: 'm-1',
    receiptHandle: 'rh-1',
    body: JSON.stringify(body),
    attributes: { ApproximateReceiveCount: receiveCount },
  }) as unknown as SQSRecord;

const job = {
  id: 'sj_1',
  ownerId: 'owner_a',
  resellerStoreId: 'rst_1',
  sourceStoreId: 'sst_1',
  status: 'processing',
  attempts: 1,
  generation: 2,
  externalOrderId: '5551234',
  resellerShopDomain: 'reseller.myshopify.com',
  createdAt: '2026-11-21T04:00:00.000Z',
  // The claim's time: when the attempt began.
  updatedAt: new Date().toISOString(),
  order: {
    currency: 'USD',
    email: 'a@example.com',
    line_items: [{ title: 'Mug', sku: 'MUG-1', variant_id: 11, quantity: 2, price: '13.00', vendor: 'Acme' }],
    shipping_lines: [{ title: 'Standard', price: '5.00' }],
    shipping_address: null,
  },
};
const sourceStore = {
  id: 'sst_1',
  resellerStoreId: 'rst_1',
  name: 'Acme',
  vendorTag: 'Acme',
  pricingMode: 'percentage',
  ...storeFields('storeplatform_a', 'acme.myshopify.com'),
  pricingConfig: { type: 'percentage', value: 30 },
};
/** The condition of a move made by a mover that knows the job only by its message: any of three states. */
const KNOWN_BY_MESSAGE = { status: ['pending', 'processing', 'failed'] };
const conditionFailed = () => Object.assign(new Error('condition'), { name: 'ConditionalCheckFailedException' });

/** Every mock reset, KMS decrypting a field to `plain-<field>`, the source store read. */
const resetMocks = () => {
  dynamo.reset();
  sqs.reset();
  kmsMock.reset();
  createOrder.mockReset();
  findOrder.mockReset();
  kmsMock
    .on(DecryptCommand)
    .callsFake((input) => ({ Plaintext: Buffer.from(`plain-${input.EncryptionContext.field}`) }));
  dynamo.on(GetCommand).resolves({ Item: sourceStore });
};

describe('sync worker: processSyncMessage', () => {
  beforeEach(() => {
    resetMocks();
  });

  const claimSucceeds = (claimed: Record<string, unknown> = job) =>
    dynamo
      .on(UpdateCommand)
      .resolves({ Attributes: { ...claimed, status: 'completed' } })
      .on(UpdateCommand, requiring(KNOWN_BY_MESSAGE))
      .resolves({ Attributes: claimed });
  /** One try of generation 2 whose claim succeeds (then `arrange` runs) and whose placing fails with `error`. */
  const placingFails = (error: unknown, arrange = () => {}) => {
    claimSucceeds();
    arrange();
    createOrder.mockRejectedValue(error);
    return processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }));
  };
  /** One try answered 429 with Retry-After `seconds`, its deferral moving the job to generation 3. */
  const placingThrottled = (seconds: number, message: string) =>
    placingFails(platformAError({ status: 429, retryable: true, retryAfterSeconds: seconds, message }), () =>
      dynamo
        .on(UpdateCommand, writing({ status: 'pending' }))
        .resolves({ Attributes: { ...job, status: 'pending', generation: 3 } }),
    );
  /** What a deferral sends: the job's message of its next generation, 3, as a redelivery. */
  const DEFERRED_MESSAGE = JSON.stringify({
    jobId: 'sj_1',
    generation: 3,
    trigger: 'redelivery',
    resellerStoreId: 'rst_1',
    externalOrderId: '5551234',
  });
  /** The n-th UpdateItem after the claim. */
  const update = (n = 1) => dynamo.commandCalls(UpdateCommand)[n].args[0].input;
  const timeout = () =>
    platformAError({
      status: 0,
      retryable: true,
      outcomeUnknown: true,
      message: 'storeplatform_a did not answer within 10000 ms',
    });

  it('drops a stale message without calling the platform', async () => {
    dynamo.on(UpdateCommand).rejects(conditionFailed());

    const outcome = await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 1 }));

    expect(outcome).toBe('done');
    expect(createOrder).not.toHaveBeenCalled();
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(1);
  });

  it('drops a malformed message', async () => {
    expect(await processSyncMessage(deps, { messageId: 'm', body: 'not json' } as SQSRecord)).toBe('done');
    expect(dynamo.calls()).toHaveLength(0);
  });

  it("shares a supplier's store read between the jobs of one batch: one GetItem for both", async () => {
    const shared = { ...sourceStore, id: 'sst_batch' };
    const batchJob = { ...job, sourceStoreId: 'sst_batch' };
    claimSucceeds(batchJob);
    dynamo.on(GetCommand, { Key: { PK: 'SST#sst_batch' } }).resolves({ Item: shared });
    createOrder.mockResolvedValue({ orderId: '7001' });

    const outcomes = await Promise.all([
      processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 })),
      processSyncMessage(deps, record({ jobId: 'sj_2', generation: 2 })),
    ]);

    expect(outcomes).toEqual(['done', 'done']);
    expect(createOrder).toHaveBeenCalledTimes(2);
    const storeReads = dynamo.commandCalls(GetCommand).filter((call) => call.args[0].input.Key?.PK === 'SST#sst_batch');
    expect(storeReads).toHaveLength(1);
  });

  it("tags the reseller's order in the same invocation once placed, recorded by the completion's write", async () => {
    // Stores of its own: their reads and secrets are kept a moment by the worker (shared reads, the cipher's cache).
    claimSucceeds({ ...job, vendorTag: 'Acme', sourceStoreId: 'sst_tag', resellerStoreId: 'rst_tag' });
    dynamo.on(GetCommand, { Key: { PK: 'SST#sst_tag' } }).resolves({ Item: { ...sourceStore, id: 'sst_tag' } });
    dynamo.on(GetCommand, { Key: { PK: 'RST#rst_tag' } }).resolves({ Item: { ...sourceStore, id: 'rst_tag' } });
    createOrder.mockResolvedValue({ orderId: '7001' });

    expect(await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }))).toBe('done');

    const tagWrites = dynamo.commandCalls(UpdateCommand).filter((call) => 'tg' in setsOf(call.args[0].input));
    expect(tagWrites.map((call) => setsOf(call.args[0].input).tg)).toEqual([true]);
    // No write of its own: the completion's one conditional UpdateItem records it (after the claim's).
    expect(setsOf(tagWrites[0].args[0].input)).toMatchObject({ status: 'completed', sourceOrderId: '7001' });
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(2);
    const bodies = sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input.MessageBody);
    expect(bodies.filter((body) => body?.includes('tagJobId'))).toEqual([]);
  });

  it.each([
    ['refused (404): the completion records tagged false, no message', 404, false, 0],
    ['throttled (429): the completion records nothing, the tag goes to its message', 429, undefined, 1],
  ])("a reseller order's tag %s", async (_case, status, tagged, messages) => {
    const n = status;
    claimSucceeds({ ...job, vendorTag: 'Acme', sourceStoreId: `sst_t${n}`, resellerStoreId: `rst_t${n}` });
    dynamo.on(GetCommand, { Key: { PK: `SST#sst_t${n}` } }).resolves({ Item: { ...sourceStore, id: `sst_t${n}` } });
    dynamo.on(GetCommand, { Key: { PK: `RST#rst_t${n}` } }).resolves({ Item: { ...sourceStore, id: `rst_t${n}` } });
    sqs.on(SendMessageCommand).resolves({});
    createOrder.mockResolvedValue({ orderId: '7001' });
    const addOrderTags = jest
      .fn()
      .mockRejectedValue(platformAError({ status, retryable: status === 429, message: 'no' }));

    expect(
      await processSyncMessage(fakeDeps({ createOrder, addOrderTags }), record({ jobId: 'sj_1', generation: 2 })),
    ).toBe('done');

    expect(addOrderTags).toHaveBeenCalledTimes(1);
    const [, completion] = dynamo.commandCalls(UpdateCommand).map((call) => setsOf(call.args[0].input));
    expect(completion).toMatchObject({ status: 'completed' });
    expect(completion.tg).toBe(tagged);
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(2);
    const bodies = sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input.MessageBody);
    expect(bodies.filter((body) => body?.includes('tagJobId'))).toHaveLength(messages);
  });

  it('places the order at supplier prices with the job id as idempotency key, then records it', async () => {
    claimSucceeds();
    createOrder.mockResolvedValue({ orderId: '7001' });

    const outcome = await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }));

    expect(outcome).toBe('done');
    const [store, order, key] = createOrder.mock.calls[0];
    expect(store).toEqual({
      platform: 'storeplatform_a',
      shopDomain: 'acme.myshopify.com',
      accessToken: 'plain-accessToken',
      webhookSecret: 'plain-webhookSecret',
      // Its answers' API version headers go to the store (CONTRACT.md §12.4).
      onApiVersion: expect.any(Function),
    });
    expect(key).toBe('sj_1');
    // A job written by older code (its items as a DynamoDB map) is read the same way.
    expect(JSON.parse(stringifyExact(order))).toMatchObject({
      source_identifier: 'reseller.myshopify.com:5551234:sj_1',
      line_items: [expect.objectContaining({ sku: 'MUG-1', quantity: 2, price: '10.00' })],
      shipping_lines: [{ title: 'Standard', price: '5.00' }],
      tags: 'reseller-order',
    });
    const complete = dynamo.commandCalls(UpdateCommand)[1].args[0].input;
    expect(setsOf(complete)).toMatchObject({
      status: 'completed',
      sourceOrderId: '7001',
      GSI2PK: 'SRCORDER#sst_1#7001',
    });
    expect(requiresOf(complete)).toMatchObject({ generation: 2 });
    expect(removesOf(complete).length).toBeGreaterThan(0);
    expect(removesOf(complete)).toEqual(expect.arrayContaining(['GSI3PK', 'GSI3SK']));
    expect(kmsMock.commandCalls(DecryptCommand)[0].args[0].input.EncryptionContext).toEqual({
      storeId: 'sst_1',
      field: 'accessToken',
    });
  });

  it('places only its own items of an order kept as its compressed raw body, numbers exactly as sent', async () => {
    const raw =
      '{"id":9007199254740993,"currency":"HUF","line_items":[' +
      '{"variant_id":123456789012345678901,"quantity":1,"price":"1990.50","vendor":"Acme"},' +
      '{"variant_id":2,"quantity":1,"price":"5.00","vendor":"Other"}],"shipping_address":{"zip":12345678901234567890}}';
    // A store of its own: a store's read is shared a moment (SOURCE_STORE_SHARED_MS), and this one's prices differ.
    const stored = {
      ...job,
      order: undefined,
      externalOrderId: '9007199254740993',
      vendorTag: 'Acme',
      sourceStoreId: 'sst_2',
    };
    const withBody = { ...stored, orderBody: brotliCompressSync(Buffer.from(raw)) };
    dynamo
      .on(UpdateCommand)
      .resolves({ Attributes: { ...withBody, status: 'completed' } })
      .on(UpdateCommand, requiring(KNOWN_BY_MESSAGE))
      .resolves({ Attributes: withBody });
    const atPar = { ...sourceStore, id: 'sst_2', pricingConfig: { type: 'percentage', value: 0 } };
    dynamo.on(GetCommand).resolves({ Item: atPar });
    createOrder.mockResolvedValue({ orderId: '7001' });

    await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }));

    const text = stringifyExact(createOrder.mock.calls[0][1]);
    expect(text).toContain('"source_identifier":"reseller.myshopify.com:9007199254740993:sj_1"');
    expect(text).toContain('"line_items":[{"title":"","sku":null,"variant_id":123456789012345678901,"quantity":1,');
    expect(text).toContain('"price":"1990.50","vendor":"Acme"}]');
    expect(text).toContain('"shipping_address":{"zip":12345678901234567890}');
  });

  it('makes a job in a currency outside ISO 4217 dead at once, naming it, without calling the platform', async () => {
    const withBody = {
      ...job,
      order: undefined,
      vendorTag: 'Acme',
      orderBody: brotliCompressSync(
        Buffer.from('{"id":1,"currency":"ZZZ","line_items":[{"quantity":1,"price":"1.00","vendor":"Acme"}]}'),
      ),
    };
    claimSucceeds();
    dynamo.on(UpdateCommand).resolves({ Attributes: withBody });
    dynamo.on(TransactWriteCommand).resolves({});

    expect(await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }))).toBe('done');

    expect(createOrder).not.toHaveBeenCalled();
    const kill = dynamo.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems![0].Update!;
    expect(setsOf(kill)).toMatchObject({ status: 'dead', errorMessage: expect.stringMatching(/ZZZ/) });
  });

  it('records a retryable platform failure as failed and has the message come back after the backoff', async () => {
    const outcome = await placingFails(
      platformAError({ status: 503, retryable: true, message: 'storeplatform_a answered 503' }),
    );

    expect(outcome).toBe('retry');
    const fail = dynamo.commandCalls(UpdateCommand)[1].args[0].input;
    expect(setsOf(fail)).toMatchObject({ status: 'failed' });
    expect(requiresOf(fail)).toMatchObject({ generation: 2 });
    // The first of SYNC_BACKOFF_SECONDS' default steps (300, 1800, 60), for a first receive.
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)[0].args[0].input).toMatchObject({
      ReceiptHandle: 'rh-1',
      VisibilityTimeout: 300,
    });
    expect(Date.parse(setsAttribute(fail, 'waitUntil'))).toBeGreaterThan(Date.now() + 295_000);
  });

  it('waits the step of each failed receive, the long one before the 3rd attempt, the last repeating', async () => {
    claimSucceeds();
    createOrder.mockRejectedValue(platformAError({ status: 500, retryable: true, message: 'down' }));
    for (const receive of ['2', '3', '7'])
      await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }, receive));

    expect(sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input.VisibilityTimeout)).toEqual([
      1800, 60, 60,
    ]);
  });

  it('makes the job dead at once, with an audit entry, when the platform refuses it', async () => {
    const outcome = await placingFails(
      platformAError({ status: 422, retryable: false, message: 'storeplatform_a answered 422: line_items invalid' }),
    );

    expect(outcome).toBe('done');
    const items = dynamo.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!;
    expect(setsOf(items[0].Update!)).toMatchObject({
      status: 'dead',
      errorMessage: 'storeplatform_a answered 422: line_items invalid',
    });
    expect(requiresOf(items[0].Update!)).toMatchObject({ status: 'processing' });
    expect(items[1].Put!.Item).toMatchObject({
      action: 'sync_job.dead',
      resourceId: 'sj_1',
      actorId: 'system',
      actor: { type: 'system', id: 'system' },
    });
  });

  it('defers a throttled job in one fresh message of its next generation, delayed by Retry-After', async () => {
    const outcome = await placingThrottled(7, 'storeplatform_a answered 429');

    expect(outcome).toBe('done');
    const sent = sqs.commandCalls(SendMessageCommand)[0].args[0].input;
    // Retry-After and up to a quarter more of jitter, never less.
    expect(sent.DelaySeconds).toBeGreaterThanOrEqual(7);
    expect(sent.DelaySeconds).toBeLessThanOrEqual(9);
    expect(sent.MessageBody).toBe(DEFERRED_MESSAGE);
    const defer = dynamo.commandCalls(UpdateCommand)[1].args[0].input;
    expect(setsOf(defer)).toMatchObject({ status: 'pending', generation: 3 });
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)).toHaveLength(0);
  });

  it('never puts an internal error text into the job', async () => {
    await placingFails(new Error('socket hang up at 10.0.0.1 with token abc'));

    const fail = dynamo.commandCalls(UpdateCommand)[1].args[0].input;
    expect(setsAttribute(fail, 'errorMessage')).toBe('internal error while placing the order');
  });

  it('surfaces a transaction conflict on the dead path as not dead (another writer moved it)', async () => {
    dynamo.on(TransactWriteCommand).rejects(new TransactionCanceledException({ message: 'cancelled', $metadata: {} }));

    await expect(
      placingFails(platformAError({ status: 401, retryable: false, message: 'storeplatform_a answered 401' })),
    ).resolves.toBe('done');
  });

  it('waits a Retry-After longer than 15 minutes in full: the message carries when it may be tried', async () => {
    await placingThrottled(3600, '429');

    const sent = sqs.commandCalls(SendMessageCommand)[0].args[0].input;
    expect(sent.DelaySeconds).toBe(900);
    const { notBefore } = JSON.parse(sent.MessageBody!);
    expect(notBefore - Date.now()).toBeGreaterThan(3590_000);
    const defer = dynamo.commandCalls(UpdateCommand)[1].args[0].input;
    // The reconciler's lease runs from the end of the whole wait.
    expect(Date.parse(setsAttribute(defer, 'waitUntil')) - Date.now()).toBeGreaterThan(3590_000);
  });

  it('sends on, without a claim or a supplier call, a message that came before its notBefore', async () => {
    const notBefore = Date.now() + 2_000_000;
    const message = { jobId: 'sj_1', generation: 3, trigger: 'redelivery', notBefore };

    expect(await processSyncMessage(deps, record(message))).toBe('done');

    expect(dynamo.calls()).toHaveLength(0);
    expect(createOrder).not.toHaveBeenCalled();
    const sent = sqs.commandCalls(SendMessageCommand)[0].args[0].input;
    expect(sent.DelaySeconds).toBe(900);
    expect(JSON.parse(sent.MessageBody!)).toEqual(message);
  });

  it('records the attempt in the write that completes the job, with what sent it and the platform status', async () => {
    claimSucceeds();
    createOrder.mockResolvedValue({ orderId: '7001', status: 201 });

    await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2, trigger: 'retry' }));

    expect(setsAttribute(update(), 'attemptLog')).toEqual([
      { n: 1, g: 2, t: 'retry', o: 'completed', s: 201, a: Date.parse(job.updatedAt), d: expect.any(Number) },
    ]);
  });

  it('calls a message SQS delivers again a redelivery', async () => {
    claimSucceeds();
    createOrder.mockResolvedValue({ orderId: '7001', status: 200 });

    await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }, '2'));

    expect(setsAttribute(update(), 'attemptLog')[0]).toMatchObject({ t: 'redelivery' });
  });

  it('looks the order up when the outcome is unknown, and completes the job with the order found', async () => {
    findOrder.mockResolvedValue({ orderId: '7009' });

    const outcome = await placingFails(timeout());

    expect(outcome).toBe('done');
    expect(findOrder.mock.calls[0][1]).toBe('reseller.myshopify.com:5551234:sj_1');
    expect(setsOf(update())).toMatchObject({
      status: 'completed',
      sourceOrderId: '7009',
      GSI2PK: 'SRCORDER#sst_1#7009',
    });
    expect(requiresOf(update())).toMatchObject({ status: 'processing' });
    expect(setsAttribute(update(), 'attemptLog')[0]).toMatchObject({
      o: 'found_existing',
      e: expect.stringContaining('the supplier has the order'),
    });
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)).toHaveLength(0);
  });

  it('fails the job as before when the lookup finds no order, or cannot tell', async () => {
    claimSucceeds();
    createOrder.mockRejectedValue(timeout());
    findOrder
      // Neither the job's identifier nor the one orders placed before carry.
      .mockResolvedValueOnce(null)
      .mockResolvedValueOnce(null)
      .mockRejectedValueOnce(platformAError({ status: 503, retryable: true, message: 'lookup 503' }));

    expect(await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }))).toBe('retry');
    expect(await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }))).toBe('retry');

    expect(setsOf(update(1))).toMatchObject({
      status: 'failed',
      errorMessage: 'storeplatform_a did not answer within 10000 ms',
    });
    expect(setsAttribute(update(3), 'errorMessage')).toBe(
      'storeplatform_a did not answer within 10000 ms; looking the order up failed: lookup 503',
    );
  });

  it('starts the throttling budget with the first throttled attempt, and folds throttled ones in a row', async () => {
    const earlier = {
      n: 1,
      g: 1,
      t: 'webhook',
      o: 'throttled',
      s: 429,
      e: 'storeplatform_a answered 429',
      a: Date.parse('2026-11-21T04:00:00.000Z'),
      d: 5,
    };
    claimSucceeds({ ...job, attempts: 2, attemptLog: [earlier], throttledSince: new Date().toISOString() });
    dynamo
      .on(UpdateCommand, writing({ status: 'pending' }))
      .resolves({ Attributes: { ...job, status: 'pending', generation: 3 } });
    createOrder.mockRejectedValue(platformAError({ status: 429, retryable: true, message: 'answered 429' }));

    await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }));

    const [folded] = setsAttribute(update(), 'attemptLog');
    expect(folded).toMatchObject({ n: 1, g: 2, o: 'throttled', c: 2, e: 'answered 429', a: earlier.a });
    expect(sqs.commandCalls(SendMessageCommand)[0].args[0].input.MessageBody).toBe(DEFERRED_MESSAGE);
  });

  it('makes a job throttled for longer than THROTTLE_BUDGET_SECONDS dead with the 429 reason', async () => {
    const since = new Date(Date.now() - 86_401_000).toISOString();
    const throttled = { n: 1, g: 2, t: 'webhook', o: 'throttled', s: 429, a: Date.parse(since), d: 5, c: 3 };
    claimSucceeds({ ...job, attempts: 4, throttledSince: since, attemptLog: [throttled] });
    createOrder.mockRejectedValue(platformAError({ status: 429, retryable: true, message: 'answered 429' }));

    expect(await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }))).toBe('done');

    // Every attempt was refused with a 429: nothing can have been placed, so nothing is looked up.
    expect(findOrder).not.toHaveBeenCalled();
    const kill = dynamo.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems![0].Update!;
    expect(setsOf(kill)).toMatchObject({
      status: 'dead',
      errorMessage: 'answered 429; throttled for more than 86400 s',
    });
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
  });

  it('looks the order up before a refusal makes dead a job an earlier attempt may have placed', async () => {
    const failed = { n: 1, g: 2, t: 'webhook', o: 'failed', e: 'timeout', a: Date.parse(job.createdAt), d: 10_000 };
    claimSucceeds({ ...job, attempts: 2, attemptLog: [failed] });
    createOrder.mockRejectedValue(platformAError({ status: 401, retryable: false, message: 'answered 401' }));
    findOrder.mockResolvedValue({ orderId: '7010' });

    expect(await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }))).toBe('done');

    expect(setsOf(update())).toMatchObject({ status: 'completed', sourceOrderId: '7010' });
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  describe('an order that can no longer be built (its stored order unreadable)', () => {
    const unplaceable = { ...job, order: undefined };

    it('is dead at once when no attempt can have placed it', async () => {
      claimSucceeds(unplaceable);
      dynamo.on(TransactWriteCommand).resolves({});

      expect(await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }))).toBe('done');

      expect(findOrder).not.toHaveBeenCalled();
      expect(createOrder).not.toHaveBeenCalled();
      const [move] = dynamo.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!;
      expect(setsOf(move.Update!)).toMatchObject({ status: 'dead' });
    });

    it('is completed, not dead, when an earlier attempt placed it', async () => {
      const failed = { n: 1, g: 2, t: 'webhook', o: 'failed', e: 'timeout', a: Date.parse(job.createdAt), d: 10_000 };
      claimSucceeds({ ...unplaceable, attempts: 2, attemptLog: [failed] });
      findOrder.mockResolvedValue({ orderId: '7011' });

      expect(await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }))).toBe('done');

      expect(createOrder).not.toHaveBeenCalled();
      expect(setsOf(update())).toMatchObject({ status: 'completed', sourceOrderId: '7011' });
      expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(0);
    });
  });

  describe('on a platform without idempotency keys (storeplatform_b: Shopify)', () => {
    const keyless = { ...deps, platforms: () => ({ ...deps.platforms(), takesIdempotencyKeys: false }) };
    const failed = { n: 1, g: 2, t: 'webhook', o: 'failed', e: '503', a: Date.parse(job.createdAt), d: 10 };
    const throttled = {
      n: 1,
      g: 2,
      t: 'webhook',
      o: 'throttled',
      s: 429,
      e: '429',
      a: Date.parse(job.createdAt),
      d: 5,
    };

    it('sends a first attempt at once, without a lookup', async () => {
      claimSucceeds();
      createOrder.mockResolvedValue({ orderId: '7001', status: 200 });

      await processSyncMessage(keyless, record({ jobId: 'sj_1', generation: 2 }));

      expect(findOrder).not.toHaveBeenCalled();
      expect(createOrder).toHaveBeenCalledTimes(1);
    });

    it.each([
      ['failed', failed],
      ['was answered THROTTLED', throttled],
    ])(
      'looks the order up before sending again a create whose earlier attempt %s, and takes the one found',
      async (_, earlier) => {
        claimSucceeds({ ...job, attempts: 2, attemptLog: [earlier] });
        findOrder.mockResolvedValue({ orderId: '7012' });

        expect(await processSyncMessage(keyless, record({ jobId: 'sj_1', generation: 2 }))).toBe('done');

        expect(createOrder).not.toHaveBeenCalled();
        expect(setsOf(update())).toMatchObject({ status: 'completed', sourceOrderId: '7012' });
        expect(setsAttribute(update(), 'attemptLog').at(-1)).toMatchObject({ o: 'found_existing' });
      },
    );

    it('sends it again when the lookup finds none, and waits when the lookup cannot tell', async () => {
      claimSucceeds({ ...job, attempts: 2, attemptLog: [failed] });
      findOrder.mockResolvedValueOnce(null).mockResolvedValueOnce(null);
      createOrder.mockResolvedValue({ orderId: '7013', status: 200 });
      await processSyncMessage(keyless, record({ jobId: 'sj_1', generation: 2 }));
      expect(createOrder).toHaveBeenCalledTimes(1);

      createOrder.mockClear();
      dynamo.resetHistory();
      findOrder.mockRejectedValueOnce(
        new PlatformError({ platform: 'storeplatform_b', status: 503, retryable: true, message: 'answered 503' }),
      );
      expect(await processSyncMessage(keyless, record({ jobId: 'sj_1', generation: 2 }))).toBe('retry');
      expect(createOrder).not.toHaveBeenCalled();
      expect(setsOf(update())).toMatchObject({ status: 'failed' });
    });

    it('looks first after a worker died mid-call (a claim that never recorded its end)', async () => {
      claimSucceeds({ ...job, attempts: 2, attemptLog: [] });
      findOrder.mockResolvedValue({ orderId: '7014' });

      await processSyncMessage(keyless, record({ jobId: 'sj_1', generation: 2 }, '2'));

      expect(createOrder).not.toHaveBeenCalled();
      expect(setsOf(update())).toMatchObject({ sourceOrderId: '7014' });
    });
  });
});

describe('sync worker: a job whose order was cancelled (CONTRACT.md §10.4)', () => {
  const flagged = {
    ...job,
    cancellation: {
      requestedBy: 'reseller',
      status: 'requested',
      reason: 'customer',
      requestedAt: '2026-11-21T05:00:00.000Z',
      endedAt: null,
    },
  };

  beforeEach(() => {
    resetMocks();
    sqs.on(SendMessageCommand).resolves({});
    dynamo.on(TransactWriteCommand).resolves({});
  });

  it('ends a claimed job that nothing placed cancelled, and places nothing', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: flagged });

    expect(await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }))).toBe('done');

    expect(createOrder).not.toHaveBeenCalled();
    expect(findOrder).not.toHaveBeenCalled();
    // Audited first, under an id that follows from the job (a repeat writes nothing), then moved.
    const [audit] = dynamo.commandCalls(PutCommand).map((c) => c.args[0].input);
    expect(audit.Item).toMatchObject({ action: 'sync_job.cancelled', resourceId: 'sj_1' });
    expect(conditionOf(audit)).toBe('attribute_not_exists(PK)');
    const cancel = dynamo
      .commandCalls(UpdateCommand)
      .map((c) => c.args[0].input)
      .at(-1)!;
    expect(setsOf(cancel)).toMatchObject({ status: 'cancelled' });
    expect(requiresOf(cancel)).toMatchObject({ status: 'processing' });
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  it('moves a job whose audit entry a crashed try already wrote, and writes no second entry', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: flagged });
    dynamo.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'exists', $metadata: {} }));

    expect(await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }))).toBe('done');

    const moves = dynamo.commandCalls(UpdateCommand).map((c) => setsOf(c.args[0].input));
    expect(moves.at(-1)).toMatchObject({ status: 'cancelled' });
    expect(dynamo.commandCalls(PutCommand)).toHaveLength(1);
  });

  it('looks up an order an earlier attempt may have placed: found, it completes, its cancellation sent', async () => {
    const placedBefore = {
      ...flagged,
      attempts: 2,
      attemptLog: [{ n: 1, g: 1, t: 'webhook', o: 'failed', a: Date.parse(job.createdAt), d: 5 }],
    };
    dynamo
      .on(UpdateCommand)
      .resolves({ Attributes: { ...placedBefore, status: 'completed', sourceOrderId: '7001' } })
      .on(UpdateCommand, requiring(KNOWN_BY_MESSAGE))
      .resolves({ Attributes: placedBefore });
    findOrder.mockResolvedValue({ orderId: '7001' });

    expect(await processSyncMessage(deps, record({ jobId: 'sj_1', generation: 2 }))).toBe('done');

    expect(createOrder).not.toHaveBeenCalled();
    expect(findOrder).toHaveBeenCalledWith(expect.anything(), 'reseller.myshopify.com:5551234:sj_1');
    const found = dynamo.commandCalls(UpdateCommand)[1].args[0].input;
    expect(setsOf(found)).toMatchObject({ status: 'completed', sourceOrderId: '7001' });
    const sent = sqs.commandCalls(SendMessageCommand).map((c) => JSON.parse(c.args[0].input.MessageBody!));
    expect(sent).toEqual([expect.objectContaining({ jobId: 'sj_1', purpose: 'cancel' })]);
  });
});
