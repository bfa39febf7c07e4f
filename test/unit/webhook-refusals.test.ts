import { createHmac } from 'node:crypto';
import { DecryptCommand } from '@aws-sdk/client-kms';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { handler as fulfillmentsWebhook } from '../../functions/fulfillments-webhook.js';
import { handler as ordersWebhook } from '../../functions/orders-webhook.js';
import {
  isUnknownShop,
  rememberUnknownShop,
  UNKNOWN_SHOP_MAX,
  UNKNOWN_SHOP_TTL_MS,
} from '../../shared/stores/verify.js';
import { requiresOf, requiring } from '../command-meaning.js';
import { dynamo, kms, sqs } from './aws-mocks.js';
import { callWebhook, webhookEvent } from './http-handler.js';

/**
 * A webhook delivery that cannot verify is refused before any read (docs/design.md, "An abusive
 * unsigned caller"): a malformed signature, a shop domain no store can be registered under, or a
 * domain this container found without a store in the last minute costs no DynamoDB and no KMS call.
 */

const SECRET = 'whsec_reseller';
const BODY = JSON.stringify({
  id: 5551234,
  currency: 'USD',
  line_items: [{ id: 1, sku: 'A', title: 'A', quantity: 1, price: '13.00', vendor: 'Acme' }],
});
const sign = (body: string, secret = SECRET) => createHmac('sha256', secret).update(body).digest('base64');
const storeOn = (shopDomain: string) => ({
  id: 'rst_1',
  ownerId: 'owner_a',
  shopDomain,
  createdAt: '2026-11-01T00:00:00.000Z',
  deletedAt: null,
  webhookSecret: 'Y2lwaGVy',
});

type Handler = typeof ordersWebhook;
const call = (handler: Handler, headers: Record<string, string>, body = BODY) =>
  callWebhook(handler, webhookEvent('/v1/orders/webhook', headers, body));
const delivery = (shopDomain: string, signature: string, topic?: string) => ({
  'x-platform-shop-domain': shopDomain,
  'x-platform-hmac-sha256': signature,
  ...(topic ? { 'x-platform-topic': topic } : {}),
});

const expectRefusedWithoutCalls = (res: { status: number; body: { error: { code: string } } }) => {
  expect(res.status).toBe(401);
  expect(res.body.error.code).toBe('invalid_signature');
  expect(dynamo.calls()).toHaveLength(0);
  expect(kms.calls()).toHaveLength(0);
};
const shopReads = () => dynamo.commandCalls(QueryCommand).filter((c) => c.args[0].input.IndexName === 'GSI2');

let clock = Date.parse('2026-11-26T12:00:00.000Z');
beforeEach(() => {
  dynamo.reset();
  sqs.reset();
  kms.reset();
  kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from(SECRET) });
  dynamo.on(GetCommand).resolves({ Item: {} });
  // The store's partition: its item (here none: the default routing policy) and its vendor tags (routingOf).
  dynamo.on(QueryCommand, requiring({}, { KeyConditionExpression: 'PK = :pk' })).resolves({
    Items: [{ SK: 'VENDOR#Acme', sourceStoreId: 'sst_a' }],
  });
  dynamo.on(PutCommand).resolves({});
  dynamo.on(TransactWriteCommand).resolves({});
  sqs.on(SendMessageCommand).resolves({});
  // Each test starts well past the last one's remembered domains.
  clock += 10 * UNKNOWN_SHOP_TTL_MS;
  jest.spyOn(Date, 'now').mockImplementation(() => clock);
});
afterEach(() => jest.restoreAllMocks());

