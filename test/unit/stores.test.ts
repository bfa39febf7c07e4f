import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { EncryptCommand } from '@aws-sdk/client-kms';
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { resellerStoreKey, sourceStoreKey } from '../../shared/entities/store.js';
import { conditionOf, removesOf, requiresOf, setsOf } from '../command-meaning.js';
import { dynamo, kms } from './aws-mocks.js';
import type { HttpHandler } from './http-handler.js';

/**
 * The store handlers called as Lambda calls them, with the SDK clients mocked: what they ask
 * DynamoDB and KMS, and how they map what comes back (CONTRACT.md §2-§4).
 */

// Set before any handler module loads: clients and the logger are built at import.
Object.assign(process.env, {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  TABLE_NAME: 'stores-table',
  KMS_KEY_ID: 'arn:aws:kms:us-east-1:000000000000:key/stores-test',
  PLATFORM_SHOP_DOMAIN_SUFFIX: 'myshopify.com',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  // The platforms answer nothing here: a store's webhook subscriptions fail, and the store is created anyway.
  PLATFORM_API_URL: 'http://127.0.0.1:9/{shopDomain}',
  PUBLIC_URL: 'https://api.example.com',
});

type Handler = HttpHandler;

const handlers: Record<string, Handler> = {};
beforeAll(async () => {
  for (const name of [
    'create-reseller-store',
    'get-reseller-store',
    'update-reseller-store',
    'delete-reseller-store',
    'create-source-store',
    'get-source-store',
    'delete-source-store',
    'list-reseller-stores',
  ]) {
    handlers[name] = (await import(`../../functions/${name}.js`)).handler as Handler;
  }
});

const context = () => ({
  functionName: 'stores-test',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:stores-test',
  memoryLimitInMB: '256',
  awsRequestId: 'aws-req-1',
  getRemainingTimeInMillis: () => 10_000,
});

/** An API Gateway v2 event as the HTTP API sends it after the authorizer resolved `ownerId`. */
const event = (input: {
  method: string;
  path: string;
  pathParameters?: Record<string, string>;
  body?: unknown;
  ownerId?: string;
}) => ({
  version: '2.0',
  routeKey: `${input.method} ${input.path}`,
  rawPath: input.path,
  rawQueryString: '',
  headers: input.body === undefined ? {} : { 'content-type': 'application/json' },
  ...(input.pathParameters ? { pathParameters: input.pathParameters } : {}),
  ...(input.body === undefined
    ? { isBase64Encoded: false }
    : { body: JSON.stringify(input.body), isBase64Encoded: false }),
  requestContext: {
    http: { method: input.method, path: input.path },
    requestId: 'apigw-1',
    authorizer: { lambda: { ownerId: input.ownerId ?? 'owner_a', keyId: 'key_1' } },
  },
});

const call = async (name: string, e: ReturnType<typeof event>) => {
  const res = await handlers[name](e, context());
  return {
    status: res.statusCode,
    headers: res.headers ?? {},
    text: res.body ?? '',
    body: res.body ? JSON.parse(res.body) : undefined,
  };
};

const resellerBody = {
  name: 'Reseller',
  platform: 'storeplatform_a',
  shopDomain: 'Reseller-One.MyShopify.com',
  accessToken: 'shpat_reseller_plain',
  webhookSecret: 'whsec_reseller_plain',
};

const sourceBody = {
  name: 'Supplier',
  platform: 'storeplatform_b',
  shopDomain: 'supplier-one.myshopify.com',
  accessToken: 'shpat_source_plain',
  webhookSecret: 'whsec_source_plain',
  vendorTag: 'Acme',
  pricingMode: 'percentage',
  pricingConfig: { type: 'percentage', value: 30 },
};

const resellerItem = (overrides: Record<string, unknown> = {}) => ({
  ...resellerStoreKey('rst_111111111111111111111111'),
  id: 'rst_111111111111111111111111',
  ownerId: 'owner_a',
  name: 'Reseller',
  platform: 'storeplatform_a',
  shopDomain: 'reseller-one.myshopify.com',
  accessToken: 'Y2lwaGVydGV4dC1h',
  webhookSecret: 'Y2lwaGVydGV4dC1i',
  createdAt: '2026-11-01T00:00:00.000Z',
  updatedAt: '2026-11-01T00:00:00.000Z',
  deletedAt: null,
  ...overrides,
});

