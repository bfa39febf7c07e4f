import { DecryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { JsonText, withResellerOrder } from '../../shared/domain/orders.js';
import { TAGGED_ATTRIBUTE } from '../../shared/order-flow/order-sync-job.js';
import { parseSyncQueueMessage } from '../../shared/order-flow/placing.js';
import { parseFulfillmentQueueMessage } from '../../shared/order-flow/propagating.js';
import {
  claimTag,
  INLINE_TAG_MS,
  MAX_TAG_LENGTH,
  parseTagMessage,
  requestTag,
  routedTag,
  tagNow,
} from '../../shared/order-flow/tagging.js';
import { PlatformError } from '../../shared/platforms/http.js';
import { setsOf } from '../command-meaning.js';
import { fakeDeps } from './fake-deps.js';
import { storeFields } from './job-fixtures.js';

/** CONTRACT.md §12.5: the tag's text, its message, and the supplier order's `reseller_order`. */
describe('routedTag', () => {
  it('is routed-<vendorTag>, lower-cased', () => {
    expect(routedTag('Acme')).toBe('routed-acme');
    expect(routedTag('ACME Tools')).toBe('routed-acme tools');
  });

  it('is cut to 40 characters', () => {
    const tag = routedTag(`Vendor${'X'.repeat(60)}`);
    expect(tag).toHaveLength(MAX_TAG_LENGTH);
    expect(tag).toBe(`routed-vendor${'x'.repeat(MAX_TAG_LENGTH - 13)}`);
  });
});

describe('parseTagMessage', () => {
  it('reads a tag message with what it carries', () => {
    const body = JSON.stringify({
      tagJobId: 'sj_1',
      requestId: 'req_1',
      redrives: 2,
      throttledSince: '2026-11-27T10:00:00.000Z',
      notBefore: 1_800_000_000_000,
    });
    expect(parseTagMessage(body)).toEqual({
      tagJobId: 'sj_1',
      requestId: 'req_1',
      redrives: 2,
      throttledSince: '2026-11-27T10:00:00.000Z',
      notBefore: 1_800_000_000_000,
    });
  });

  it('reads what the message carries of its job, when it names its own job and holds every field', () => {
    const of = { id: 'sj_1', resellerStoreId: 'rst_1', externalOrderId: '5551234', vendorTag: 'Acme' };
    expect(parseTagMessage(JSON.stringify({ tagJobId: 'sj_1', of }))).toEqual({ tagJobId: 'sj_1', redrives: 0, of });
    // Another job's, or short of a field: read as a message of before, whose try reads its job.
    expect(parseTagMessage(JSON.stringify({ tagJobId: 'sj_2', of }))?.of).toBeUndefined();
    expect(parseTagMessage(JSON.stringify({ tagJobId: 'sj_1', of: { ...of, vendorTag: null } }))?.of).toBeUndefined();
  });

  it('refuses what is not a tag message: a fulfillment, a recheck, malformed JSON', () => {
    expect(parseTagMessage(JSON.stringify({ jobId: 'sj_1', sourceFulfillmentId: 'f1', tracking: {} }))).toBeUndefined();
    expect(parseTagMessage(JSON.stringify({ recheck: { sourceStoreId: 'sst_1' } }))).toBeUndefined();
    expect(parseTagMessage(JSON.stringify({ tagJobId: 7 }))).toBeUndefined();
    expect(parseTagMessage('{')).toBeUndefined();
  });
});

describe('withResellerOrder', () => {
  it('appends reseller_order to the attributes as sent, their text untouched', () => {
    const sent = new JsonText('[ {"name":"gift","value":1e400} ]');
    expect(withResellerOrder(sent, '#1001').text).toBe(
      '[ {"name":"gift","value":1e400} ,{"name":"reseller_order","value":"#1001"}]',
    );
  });

  it('is reseller_order alone when the order has no attributes, or an empty list', () => {
    const alone = '[{"name":"reseller_order","value":"#7"}]';
    expect(withResellerOrder(null, '#7').text).toBe(alone);
    expect(withResellerOrder(new JsonText('[ ]'), '#7').text).toBe(alone);
    expect(withResellerOrder([], '#7').text).toBe(alone);
  });

  it('writes a name with quotes as JSON', () => {
    expect(JSON.parse(withResellerOrder(null, 'A "quoted" #1').text)).toEqual([
      { name: 'reseller_order', value: 'A "quoted" #1' },
    ]);
  });
});

describe("parseFulfillmentQueueMessage: the fulfillment queue's one message type", () => {
  const tracking = { company: null, number: 'T1', url: null, numbers: ['T1'], urls: [] };
  it('tags each body with its kind, read once from its key field', () => {
    expect(
      parseFulfillmentQueueMessage(JSON.stringify({ jobId: 'sj_1', sourceFulfillmentId: 'f1', tracking })),
    ).toEqual({
      kind: 'propagation',
      message: { jobId: 'sj_1', sourceFulfillmentId: 'f1', tracking, redrives: 0 },
    });
    const recheck = { sourceStoreId: 'sst_1', sourceOrderId: 'o1', sourceFulfillmentId: 'f1' };
    expect(parseFulfillmentQueueMessage(JSON.stringify({ recheck }))).toEqual({
      kind: 'recheck',
      message: { recheck },
    });
    expect(parseFulfillmentQueueMessage(JSON.stringify({ tagJobId: 'sj_2', requestId: 'r' }))).toEqual({
      kind: 'tag',
      message: { tagJobId: 'sj_2', redrives: 0, requestId: 'r' },
    });
  });

  it('refuses a body whose key field names a kind it does not fit, and one of no kind', () => {
    expect(parseFulfillmentQueueMessage(JSON.stringify({ recheck: { sourceStoreId: 'sst_1' } }))).toBeUndefined();
    expect(parseFulfillmentQueueMessage(JSON.stringify({ tagJobId: 7 }))).toBeUndefined();
    expect(parseFulfillmentQueueMessage(JSON.stringify({ jobId: 'sj_1' }))).toBeUndefined();
    expect(parseFulfillmentQueueMessage('[]')).toBeUndefined();
  });
});

describe("parseSyncQueueMessage: the sync queue's one message type", () => {
  const job = { jobId: 'sj_1', generation: 2, trigger: 'webhook', requestId: 'r' };
  it('tags each body with its kind, read once from its purpose (none: a placement)', () => {
    expect(parseSyncQueueMessage(JSON.stringify(job))).toEqual({ kind: 'place', message: job });
    for (const purpose of ['cancel', 'update', 'release', 'remove', 'return'] as const)
      expect(parseSyncQueueMessage(JSON.stringify({ ...job, purpose }))).toEqual({
        kind: purpose,
        message: { ...job, purpose },
      });
  });

  it('refuses a body that names no job', () => {
    expect(parseSyncQueueMessage(JSON.stringify({ generation: 1, purpose: 'cancel' }))).toBeUndefined();
    expect(parseSyncQueueMessage(JSON.stringify({ jobId: 'sj_1' }))).toBeUndefined();
    expect(parseSyncQueueMessage('[]')).toBeUndefined();
  });
});

describe('a tag’s try reads nothing its message carries', () => {
  const dynamo = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);
  beforeEach(() => {
    dynamo.reset();
    sqs.reset();
  });
  const job = {
    id: 'sj_1',
    resellerStoreId: 'rst_1',
    externalOrderId: '5551234',
    vendorTag: 'Acme',
    tagged: undefined,
  };

  it('asks for the tag with what its try needs of the job, and claims it without a read', async () => {
    sqs.on(SendMessageCommand).resolves({});
    await requestTag(job, 'req_1');
    const body = sqs.commandCalls(SendMessageCommand)[0].args[0].input.MessageBody!;
    const message = parseTagMessage(body)!;
    expect(message.of).toEqual({ id: 'sj_1', resellerStoreId: 'rst_1', externalOrderId: '5551234', vendorTag: 'Acme' });
    expect(await claimTag(message)).toEqual({ job: message.of, throttledSince: undefined });
    expect(dynamo.calls()).toHaveLength(0);
  });

  it('reads the job of a message of before: none here, nothing to claim', async () => {
    dynamo.on(GetCommand).resolves({ Item: undefined });
    dynamo.on(QueryCommand).resolves({ Items: [] });
    expect(await claimTag({ tagJobId: 'sj_1' })).toBeUndefined();
    expect(dynamo.calls().length).toBeGreaterThan(0);
  });
});