describe('Webhooks: a malformed signature is refused before any read', () => {
  it.each([
    ['garbage', 'not a signature!!'],
    ['the hex digest instead of base64', createHmac('sha256', SECRET).update(BODY).digest('hex')],
    // A digest whose base64 has a '+', in base64url.
    ['base64url instead of base64', 'tFCf7E8kXjtkS3TjGwowbrdtQY-mUvZpD19voaI3zfc='],
    ['the digest without its padding', sign(BODY).replace('=', '')],
    ['the digest with junk appended', `${sign(BODY)}AAAA`],
    ['base64 of a 16-byte value', Buffer.alloc(16, 1).toString('base64')],
    ['base64 of a 48-byte value', Buffer.alloc(48, 1).toString('base64')],
    ['a non-canonical last character', `${sign(BODY).slice(0, 42)}B=`],
    ['empty', ''],
  ])('%s', async (_, signature) => {
    dynamo.on(QueryCommand, { IndexName: 'GSI2' }).resolves({ Items: [storeOn('shop.myshopify.com')] });
    expectRefusedWithoutCalls(await call(ordersWebhook, delivery('shop.myshopify.com', signature)));
  });

  it('on the fulfillments webhook too', async () => {
    dynamo.on(QueryCommand, { IndexName: 'GSI2' }).resolves({ Items: [storeOn('supplier.myshopify.com')] });
    const headers = delivery('supplier.myshopify.com', 'tFCf7E8kXjtkS3TjGwowbrdtQY-mUvZpD19voaI3zfc=');
    expectRefusedWithoutCalls(
      await call(fulfillmentsWebhook, { ...headers, 'x-platform-topic': 'fulfillments/create' }),
    );
  });

  it('for either kind of store (orders/updated) alike', async () => {
    expectRefusedWithoutCalls(
      await call(ordersWebhook, delivery('shop.myshopify.com', 'not a signature', 'orders/updated')),
    );
  });
});

describe('Webhooks: a shop domain no store can be registered under is refused before any read', () => {
  it.each([
    ['another suffix', 'shop.example.com'],
    ['the suffix inside another domain', 'shop.myshopify.com.evil.example'],
    ['the bare suffix', 'myshopify.com'],
    ['a dotted label', 'a.shop.myshopify.com'],
    ['a label starting with a hyphen', '-shop.myshopify.com'],
    ['a label of 64 characters', `${'a'.repeat(64)}.myshopify.com`],
    ['an underscore', 'my_shop.myshopify.com'],
    ['a port', 'shop.myshopify.com:443'],
  ])('%s', async (_, shopDomain) => {
    expectRefusedWithoutCalls(await call(ordersWebhook, delivery(shopDomain, sign(BODY))));
    expectRefusedWithoutCalls(await call(ordersWebhook, delivery(shopDomain, sign(BODY), 'orders/cancelled')));
    expectRefusedWithoutCalls(await call(fulfillmentsWebhook, delivery(shopDomain, sign(BODY), 'fulfillments/create')));
  });
});

describe('Webhooks: a shop domain found without a store is remembered for a minute', () => {
  it('reads the stores once, then refuses the next deliveries with no read and no decrypt', async () => {
    dynamo.on(QueryCommand, { IndexName: 'GSI2' }).resolves({ Items: [] });
    const headers = delivery('unknown.myshopify.com', sign(BODY));

    expect((await call(ordersWebhook, headers)).status).toBe(401);
    expect(shopReads()).toHaveLength(1);

    dynamo.resetHistory();
    for (let i = 0; i < 5; i++) {
      clock += 1_000;
      expectRefusedWithoutCalls(await call(ordersWebhook, headers));
    }
    // The domain in any case or with spaces is the same domain.
    expectRefusedWithoutCalls(await call(ordersWebhook, delivery(' UNKNOWN.myshopify.com ', sign(BODY))));
  });

  it('remembers each kind apart: a shop with no reseller store may still have a source store', async () => {
    dynamo.on(QueryCommand, { IndexName: 'GSI2' }).resolves({ Items: [] });
    expect((await call(ordersWebhook, delivery('kinds.myshopify.com', sign(BODY)))).status).toBe(401);
    expect(shopReads()).toHaveLength(1);

    dynamo.resetHistory();
    const cancelled = delivery('kinds.myshopify.com', sign(BODY), 'orders/cancelled');
    expect((await call(ordersWebhook, cancelled)).status).toBe(401);
    // The reseller kind is remembered; the source kind is read once.
    expect(shopReads()).toHaveLength(1);

    dynamo.resetHistory();
    expectRefusedWithoutCalls(await call(ordersWebhook, cancelled));
  });

  it('reads again after the minute, so a store created meanwhile gets its deliveries', async () => {
    dynamo.on(QueryCommand, { IndexName: 'GSI2' }).resolves({ Items: [] });
    const headers = delivery('newcomer.myshopify.com', sign(BODY));
    expect((await call(ordersWebhook, headers)).status).toBe(401);

    // The store is created on another container: this one still refuses until the minute is up.
    dynamo.on(QueryCommand, { IndexName: 'GSI2' }).resolves({ Items: [storeOn('newcomer.myshopify.com')] });
    dynamo.resetHistory();
    clock += UNKNOWN_SHOP_TTL_MS - 1;
    expectRefusedWithoutCalls(await call(ordersWebhook, headers));

    clock += 1;
    const res = await call(ordersWebhook, headers);
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('webhook_receipt');
    expect(shopReads()).toHaveLength(1);
  });

  it('does not remember a shop that has stores', async () => {
    dynamo.on(QueryCommand, { IndexName: 'GSI2' }).resolves({ Items: [storeOn('known.myshopify.com')] });
    const forged = delivery('known.myshopify.com', sign(BODY, 'not the secret'));
    expect((await call(ordersWebhook, forged)).status).toBe(401);
    expect((await call(ordersWebhook, forged)).status).toBe(401);
    expect(shopReads()).toHaveLength(2);
  });
});