const sourceItem = (overrides: Record<string, unknown> = {}) => ({
  ...sourceStoreKey('sst_111111111111111111111111'),
  id: 'sst_111111111111111111111111',
  ownerId: 'owner_a',
  resellerStoreId: 'rst_111111111111111111111111',
  name: 'Supplier',
  platform: 'storeplatform_b',
  shopDomain: 'supplier-one.myshopify.com',
  vendorTag: 'Acme',
  pricingMode: 'percentage',
  pricingConfig: { type: 'percentage', value: 30 },
  accessToken: 'Y2lwaGVydGV4dC1j',
  webhookSecret: 'Y2lwaGVydGV4dC1k',
  createdAt: '2026-11-02T00:00:00.000Z',
  updatedAt: '2026-11-02T00:00:00.000Z',
  deletedAt: null,
  ...overrides,
});

/** KMS answers a ciphertext that names the field it sealed, so the test can tell them apart. */
const sealed = (field: string) => Buffer.from(`sealed:${field}`).toString('base64');

/** An SDK error whose message carries internals that must never reach a client. */
const internalError = () => {
  const error = new Error(
    'User: arn:aws:sts::123456789012:assumed-role/stores-role is not authorized on table/stores-table',
  );
  error.name = 'AccessDeniedException';
  return error;
};

const expectInternalError = (res: Awaited<ReturnType<typeof call>>) => {
  expect(res.status).toBe(500);
  expect(res.body).toEqual({
    error: { type: 'api_error', code: 'internal_error', message: expect.any(String) },
    request_id: res.headers['Request-Id'],
  });
  expect(res.text).not.toMatch(
    /arn:|AccessDenied|stores-table|stores-role|not authorized|ConditionalCheck|Transaction|at .*\.ts/,
  );
};

