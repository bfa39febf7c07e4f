import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { invokeRecorder, readStreamRange, receiveFrom, replayFailed } from '../../bin/cli/replay-failed.js';
import type { StreamFailure } from '../../lib/stream-mapping.js';
import { createResellerStore, serviceForSuite } from './support.js';
import { eventually, sendWebhook } from './webhooks.js';

/**
 * The event recorder never blocks and never loses silently (issue 39, item 3): the local stream poller
 * applies the deployed mapping's bisection, bounded retries and on-failure destination
 * (lib/stream-mapping.ts), so a record that keeps failing is set aside and the records behind it are
 * recorded; `npm run events -- replay-failed` (bin/cli/replay-failed.ts) then records what was set
 * aside, once however often it runs.
 */

jest.setTimeout(120_000);

let sqs: SQSClient;
let streams: DynamoDBStreamsClient;
let lambda: LambdaClient;
const secret = 'whsec_recorder_failures';

const { service } = serviceForSuite({}, 120_000);
beforeAll(async () => {
  const local = { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  sqs = new SQSClient({ ...local, endpoint: service.runtime.endpoints.sqs });
  // The command's own clients: the stream read from DynamoDB Local, the recorder by the runtime's Invoke API.
  streams = new DynamoDBStreamsClient({ ...local, endpoint: service.runtime.endpoints.dynamodb });
  lambda = new LambdaClient({ ...local, endpoint: service.runtime.endpoints.lambda });
}, 120_000);
afterAll(async () => {
  sqs?.destroy();
  streams?.destroy();
  lambda?.destroy();
});

/** The replay as the command runs it locally, with the recorder invoked as its mapping invokes it. */
const replay = () =>
  replayFailed({
    receive: receiveFrom(sqs, service.runtime.streamFailures.url),
    readRange: (info) => readStreamRange(streams, info),
    record: invokeRecorder(lambda, 'EventRecorder'),
  });

/** What the on-failure queue holds, read without taking it (hidden for no time). */
const failuresQueued = async () => {
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: service.runtime.streamFailures.url,
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 0,
    }),
  );
  return Messages.map((m) => m.Body ?? '');
};

const disconnectedEvents = async (owner: 'owner_a' | 'owner_b') =>
  (await service.api(owner).get('/v1/events?limit=100&type=store.disconnected')).body.data as { id: string }[];

const uninstall = (shopDomain: string) =>
  sendWebhook(service.runtime.apiUrl, '/v1/app/webhook', {
    shopDomain,
    secret,
    topic: 'app/uninstalled',
    body: { id: 1, myshopify_domain: shopDomain },
  });

describe('the event recorder with a record that keeps failing', () => {
  it('sets the record aside, records those behind it, and the replay records it exactly once', async () => {
    const poisoned = await createResellerStore(service.api('owner_b'), { webhookSecret: secret });
    const healthy = await createResellerStore(service.api('owner_a'), { webhookSecret: secret });
    // owner_b's event can never be written: its record fails every try.
    const fault = service.runtime.faults.inject({
      function: 'EventRecorder',
      service: 'DynamoDB',
      command: 'PutItem',
      match: { Item: { ownerId: 'owner_b', type: 'store.disconnected' } },
      action: 'fail',
      times: 1_000,
      message: 'poison record',
    });

    // The poisoned record first in the stream, the healthy one behind it.
    expect((await uninstall(poisoned.shopDomain)).status).toBe(200);
    await fault.reached;
    expect((await uninstall(healthy.shopDomain)).status).toBe(200);

    // Behind a record that never succeeds, owner_a's event is recorded all the same.
    await eventually(async () => (await disconnectedEvents('owner_a')).length === 1, 60_000);
    // The poisoned record's place is in the on-failure destination, as Lambda puts it: no item data.
    const [body] = await eventually(async () => {
      const queued = await failuresQueued();
      return queued.length ? queued : undefined;
    }, 60_000);
    const failure = JSON.parse(body) as StreamFailure;
    expect(failure.requestContext.condition).toBe('RetryAttemptsExhausted');
    // The first try, and the mapping's 3 retries.
    expect(failure.requestContext.approximateInvokeCount).toBe(4);
    expect(failure.DDBStreamBatchInfo).toMatchObject({
      shardId: expect.any(String),
      startSequenceNumber: expect.stringMatching(/^\d+$/),
      endSequenceNumber: expect.stringMatching(/^\d+$/),
      batchSize: 1,
    });
    expect(body).not.toContain(poisoned.shopDomain);
    expect(await disconnectedEvents('owner_b')).toEqual([]);
    // Tried 4 times alone (and once more before, if it shared its first batch with owner_a's), then left.
    expect(fault.hits.length).toBeGreaterThanOrEqual(4);
    expect(fault.hits.length).toBeLessThanOrEqual(5);

    // Mended (the fault gone), the replay records it, and deletes the message.
    service.runtime.faults.clear();
    const first = await replay();
    expect(first).toEqual({ replayed: 1, records: 1, kept: [] });
    expect(await failuresQueued()).toEqual([]);
    const [recorded] = await disconnectedEvents('owner_b');
    expect(recorded).toBeDefined();

    // The same batch replayed again (the message sent twice, or the command run twice): still one event.
    await sqs.send(new SendMessageCommand({ QueueUrl: service.runtime.streamFailures.url, MessageBody: body }));
    expect(await replay()).toEqual({ replayed: 1, records: 1, kept: [] });
    expect((await disconnectedEvents('owner_b')).map((e) => e.id)).toEqual([recorded.id]);
    expect((await disconnectedEvents('owner_a')).length).toBe(1);
  });

  it('keeps a message it cannot read as a stream batch, and says why', async () => {
    await sqs.send(new SendMessageCommand({ QueueUrl: service.runtime.streamFailures.url, MessageBody: '{"x":1}' }));
    const report = await replay();
    expect(report).toEqual({
      replayed: 0,
      records: 0,
      kept: [{ reason: 'not a change stream batch (no DDBStreamBatchInfo)' }],
    });
  });
});
