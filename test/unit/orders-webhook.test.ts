import { createHmac } from 'node:crypto';
import { brotliDecompressSync } from 'node:zlib';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DecryptCommand } from '@aws-sdk/client-kms';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import {
  BatchGetCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { handler } from '../../functions/orders-webhook.js';
import { syncJobId } from '../../shared/core/ids.js';
import { routeLineItems } from '../../shared/domain/routing.js';
import { inFlight, lists } from '../../shared/dynamo/keys.js';
import { conditionOf, requiring } from '../command-meaning.js';
import { dynamo, kms, sqs } from './aws-mocks.js';

const SECRET = 'whsec_reseller';
const reseller = {
  id: 'rst_1',
  ownerId: 'owner_a',
  shopDomain: 'shop.myshopify.com',
  createdAt: '2026-11-01T00:00:00.000Z',
  deletedAt: null,
  webhookSecret: 'Y2lwaGVy',
};
const payload = {
  id: 5551234,
  currency: 'USD',
  line_items: [
    { id: 1, sku: 'A', title: 'A', quantity: 1, price: '13.00', vendor: 'Acme' },
    { id: 2, sku: 'B', title: 'B', quantity: 1, price: '13.00', vendor: 'Bolt' },
  ],
};

const event = (body: string, headers: Record<string, string>, base64 = false) =>
  ({
    version: '2.0',
    headers: { 'content-type': 'application/json', ...headers },
    body: base64 ? Buffer.from(body).toString('base64') : body,
    isBase64Encoded: base64,
    requestContext: { http: { method: 'POST', path: '/v1/orders/webhook' } },
  }) as never;
const sign = (body: string, secret = SECRET) => createHmac('sha256', secret).update(body).digest('base64');
const call = async (e: unknown) => {
  const res = (await handler(e as never, { awsRequestId: 'x', getRemainingTimeInMillis: () => 1000 } as never)) as {
    statusCode: number;
    body: string;
  };
  return { status: res.statusCode, body: JSON.parse(res.body) };
};

describe('Function: orders-webhook', () => {
  beforeEach(() => {
    dynamo.reset();
    sqs.reset();
    kms.reset();
    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from(SECRET) });
    dynamo.on(QueryCommand, { IndexName: 'GSI2' }).resolves({ Items: [reseller] });
    // A store whose secret was never rotated: only its current secret verifies.
    dynamo.on(GetCommand).resolves({ Item: {} });
    // The store's partition: its item (here none: the default routing policy) and its vendor tags (routingOf).
    dynamo.on(QueryCommand, requiring({}, { KeyConditionExpression: 'PK = :pk' })).resolves({
      Items: [
        { SK: 'VENDOR#Acme', sourceStoreId: 'sst_a' },
        { SK: 'VENDOR#Bolt', sourceStoreId: 'sst_b' },
      ],
    });
    sqs.on(SendMessageCommand).resolves({});
  });

  it('refuses a body signed with another secret before reading it, and writes nothing', async () => {
    const body = JSON.stringify(payload);
    const res = await call(
      event(body, { 'x-platform-shop-domain': 'shop.myshopify.com', 'x-platform-hmac-sha256': sign(body, 'other') }),
    );
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_signature');
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(0);
    expect(dynamo.commandCalls(PutCommand)).toHaveLength(0);
  });

  it('refuses an unknown shop without decrypting anything', async () => {
    dynamo.on(QueryCommand, { IndexName: 'GSI2' }).resolves({ Items: [] });
    const body = JSON.stringify(payload);
    const res = await call(
      event(body, { 'x-platform-shop-domain': 'nobody.myshopify.com', 'x-platform-hmac-sha256': sign(body) }),
    );
    expect(res.status).toBe(401);
    expect(kms.calls()).toHaveLength(0);
  });

  it(
    'verifies the raw bytes of a base64-encoded body, ' + 'writes both jobs in one transaction and enqueues them',
    async () => {
      const body = JSON.stringify(payload);
      dynamo.on(TransactWriteCommand).resolves({});

      const res = await call(
        event(body, { 'X-Platform-Shop-Domain': 'SHOP.myshopify.com', 'X-Platform-Hmac-SHA256': sign(body) }, true),
      );

      expect(res.status).toBe(200);
      const ids = [0, 1].map((i) => syncJobId('rst_1', '5551234', i));
      expect(res.body).toMatchObject({ object: 'webhook_receipt', syncJobIds: ids });
      const items = dynamo.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!;
      expect(items.map((i) => i.Put!.Item!.sourceStoreId)).toEqual(['sst_a', 'sst_b']);
      expect(items.every((i) => conditionOf(i.Put!) === 'attribute_not_exists(PK)')).toBe(true);
      // The dedup record: the job count (the ids follow from it), and the raw body, compressed, on each job.
      expect(items[0].Put!.Item!.orderJobCount).toBe(2);
      expect(items[1].Put!.Item!.orderJobCount).toBeUndefined();
      for (const item of items) {
        expect(brotliDecompressSync(item.Put!.Item!.orderBody as Uint8Array).toString('utf8')).toBe(body);
      }
      expect(items.map((i) => i.Put!.Item!.vendorTag)).toEqual(['Acme', 'Bolt']);
      expect(sqs.calls()).toHaveLength(1);
    },
  );

  it('writes a new job among the open jobs the reconciler watches, so a failed enqueue still answers 200', async () => {
    const body = JSON.stringify({ ...payload, line_items: [payload.line_items[0]] });
    dynamo.on(PutCommand).resolves({});
    sqs.on(SendMessageCommand).rejects(new Error('SQS unavailable'));

    const res = await call(
      event(body, { 'x-platform-shop-domain': 'shop.myshopify.com', 'x-platform-hmac-sha256': sign(body) }),
    );

    expect(res.status).toBe(200);
    const item = dynamo.commandCalls(PutCommand)[0].args[0].input.Item!;
    expect(item.GSI3PK).toBe(inFlight.open.partition(String(item.PK).slice('SJ#'.length)));
    expect(item.GSI3SK).toBe(`owner_a#${item.createdAt}#${String(item.PK).slice('SJ#'.length)}`);
    // The job's id is its key's: the item does not repeat it (each byte is paid on every write).
    expect(item.id).toBeUndefined();
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('answers the recorded ids for a redelivery and writes nothing new', async () => {
    const body = JSON.stringify(payload);
    const ids = [0, 1].map((i) => syncJobId('rst_1', '5551234', i));
    dynamo.on(TransactWriteCommand).rejects(new TransactionCanceledException({ message: 'cancelled', $metadata: {} }));
    const firstJob = {
      id: ids[0],
      ownerId: 'owner_a',
      resellerStoreId: 'rst_1',
      sourceStoreId: 'sst_a',
      status: 'completed',
      attempts: 1,
      generation: 1,
      externalOrderId: '5551234',
      resellerShopDomain: 'shop.myshopify.com',
      order: { currency: 'USD', line_items: [payload.line_items[0]] },
      orderJobIds: ids,
      createdAt: '2026-11-01T00:00:00.000Z',
      updatedAt: '2026-11-01T00:00:00.000Z',
    };
    dynamo.on(GetCommand).resolves({ Item: firstJob });
    dynamo.on(BatchGetCommand).resolves({ Responses: { 'table-under-test': [firstJob, { ...firstJob, id: ids[1] }] } });

    const res = await call(
      event(body, { 'x-platform-shop-domain': 'shop.myshopify.com', 'x-platform-hmac-sha256': sign(body) }),
    );

    expect(res.body.syncJobIds).toEqual(ids);
    expect(sqs.calls()).toHaveLength(0);
  });

  it('writes an unpaid order’s jobs held, in the lists of held jobs, and sends them no message', async () => {
    const body = JSON.stringify({ ...payload, line_items: [payload.line_items[0]], financial_status: 'pending' });
    dynamo.on(PutCommand).resolves({});

    const res = await call(
      event(body, { 'x-platform-shop-domain': 'shop.myshopify.com', 'x-platform-hmac-sha256': sign(body) }),
    );

    expect(res.status).toBe(200);
    const item = dynamo.commandCalls(PutCommand)[0].args[0].input.Item!;
    expect(item).toMatchObject({
      status: 'pending',
      hold: { reasons: ['payment'], since: item.createdAt, until: null },
      GSI5PK: lists.syncJobsIn('owner_a', 'held').of(String(item.PK).slice('SJ#'.length)),
      GSI6PK: lists.storeSyncJobsIn('rst_1', 'held').of(String(item.PK).slice('SJ#'.length)),
    });
    // No delay: nothing is sent; the platform's word or an operator releases it.
    expect(sqs.calls()).toHaveLength(0);
  });

  it('sends a delayed order one release message, delayed to the end of the delay', async () => {
    const body = JSON.stringify({ ...payload, line_items: [payload.line_items[0]] });
    dynamo.on(PutCommand).resolves({});
    dynamo.on(QueryCommand, requiring({}, { KeyConditionExpression: 'PK = :pk' })).resolves({
      Items: [
        { PK: 'RST#rst_1', SK: 'RST', policyHoldSeconds: 120 },
        { SK: 'VENDOR#Acme', sourceStoreId: 'sst_a' },
      ],
    });

    const res = await call(
      event(body, { 'x-platform-shop-domain': 'shop.myshopify.com', 'x-platform-hmac-sha256': sign(body) }),
    );

    expect(res.status).toBe(200);
    const item = dynamo.commandCalls(PutCommand)[0].args[0].input.Item!;
    expect(item.hold).toMatchObject({ reasons: ['delay'] });
    expect(Date.parse(item.hold.until) - Date.parse(item.hold.since)).toBe(120_000);
    const sent = sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
    expect(sent).toHaveLength(1);
    expect(sent[0].DelaySeconds).toBeGreaterThanOrEqual(119);
    expect(JSON.parse(sent[0].MessageBody!)).toMatchObject({ jobId: item.PK.slice(3), purpose: 'release' });
  });

  it('reads the routing of the store the shop last verified for beside the lookup: 4 calls in 3 steps', async () => {
    const order = (id: number) => JSON.stringify({ ...payload, id, line_items: [payload.line_items[0]] });
    const headers = (body: string) => ({
      'x-platform-shop-domain': 'shop.myshopify.com',
      'x-platform-hmac-sha256': sign(body),
    });
    dynamo.on(PutCommand).resolves({});
    // The lookup answers only once the routing Query has been sent: read after the lookup, it would never answer.
    let routingSent: () => void = () => undefined;
    const routingWasSent = new Promise<void>((resolve) => {
      routingSent = resolve;
    });
    dynamo.on(QueryCommand, requiring({}, { KeyConditionExpression: 'PK = :pk' })).callsFake(async () => {
      routingSent();
      return { Items: [{ SK: 'VENDOR#Acme', sourceStoreId: 'sst_a' }] };
    });
    expect((await call(event(order(1), headers(order(1))))).status).toBe(200);
    const first = dynamo.calls().length + sqs.calls().length;
    dynamo.on(QueryCommand, { IndexName: 'GSI2' }).callsFake(async () => {
      await routingWasSent;
      return { Items: [reseller] };
    });
    dynamo.resetHistory();
    sqs.resetHistory();

    const res = await call(event(order(2), headers(order(2))));

    expect(res.body.syncJobIds).toEqual([syncJobId('rst_1', '2', 0)]);
    const sent = dynamo
      .calls()
      .map((c) => (c.args[0].input as { IndexName?: string }).IndexName ?? c.args[0].constructor.name);
    // The routing Query (no index) goes first, the lookup beside it; then the job's put, then its message.
    expect(sent).toEqual(['QueryCommand', 'GSI2', 'PutCommand']);
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(1);
    expect(first).toBe(4);
  });

  it("routes with a fresh read when the shop's store is no longer the one read early", async () => {
    const order = (id: number) => JSON.stringify({ ...payload, id, line_items: [payload.line_items[0]] });
    const headers = (body: string) => ({
      'x-platform-shop-domain': 'shop.myshopify.com',
      'x-platform-hmac-sha256': sign(body),
    });
    dynamo.on(PutCommand).resolves({});
    expect((await call(event(order(3), headers(order(3))))).status).toBe(200);
    // The shop's store was replaced: the lookup answers rst_2, whose tag Acme goes to sst_z.
    dynamo.on(QueryCommand, { IndexName: 'GSI2' }).resolves({ Items: [{ ...reseller, id: 'rst_2' }] });
    dynamo
      .on(
        QueryCommand,
        requiring({}, { KeyConditionExpression: 'PK = :pk', ExpressionAttributeValues: { ':pk': 'RST#rst_2' } }),
      )
      .resolves({ Items: [{ SK: 'VENDOR#Acme', sourceStoreId: 'sst_z' }] });
    dynamo.resetHistory();

    const res = await call(event(order(4), headers(order(4))));

    expect(res.body.syncJobIds).toEqual([syncJobId('rst_2', '4', 0)]);
    expect(dynamo.commandCalls(PutCommand)[0].args[0].input.Item!.sourceStoreId).toBe('sst_z');
  });
});

describe('routeLineItems', () => {
  it('groups items by the store whose tag equals the vendor, case-sensitively, ordered by store id', () => {
    const tags = new Map([
      ['Acme', 'sst_b'],
      ['Bolt', 'sst_a'],
    ]);
    const groups = routeLineItems(
      [
        { vendor: 'Acme', n: 1 },
        { vendor: 'acme', n: 2 },
        { vendor: 'Bolt', n: 3 },
        { vendor: null, n: 4 },
        { vendor: 'Acme', n: 5 },
      ],
      tags,
    );
    expect(groups).toEqual([
      { sourceStoreId: 'sst_a', vendorTag: 'Bolt', lineItems: [{ vendor: 'Bolt', n: 3 }] },
      {
        sourceStoreId: 'sst_b',
        vendorTag: 'Acme',
        lineItems: [
          { vendor: 'Acme', n: 1 },
          { vendor: 'Acme', n: 5 },
        ],
      },
    ]);
  });
});