const canceled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(', ')}]`,
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

beforeEach(() => {
  dynamo.reset();
  kms.reset();
  kms.on(EncryptCommand).callsFake((input) => ({
    CiphertextBlob: Buffer.from(`sealed:${input.EncryptionContext.field}`),
    KeyId: input.KeyId,
  }));
});

describe('Function: create-reseller-store', () => {
  const create = (body: unknown = resellerBody, ownerId = 'owner_a') =>
    call('create-reseller-store', event({ method: 'POST', path: '/v1/reseller_stores', body, ownerId }));

  it('encrypts both secrets with the store id and field as encryption context', async () => {
    dynamo.on(PutCommand).resolves({});
    const res = await create();
    expect(res.status).toBe(201);

    const encrypts = kms.commandCalls(EncryptCommand).map((c) => c.args[0].input);
    expect(encrypts).toHaveLength(2);
    const byField = Object.fromEntries(encrypts.map((input) => [input.EncryptionContext!.field, input]));
    for (const field of ['accessToken', 'webhookSecret'] as const) {
      expect(byField[field].KeyId).toBe(process.env.KMS_KEY_ID);
      expect(byField[field].EncryptionContext).toEqual({ storeId: res.body.id, field });
      expect(Buffer.from(byField[field].Plaintext!).toString('utf8')).toBe(resellerBody[field]);
    }
  });

  it('writes the ciphertexts, never the plaintexts, in one conditional put', async () => {
    dynamo.on(PutCommand).resolves({});
    const res = await create();

    const puts = dynamo.commandCalls(PutCommand);
    expect(puts).toHaveLength(1);
    const { TableName, Item } = puts[0].args[0].input;
    expect(TableName).toBe('stores-table');
    expect(conditionOf(puts[0].args[0].input)).toBe('attribute_not_exists(PK)');
    expect(Item).toMatchObject({
      PK: `RST#${res.body.id}`,
      SK: 'RST',
      GSI1PK: 'OWNER#owner_a#RST',
      GSI1SK: `${res.body.createdAt}#${res.body.id}`,
      GSI2PK: 'SHOP#reseller-one.myshopify.com',
      id: res.body.id,
      ownerId: 'owner_a',
      shopDomain: 'reseller-one.myshopify.com',
      accessToken: sealed('accessToken'),
      webhookSecret: sealed('webhookSecret'),
      deletedAt: null,
    });
    expect(JSON.stringify(Item)).not.toMatch(/shpat_reseller_plain|whsec_reseller_plain/);
  });

  it('answers the store of the calling owner, without secrets', async () => {
    dynamo.on(PutCommand).resolves({});
    const res = await create(resellerBody, 'owner_b');
    expect(res.body).toEqual({
      id: expect.stringMatching(/^rst_[0-9a-z]+$/),
      object: 'reseller_store',
      ownerId: 'owner_b',
      name: 'Reseller',
      platform: 'storeplatform_a',
      shopDomain: 'reseller-one.myshopify.com',
      // The defaults, shown whole (CONTRACT.md §11); none of them is written on the item.
      routingPolicy: { holdSeconds: 0, payment: 'paid_or_authorized', risk: 'off', testOrders: 'hold' },
      connection: { state: 'connected', since: null, reason: null },
      apiVersion: null,
      tokenExpiresAt: null,
      // CONTRACT.md §12.1: creating a store never fails because its subscriptions cannot be made.
      webhooks: { status: 'failing', checkedAt: expect.any(String), missing: [], error: expect.any(String) },
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      deletedAt: null,
      request_id: res.headers['Request-Id'],
    });
    expect(res.text).not.toMatch(/accessToken|webhookSecret|sealed|shpat_|whsec_/);
  });

  it('calls neither KMS nor DynamoDB for an invalid body', async () => {
    const res = await create({ ...resellerBody, platform: 'shopify' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', param: 'platform' });
    expect(kms.calls()).toHaveLength(0);
    expect(dynamo.calls()).toHaveLength(0);
  });

  it('answers 500 internal_error, with nothing of the SDK message, when DynamoDB fails', async () => {
    dynamo.on(PutCommand).rejects(internalError());
    expectInternalError(await create());
  });

  describe('an expiring token (CONTRACT.md §12.3)', () => {
    const expiring = {
      ...resellerBody,
      refreshToken: 'shprt_plain_refresh',
      clientId: 'client_plain_id',
      clientSecret: 'client_plain_secret',
      accessTokenExpiresAt: '2027-01-01T01:00:00+01:00',
    };

    it('keeps the refresh token, client id and secret encrypted, each under its field; shows the expiry', async () => {
      dynamo.on(PutCommand).resolves({});
      const res = await create(expiring);
      expect(res.status).toBe(201);
      expect(res.body.tokenExpiresAt).toBe('2027-01-01T00:00:00.000Z');
      const { Item } = dynamo.commandCalls(PutCommand)[0].args[0].input;
      expect(Item).toMatchObject({
        refreshToken: sealed('refreshToken'),
        clientId: sealed('clientId'),
        clientSecret: sealed('clientSecret'),
        tokenExpiresAt: '2027-01-01T00:00:00.000Z',
        tokenIssuedAt: res.body.createdAt,
      });
      expect(JSON.stringify(Item)).not.toMatch(/_plain/);
      expect(res.text).not.toMatch(/refreshToken|clientId|clientSecret|_plain|sealed/);
    });

    it.each([
      [{ refreshToken: 'r', clientId: 'c' }, 'refreshToken'],
      [{ clientSecret: 's' }, 'refreshToken'],
      [{ accessTokenExpiresAt: 'tomorrow' }, 'accessTokenExpiresAt'],
      [{ platform: 'custom', refreshToken: 'r', clientId: 'c', clientSecret: 's' }, 'refreshToken'],
    ])('refuses %j with 400 on %s, calling nothing', async (extra, param) => {
      const res = await create({ ...resellerBody, ...extra });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_failed', param });
      expect(res.text).not.toMatch(/"r"|"c"|"s"/);
      expect(kms.calls()).toHaveLength(0);
      expect(dynamo.calls()).toHaveLength(0);
    });
  });

  it('answers 500 internal_error when KMS fails, and writes nothing', async () => {
    kms.on(EncryptCommand).rejects(internalError());
    expectInternalError(await create());
    expect(dynamo.commandCalls(PutCommand)).toHaveLength(0);
  });
});

