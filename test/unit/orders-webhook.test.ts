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
import { LOOKUP_SHARED_MS } from '../../shared/stores/verify.js';
import { conditionOf, requiring } from '../command-meaning.js';
import { dynamo, kms, sqs } from './aws-mocks.js';
import { callWebhook, webhookEvent } from './http-handler.js';

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
  webhookEvent('/v1/orders/webhook', headers, body, base64);
const sign = (body: string, secret = SECRET) => createHmac('sha256', secret).update(body).digest('base64');
const call = (e: unknown) => callWebhook(handler, e);

/**
 * The clock of the environment's shared reads (the lookup's, 200 ms), whatever the
 * machine's speed: each test starts once the last one's reads are past (a wait is at least its time),
 * and a test may hold it still while it sends its deliveries (`clock`), or move it past them (`pass`).
 */
const realNow = Date.now.bind(Date);
const time = { frozen: undefined as number | undefined };
jest.spyOn(Date, 'now').mockImplementation(() => time.frozen ?? realNow());
const SHARED_MS = LOOKUP_SHARED_MS;
const clock = () => {
  time.frozen = Date.now();
  return {
    pass: () => {
      time.frozen = (time.frozen ?? realNow()) + 1000;
    },
    restore: () => {
      time.frozen = undefined;
    },
  };
};

describe('Function: orders-webhook', () => {
  beforeEach(async () => {
    time.frozen = undefined;
    await new Promise((resolve) => setTimeout(resolve, SHARED_MS + 10));
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

  // Each test below has a shop of its own, and holds the clock (`clock`) while it sends its deliveries.
  const onShop = (shopDomain: string, id: string) => {
    const store = { ...reseller, id, shopDomain };
    dynamo.on(QueryCommand, { IndexName: 'GSI2' }).resolves({ Items: [store] });
    const order = (orderId: number) => JSON.stringify({ ...payload, id: orderId, line_items: [payload.line_items[0]] });
    const headers = (body: string, secret?: string) => ({
      'x-platform-shop-domain': shopDomain,
      'x-platform-hmac-sha256': sign(body, secret),
    });
    return { store, order, headers };
  };
  const sentCommands = () =>
    dynamo.calls().map((c) => (c.args[0].input as { IndexName?: string }).IndexName ?? c.args[0].constructor.name);

  it('reads the routing of the store the shop last verified for beside the lookup: 4 calls in 3 steps', async () => {
    const time = clock();
    const { store, order, headers } = onShop('early.myshopify.com', 'rst_early');
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
      return { Items: [store] };
    });
    dynamo.resetHistory();
    sqs.resetHistory();
    time.pass(); // past the shared lookup: it is read again

    const res = await call(event(order(2), headers(order(2))));
    time.restore();

    expect(res.body.syncJobIds).toEqual([syncJobId('rst_early', '2', 0)]);
    // The routing Query (no index) goes first, the lookup beside it; then the job's put, then its message.
    expect(sentCommands()).toEqual(['QueryCommand', 'GSI2', 'PutCommand']);
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(1);
    expect(first).toBe(4);
  });

  it("shares a shop's lookup between its orders of a moment: the next reads its routing alone", async () => {
    const time = clock();
    const { order, headers } = onShop('shared.myshopify.com', 'rst_shared');
    dynamo.on(PutCommand).resolves({});
    expect((await call(event(order(5), headers(order(5))))).status).toBe(200);
    // The environment's first order of the shop: the lookup, then its store's routing.
    expect(sentCommands()).toEqual(['GSI2', 'QueryCommand', 'PutCommand']);
    dynamo.resetHistory();
    sqs.resetHistory();

    const res = await call(event(order(6), headers(order(6))));
    time.restore();

    expect(res.body.syncJobIds).toEqual([syncJobId('rst_shared', '6', 0)]);
    // The routing is read for each order (a supplier added a moment ago routes it); the lookup was a moment ago.
    expect(sentCommands()).toEqual(['QueryCommand', 'PutCommand']);
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(1);
  });

  it('reads the lookup again before refusing a delivery the shared one does not verify (secret rotated)', async () => {
    const time = clock();
    const { store, order, headers } = onShop('rotated.myshopify.com', 'rst_rotated');
    dynamo.on(PutCommand).resolves({});
    expect((await call(event(order(7), headers(order(7))))).status).toBe(200);
    // Rotated: the store's new secret, under a new ciphertext, signs the next order.
    dynamo.on(QueryCommand, { IndexName: 'GSI2' }).resolves({ Items: [{ ...store, webhookSecret: 'bmV3' }] });
    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from('whsec_new') });
    dynamo.resetHistory();

    const res = await call(event(order(8), headers(order(8), 'whsec_new')));
    const wrong = await call(event(order(9), headers(order(9), 'whsec_other')));
    time.restore();

    expect(res.status).toBe(200);
    expect(res.body.syncJobIds).toEqual([syncJobId('rst_rotated', '8', 0)]);
    // One lookup each: the second delivery's refusal is the fresh lookup's, not read a third time.
    expect(wrong.status).toBe(401);
    expect(sentCommands().filter((command) => command === 'GSI2')).toEqual(['GSI2', 'GSI2']);
  });

  it("routes with a fresh read when the shop's store is no longer the one read early", async () => {
    const time = clock();
    const { order, headers } = onShop('replaced.myshopify.com', 'rst_3');
    dynamo.on(PutCommand).resolves({});
    expect((await call(event(order(3), headers(order(3))))).status).toBe(200);
    // The shop's store was replaced: the lookup answers rst_2, whose tag Acme goes to sst_z.
    dynamo
      .on(QueryCommand, { IndexName: 'GSI2' })
      .resolves({ Items: [{ ...reseller, id: 'rst_2', shopDomain: 'replaced.myshopify.com' }] });
    dynamo
      .on(
        QueryCommand,
        requiring({}, { KeyConditionExpression: 'PK = :pk', ExpressionAttributeValues: { ':pk': 'RST#rst_2' } }),
      )
      .resolves({ Items: [{ SK: 'VENDOR#Acme', sourceStoreId: 'sst_z' }] });
    dynamo.resetHistory();
    time.pass(); // past the shared lookup

    const res = await call(event(order(4), headers(order(4))));
    time.restore();

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
