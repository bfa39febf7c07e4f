import { createHmac } from 'node:crypto';
import { DecryptCommand } from '@aws-sdk/client-kms';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { handler as appWebhook } from '../../functions/app-webhook.js';
import { handler as appWebhookWorker } from '../../functions/app-webhook-worker.js';
import { APP_TOPICS, type AppTopic, type AppTopicCall } from '../../shared/app-webhooks/topics.js';
import { dynamo, kms, sqs } from './aws-mocks.js';
import { callWebhook, webhookEvent } from './http-handler.js';

/**
 * The app webhook's table (shared/app-webhooks/topics.ts): a `queued` topic is kept and goes through
 * the app-webhook queue, its body never on the queue; its worker runs the topic's handler and forgets
 * the delivery only once handled. Issue 30's compliance topics are such entries; here a test topic.
 */

process.env.APP_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/app';

const SECRET = 'whsec_app';
const SHOP = 'shop-one.myshopify.com';
const BODY = JSON.stringify({ shop_domain: SHOP, customer: { id: 'ID', email: 'shopper@example.com' } })
  // An id past 2^53, as the platform may send it: it must keep its digits.
  .replace('"ID"', '9007199254740993');
const sign = (body: string) => createHmac('sha256', SECRET).update(body).digest('base64');

const handled: AppTopicCall[] = [];
const queuedTopic: AppTopic = {
  run: 'queued',
  handle: async (_deps, delivery) => {
    handled.push(delivery);
    if ((delivery.payload as { fail?: boolean }).fail) throw new Error('the handler failed');
  },
};

const call = (headers: Record<string, string>, body = BODY) =>
  callWebhook(appWebhook, webhookEvent('/v1/app/webhook', headers, body));
const delivery = (topic: string, body = BODY, webhookId?: string) => ({
  'x-platform-shop-domain': SHOP,
  'x-platform-hmac-sha256': sign(body),
  'x-platform-topic': topic,
  ...(webhookId ? { 'x-platform-webhook-id': webhookId } : {}),
});
const runWorker = async (messageBody: string) =>
  (await appWebhookWorker(
    { Records: [{ messageId: 'm1', receiptHandle: 'r1', body: messageBody, attributes: {} }] } as never,
    { awsRequestId: 'y', getRemainingTimeInMillis: () => 60_000 } as never,
  )) as { batchItemFailures: { itemIdentifier: string }[] };

beforeAll(() => {
  (APP_TOPICS as Record<string, AppTopic>)['test/queued'] = queuedTopic;
});
afterAll(() => {
  delete (APP_TOPICS as Record<string, AppTopic>)['test/queued'];
});
beforeEach(() => {
  handled.length = 0;
  dynamo.reset();
  sqs.reset();
  kms.reset();
  kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from(SECRET) });
  // The shop's one reseller store; no source store.
  dynamo.on(QueryCommand).callsFake((input) => ({
    Items: String(input.ExpressionAttributeValues[':prefix']).startsWith('RST#')
      ? [
          {
            id: 'rst_1',
            ownerId: 'owner_a',
            shopDomain: SHOP,
            createdAt: '2026-11-01T00:00:00.000Z',
            webhookSecret: 'Y2lwaGVy',
          },
        ]
      : [],
  }));
  dynamo.on(PutCommand).resolves({});
  dynamo.on(DeleteCommand).resolves({});
  dynamo.on(GetCommand).resolves({});
  sqs.on(SendMessageCommand).resolves({});
});