describe('Function: get-reseller-store', () => {
  const get = (id: string, ownerId = 'owner_a') =>
    call(
      'get-reseller-store',
      event({ method: 'GET', path: `/v1/reseller_stores/${id}`, pathParameters: { id }, ownerId }),
    );

  it('reads the store by its key and answers it without secrets', async () => {
    dynamo
      .on(GetCommand, { Key: { PK: 'RST#rst_111111111111111111111111', SK: 'RST' } })
      .resolves({ Item: resellerItem() });
    const res = await get('rst_111111111111111111111111');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: 'rst_111111111111111111111111',
      object: 'reseller_store',
      ownerId: 'owner_a',
      deletedAt: null,
    });
    expect(dynamo.commandCalls(GetCommand)[0].args[0].input.TableName).toBe('stores-table');
    expect(res.text).not.toMatch(/accessToken|webhookSecret|Y2lwaGVydGV4/);
    expect(res.text).not.toMatch(/"PK"|"GSI1PK"|updatedAt/);
  });

  it("answers 404 resource_missing for another owner's store", async () => {
    dynamo.on(GetCommand).resolves({ Item: resellerItem({ ownerId: 'owner_b' }) });
    const res = await get('rst_111111111111111111111111');
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({
      type: 'invalid_request_error',
      code: 'resource_missing',
      message: expect.any(String),
      param: 'id',
    });
    expect(res.text).not.toContain('owner_b');
  });

  it('answers 404 resource_missing for an unknown id', async () => {
    dynamo.on(GetCommand).resolves({});
    expect((await get('rst_nope')).status).toBe(404);
  });

  it('answers 500 internal_error, with nothing of the SDK message, when DynamoDB fails', async () => {
    dynamo.on(GetCommand).rejects(internalError());
    expectInternalError(await get('rst_111111111111111111111111'));
  });
});

describe('Function: update-reseller-store', () => {
  const patch = (id: string, body: unknown, ownerId = 'owner_a') =>
    call(
      'update-reseller-store',
      event({ method: 'PATCH', path: `/v1/reseller_stores/${id}`, pathParameters: { id }, body, ownerId }),
    );

  it("renames only the caller's active store, in one conditional update", async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: resellerItem({ name: 'Renamed' }) });
    const res = await patch('rst_111111111111111111111111', { name: 'Renamed' });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Renamed');

    const [update] = dynamo.commandCalls(UpdateCommand).map((c) => c.args[0].input);
    expect(update.Key).toEqual({ PK: 'RST#rst_111111111111111111111111', SK: 'RST' });
    expect(requiresOf(update)).toMatchObject({ ownerId: 'owner_a' });
    expect(setsOf(update)).toMatchObject({ name: 'Renamed' });
    expect(res.text).not.toMatch(/accessToken|webhookSecret/);
  });

  it("answers 404 when the condition fails (unknown, deleted or another owner's store)", async () => {
    dynamo
      .on(UpdateCommand)
      .rejects(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }));
    const res = await patch('rst_111111111111111111111111', { name: 'Renamed' }, 'owner_b');
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'resource_missing', param: 'id' });
    expect(requiresOf(dynamo.commandCalls(UpdateCommand)[0].args[0].input)).toMatchObject({ ownerId: 'owner_b' });
  });

  it('answers 400 for a field other than name, without calling DynamoDB', async () => {
    const res = await patch('rst_111111111111111111111111', { shopDomain: 'x.myshopify.com' });
    expect(res.body.error).toMatchObject({ code: 'validation_failed', param: 'shopDomain' });
    expect(dynamo.calls()).toHaveLength(0);
  });

  it('answers 500 internal_error, with nothing of the SDK message, when DynamoDB fails', async () => {
    dynamo.on(UpdateCommand).rejects(internalError());
    expectInternalError(await patch('rst_111111111111111111111111', { name: 'x' }));
  });
});

describe('Function: delete-reseller-store', () => {
  const del = (id: string, ownerId = 'owner_a') =>
    call(
      'delete-reseller-store',
      event({ method: 'DELETE', path: `/v1/reseller_stores/${id}`, pathParameters: { id }, ownerId }),
    );

  it('soft-deletes with a condition on owner and deletedAt, and answers 204 without a body', async () => {
    dynamo.on(UpdateCommand).resolves({});
    const res = await del('rst_111111111111111111111111');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers['Request-Id']).toMatch(/^req_/);
    const [update] = dynamo.commandCalls(UpdateCommand).map((c) => c.args[0].input);
    expect(update.Key).toEqual({ PK: 'RST#rst_111111111111111111111111', SK: 'RST' });
    expect(setsOf(update)).toHaveProperty('deletedAt');
    // Out of the owner's list and the active stores, into the owner's deleted stores (same sort key),
    // which the retention sweep reads for the store's unrouted orders.
    expect(setsOf(update)).toMatchObject({ GSI1PK: 'OWNER#owner_a#RST#DELETED' });
    expect(removesOf(update)).toEqual(['GSI5PK']);
    expect(requiresOf(update)).toMatchObject({ ownerId: 'owner_a', deletedAt: null });
  });

  it('answers 404 when the condition fails (already deleted, unknown or not owned)', async () => {
    dynamo
      .on(UpdateCommand)
      .rejects(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }));
    const res = await del('rst_111111111111111111111111');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('resource_missing');
  });
});