describe('the tag of a job being placed, tried at once by its placing worker before the completion (tagNow)', () => {
  const dynamo = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);
  const kmsMock = mockClient(KMSClient);
  const addOrderTags = jest.fn();
  const deps = fakeDeps({ addOrderTags });
  /** A reseller store of its own per test: the tags of a batch share its read a moment. */
  let n = 0;
  let job: { id: string; resellerStoreId: string; externalOrderId: string; vendorTag: string; tagged: null };
  beforeEach(() => {
    dynamo.reset();
    sqs.reset();
    kmsMock.reset();
    addOrderTags.mockReset();
    kmsMock
      .on(DecryptCommand)
      .callsFake((input) => ({ Plaintext: Buffer.from(`plain-${input.EncryptionContext.field}`) }));
    job = { id: 'sj_1', resellerStoreId: `rst_now${++n}`, externalOrderId: '5551234', vendorTag: 'Acme', tagged: null };
    dynamo.on(GetCommand).resolves({
      Item: {
        id: job.resellerStoreId,
        name: 'Reseller',
        ...storeFields('storeplatform_a', 'reseller.myshopify.com'),
      },
    });
    dynamo.on(UpdateCommand).resolves({});
  });
  afterEach(() => jest.useRealTimers());
  const taggedWrites = () =>
    dynamo.commandCalls(UpdateCommand).map((call) => setsOf(call.args[0].input)[TAGGED_ATTRIBUTE]);

  it('tags the reseller order and answers it for the completion to record, without a write nor a message', async () => {
    addOrderTags.mockResolvedValue('tagged');
    expect(await tagNow(deps, job)).toEqual({ tagged: true, message: false });
    expect(addOrderTags).toHaveBeenCalledTimes(1);
    expect(addOrderTags.mock.calls[0].slice(1)).toEqual(['5551234', ['routed-acme']]);
    // The completion's own UpdateItem writes it (test/unit/sync-worker.test.ts).
    expect(taggedWrites()).toEqual([]);
    expect(sqs.calls()).toHaveLength(0);
  });

  it('answers nothing to record for a platform that takes no tags, and no message', async () => {
    addOrderTags.mockResolvedValue('unsupported');
    expect(await tagNow(deps, job)).toEqual({ message: false });
    expect(taggedWrites()).toEqual([]);
  });

  it('ends a refused tag as the queue would: tagged false, no message', async () => {
    addOrderTags.mockRejectedValue(
      new PlatformError({ platform: 'storeplatform_a', status: 404, retryable: false, message: 'Not Found' }),
    );
    expect(await tagNow(deps, job)).toEqual({ tagged: false, message: false });
    expect(taggedWrites()).toEqual([]);
  });

  it('leaves a throttled tag to its message, writing nothing', async () => {
    addOrderTags.mockRejectedValue(
      new PlatformError({ platform: 'storeplatform_a', status: 429, retryable: true, message: 'Too Many Requests' }),
    );
    expect(await tagNow(deps, job)).toEqual({ message: true });
    expect(taggedWrites()).toEqual([]);
  });

  it(`leaves a tag with no answer within ${INLINE_TAG_MS} ms to its message`, async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    addOrderTags.mockReturnValue(new Promise(() => undefined));
    const tried = tagNow(deps, job);
    await jest.advanceTimersByTimeAsync(INLINE_TAG_MS);
    expect(await tried).toEqual({ message: true });
    expect(taggedWrites()).toEqual([]);
  });

  it('does nothing for a job tagged already, or one with no supplier tag', async () => {
    expect(await tagNow(deps, { ...job, tagged: true } as never)).toEqual({ message: false });
    expect(await tagNow(deps, { ...job, vendorTag: null } as never)).toEqual({ message: false });
    expect(dynamo.calls()).toHaveLength(0);
    expect(addOrderTags).not.toHaveBeenCalled();
  });
});