describe('Webhooks: every valid form still verifies', () => {
  it.each([
    ['the platform headers', delivery('valid.myshopify.com', sign(BODY))],
    [
      "Shopify's headers, spaces around the signature and the domain in upper case",
      { 'X-Shopify-Shop-Domain': 'VALID.myshopify.com', 'X-Shopify-Hmac-Sha256': ` ${sign(BODY)} ` },
    ],
  ])('%s', async (_, headers) => {
    dynamo.on(QueryCommand, { IndexName: 'GSI2' }).resolves({ Items: [storeOn('valid.myshopify.com')] });
    const res = await call(ordersWebhook, headers);
    expect(res.status).toBe(200);
    expect(requiresOf(shopReads()[0].args[0].input)).toMatchObject({
      GSI2PK: expect.stringContaining('valid.myshopify.com'),
    });
  });
});

describe('Webhooks: the unknown shops a container remembers', () => {
  it(`are at most ${UNKNOWN_SHOP_MAX}: the oldest is forgotten first`, () => {
    const at = Date.parse('2030-01-01T00:00:00.000Z');
    // Whatever earlier tests left is pushed out first.
    for (let i = 0; i < UNKNOWN_SHOP_MAX; i++) rememberUnknownShop('source', `filler-${i}.myshopify.com`, at);
    for (let i = 0; i <= UNKNOWN_SHOP_MAX; i++) rememberUnknownShop('source', `bound-${i}.myshopify.com`, at + i);
    expect(isUnknownShop('source', 'bound-0.myshopify.com', at + UNKNOWN_SHOP_MAX)).toBe(false);
    expect(isUnknownShop('source', 'bound-1.myshopify.com', at + UNKNOWN_SHOP_MAX)).toBe(true);
    expect(isUnknownShop('source', `bound-${UNKNOWN_SHOP_MAX}.myshopify.com`, at + UNKNOWN_SHOP_MAX)).toBe(true);
    expect(isUnknownShop('reseller', 'bound-1.myshopify.com', at + UNKNOWN_SHOP_MAX)).toBe(false);
  });

  it('expire after the TTL', () => {
    const at = Date.parse('2031-01-01T00:00:00.000Z');
    rememberUnknownShop('reseller', 'ttl.myshopify.com', at);
    expect(isUnknownShop('reseller', 'ttl.myshopify.com', at + UNKNOWN_SHOP_TTL_MS - 1)).toBe(true);
    expect(isUnknownShop('reseller', 'ttl.myshopify.com', at + UNKNOWN_SHOP_TTL_MS)).toBe(false);
  });
});