describe('Function: create-source-store', () => {
  const create = (body: unknown = sourceBody, ownerId = 'owner_a', rstId = 'rst_111111111111111111111111') =>
    call(
      'create-source-store',
      event({
        method: 'POST',
        path: `/v1/reseller_stores/${rstId}/source_stores`,
        pathParameters: { rst_id: rstId },
        body,
        ownerId,
      }),
    );

  beforeEach(() => {
    dynamo
      .on(GetCommand, { Key: { PK: 'RST#rst_111111111111111111111111', SK: 'RST' } })
      .resolves({ Item: resellerItem() });
  });

  it('encrypts both secrets with the source store id and field as encryption context', async () => {
    dynamo.on(TransactWriteCommand).resolves({});
    const res = await create();
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(/^sst_/);
    const contexts = kms.commandCalls(EncryptCommand).map((c) => c.args[0].input.EncryptionContext);
    expect(contexts).toEqual(
      expect.arrayContaining([
        { storeId: res.body.id, field: 'accessToken' },
        { storeId: res.body.id, field: 'webhookSecret' },
      ]),
    );
    expect(contexts).toHaveLength(2);
    const plaintexts = kms
      .commandCalls(EncryptCommand)
      .map((c) => Buffer.from(c.args[0].input.Plaintext!).toString('utf8'));
    expect(plaintexts.sort()).toEqual(['shpat_source_plain', 'whsec_source_plain']);
  });

  it('writes the store and its vendor-tag item in one transaction, both conditional', async () => {
    dynamo.on(TransactWriteCommand).resolves({});
    const res = await create();
    const [tx] = dynamo.commandCalls(TransactWriteCommand).map((c) => c.args[0].input);
    expect(tx.TransactItems).toHaveLength(2);
    const [store, tag] = tx.TransactItems!;
    expect(store.Put!.Item).toMatchObject({
      PK: `SST#${res.body.id}`,
      SK: 'SST',
      GSI1PK: 'RST#rst_111111111111111111111111#SST',
      ownerId: 'owner_a',
      resellerStoreId: 'rst_111111111111111111111111',
      accessToken: sealed('accessToken'),
      webhookSecret: sealed('webhookSecret'),
    });
    expect(conditionOf(store.Put!)).toBe('attribute_not_exists(PK)');
    expect(tag.Put!.Item).toMatchObject({
      PK: 'RST#rst_111111111111111111111111',
      SK: 'VENDOR#Acme',
      sourceStoreId: res.body.id,
    });
    expect(conditionOf(tag.Put!)).toBe('attribute_not_exists(PK)');
    expect(JSON.stringify(tx)).not.toMatch(/shpat_source_plain|whsec_source_plain/);
    expect(res.text).not.toMatch(/accessToken|webhookSecret|sealed/);
  });

  it(
    'maps a cancellation on the vendor-tag item ([None, ConditionalCheckFailed]) ' + 'to 409 vendor_tag_conflict',
    async () => {
      dynamo.on(TransactWriteCommand).rejects(canceled('None', 'ConditionalCheckFailed'));
      const res = await create();
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        error: {
          type: 'invalid_request_error',
          code: 'vendor_tag_conflict',
          message: expect.stringContaining('Acme'),
          param: 'vendorTag',
        },
        request_id: res.headers['Request-Id'],
      });
    },
  );

  it('does not call a cancellation on the store item a vendor-tag conflict', async () => {
    dynamo.on(TransactWriteCommand).rejects(canceled('ConditionalCheckFailed', 'None'));
    expectInternalError(await create());
  });

  it("answers 404 (param rst_id) under another owner's reseller store, without encrypting or writing", async () => {
    const res = await create(sourceBody, 'owner_b');
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'resource_missing', param: 'rst_id' });
    expect(kms.calls()).toHaveLength(0);
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  it('answers 404 (param rst_id) under a soft-deleted reseller store', async () => {
    dynamo
      .on(GetCommand, { Key: { PK: 'RST#rst_111111111111111111111111', SK: 'RST' } })
      .resolves({ Item: resellerItem({ deletedAt: '2026-11-03T00:00:00.000Z' }) });
    const res = await create();
    expect(res.body.error).toMatchObject({ code: 'resource_missing', param: 'rst_id' });
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  it('answers 400 pricingConfig.type for a config that is not of the pricing mode, without any call', async () => {
    const res = await create({ ...sourceBody, pricingMode: 'field_rules' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', param: 'pricingConfig.type' });
    expect(dynamo.calls()).toHaveLength(0);
    expect(kms.calls()).toHaveLength(0);
  });

  it('answers 500 internal_error, with nothing of the SDK message, when the transaction fails otherwise', async () => {
    dynamo.on(TransactWriteCommand).rejects(internalError());
    expectInternalError(await create());
  });
});

describe('Function: get-source-store', () => {
  const get = (rstId: string, id: string, ownerId = 'owner_a') =>
    call(
      'get-source-store',
      event({
        method: 'GET',
        path: `/v1/reseller_stores/${rstId}/source_stores/${id}`,
        pathParameters: { rst_id: rstId, id },
        ownerId,
      }),
    );

  it('answers the store without secrets', async () => {
    dynamo
      .on(GetCommand, { Key: { PK: 'SST#sst_111111111111111111111111', SK: 'SST' } })
      .resolves({ Item: sourceItem() });
    const res = await get('rst_111111111111111111111111', 'sst_111111111111111111111111');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: 'sst_111111111111111111111111',
      object: 'source_store',
      resellerStoreId: 'rst_111111111111111111111111',
      vendorTag: 'Acme',
      deletedAt: null,
    });
    expect(res.text).not.toMatch(/accessToken|webhookSecret|Y2lwaGVydGV4|ownerId/);
  });

  it("answers 404 for another owner's store", async () => {
    dynamo.on(GetCommand).resolves({ Item: sourceItem({ ownerId: 'owner_b' }) });
    const res = await get('rst_111111111111111111111111', 'sst_111111111111111111111111');
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'resource_missing', param: 'id' });
  });

  it('answers 404 for a store of another reseller store', async () => {
    dynamo.on(GetCommand).resolves({ Item: sourceItem({ resellerStoreId: 'rst_2' }) });
    expect((await get('rst_111111111111111111111111', 'sst_111111111111111111111111')).status).toBe(404);
  });
});