describe('POST /v1/app/webhook: a queued topic', () => {
  it('keeps the delivery, sends only its id on the app-webhook queue and answers 200 before handling it', async () => {
    const res = await call(delivery('test/queued'));
    expect(res.status).toBe(200);
    expect(handled).toEqual([]);
    const [put] = dynamo.commandCalls(PutCommand);
    const kept = put.args[0].input.Item!;
    expect(kept).toMatchObject({ topic: 'test/queued', shopDomain: SHOP, body: BODY });
    expect(kept.stores).toEqual([
      { kind: 'reseller', id: 'rst_1', ownerId: 'owner_a', resellerStoreId: null, deletedAt: null },
    ]);
    expect(put.args[0].input.ConditionExpression).toBe('attribute_not_exists(PK)');
    const [sent] = sqs.commandCalls(SendMessageCommand);
    const message = JSON.parse(sent.args[0].input.MessageBody!);
    expect(message).toEqual({ appWebhookId: kept.id, requestId: expect.any(String) });
    expect(sent.args[0].input.MessageBody).not.toMatch(/shopper|example\.com|9007199254740993/);
  });

  it('keeps a redelivery (same webhook id) under the same id, and sends its message again', async () => {
    await call(delivery('test/queued', BODY, 'wh-1'));
    dynamo.on(PutCommand).rejects(Object.assign(new Error('exists'), { name: 'ConditionalCheckFailedException' }));
    expect((await call(delivery('test/queued', BODY, 'wh-1'))).status).toBe(200);
    const ids = dynamo.commandCalls(PutCommand).map((c) => c.args[0].input.Item!.id);
    expect(new Set(ids).size).toBe(1);
    const sentIds = sqs
      .commandCalls(SendMessageCommand)
      .map((c) => JSON.parse(c.args[0].input.MessageBody!).appWebhookId);
    expect(sentIds).toEqual([ids[0], ids[0]]);
  });

  it('answers 401 and keeps nothing when the signature is bad', async () => {
    const res = await call({ ...delivery('test/queued'), 'x-platform-hmac-sha256': sign('other') });
    expect(res.status).toBe(401);
    expect(dynamo.commandCalls(PutCommand)).toHaveLength(0);
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
  });

  it('answers 200 to a topic not in the table, keeping and sending nothing', async () => {
    expect((await call(delivery('shop/update'))).status).toBe(200);
    expect(dynamo.commandCalls(PutCommand)).toHaveLength(0);
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
  });
});

describe('the app-webhook worker', () => {
  const kept = (body: string) => ({
    PK: 'APPHOOK#awh_1',
    SK: 'APPHOOK',
    id: 'awh_1',
    topic: 'test/queued',
    shopDomain: SHOP,
    stores: [{ kind: 'reseller', id: 'rst_1', ownerId: 'owner_a', resellerStoreId: null, deletedAt: null }],
    body,
    receivedAt: '2026-11-27T00:00:00.000Z',
    requestId: 'req_1',
    expiresAt: 0,
  });

  it('runs the handler on the kept body (exact integers), then forgets the delivery', async () => {
    dynamo.on(GetCommand).resolves({ Item: kept(BODY) });
    const out = await runWorker(JSON.stringify({ appWebhookId: 'awh_1' }));
    expect(out.batchItemFailures).toEqual([]);
    expect(handled).toHaveLength(1);
    expect(handled[0]).toMatchObject({ topic: 'test/queued', shopDomain: SHOP, stores: kept(BODY).stores });
    expect((handled[0].payload as { customer: { id: unknown } }).customer.id).toBe('9007199254740993');
    expect(dynamo.commandCalls(GetCommand)[0].args[0].input.ConsistentRead).toBe(true);
    expect(dynamo.commandCalls(DeleteCommand)[0].args[0].input.Key).toEqual({ PK: 'APPHOOK#awh_1', SK: 'APPHOOK' });
  });

  it('leaves a failed handling to SQS (the record reported failed) and keeps the delivery', async () => {
    dynamo.on(GetCommand).resolves({ Item: kept(JSON.stringify({ fail: true })) });
    const out = await runWorker(JSON.stringify({ appWebhookId: 'awh_1' }));
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
    expect(dynamo.commandCalls(DeleteCommand)).toHaveLength(0);
  });

  it('drops a message whose delivery was already handled, and a malformed one', async () => {
    dynamo.on(GetCommand).resolves({});
    expect((await runWorker(JSON.stringify({ appWebhookId: 'awh_1' }))).batchItemFailures).toEqual([]);
    expect((await runWorker('not json')).batchItemFailures).toEqual([]);
    expect(handled).toEqual([]);
    expect(dynamo.commandCalls(DeleteCommand)).toHaveLength(0);
  });
});