describe('Function: delete-source-store', () => {
  const del = (rstId: string, id: string, ownerId = 'owner_a') =>
    call(
      'delete-source-store',
      event({
        method: 'DELETE',
        path: `/v1/reseller_stores/${rstId}/source_stores/${id}`,
        pathParameters: { rst_id: rstId, id },
        ownerId,
      }),
    );

  it('soft-deletes the store and frees its tag in one transaction', async () => {
    dynamo.on(GetCommand).resolves({ Item: sourceItem() });
    dynamo.on(TransactWriteCommand).resolves({});
    const res = await del('rst_111111111111111111111111', 'sst_111111111111111111111111');
    expect(res.status).toBe(204);
    const [tx] = dynamo.commandCalls(TransactWriteCommand).map((c) => c.args[0].input);
    const [update, tag] = tx.TransactItems!;
    expect(update.Update!.Key).toEqual({ PK: 'SST#sst_111111111111111111111111', SK: 'SST' });
    expect(setsOf(update.Update!)).toHaveProperty('deletedAt');
    expect(tag.Delete!.Key).toEqual({ PK: 'RST#rst_111111111111111111111111', SK: 'VENDOR#Acme' });
    expect(requiresOf(tag.Delete!)).toEqual({ sourceStoreId: 'sst_111111111111111111111111' });
  });

  it("answers 404 for another owner's store without writing", async () => {
    dynamo.on(GetCommand).resolves({ Item: sourceItem({ ownerId: 'owner_b' }) });
    const res = await del('rst_111111111111111111111111', 'sst_111111111111111111111111');
    expect(res.status).toBe(404);
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  it('answers 404 for an already deleted store without writing', async () => {
    dynamo.on(GetCommand).resolves({ Item: sourceItem({ deletedAt: '2026-11-03T00:00:00.000Z' }) });
    expect((await del('rst_111111111111111111111111', 'sst_111111111111111111111111')).status).toBe(404);
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  it('answers 404 when a concurrent delete won the race', async () => {
    dynamo.on(GetCommand).resolves({ Item: sourceItem() });
    dynamo.on(TransactWriteCommand).rejects(canceled('ConditionalCheckFailed', 'None'));
    expect((await del('rst_111111111111111111111111', 'sst_111111111111111111111111')).status).toBe(404);
  });
});

describe('Function: list-reseller-stores', () => {
  it('answers 500 internal_error, with nothing of the SDK message, when the query fails', async () => {
    dynamo.rejects(internalError());
    const res = await call('list-reseller-stores', event({ method: 'GET', path: '/v1/reseller_stores' }));
    expectInternalError(res);
  });
});
