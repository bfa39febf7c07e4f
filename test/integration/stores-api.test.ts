import { createHash } from 'node:crypto';
import { DecryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { BatchWriteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { keys, listSortKey, lists, lookups } from '../../shared/dynamo/keys.js';
import {
  type ApiClient,
  type ApiResponse,
  createResellerStore,
  createSourceStore,
  ISO_MS,
  REQUEST_ID,
  resellerStoreBody,
  scanAll,
  sourceStoreBody,
  startService,
  type TestService,
  unique,
} from './support.js';

/**
 * The stores API (SPEC 2.1-2.3, 4.1-4.3; CONTRACT.md §2-§4, §8) through the local HTTP front,
 * against DynamoDB Local and the KMS stand-in.
 */

jest.setTimeout(30_000);

let service: TestService;
const A = () => service.api('owner_a');
const B = () => service.api('owner_b');

beforeAll(async () => {
  // No simulator: the platform calls a store's creation makes (its subscriptions, CONTRACT.md §12.1) go to a
  // port where nothing listens, refused at once, never to https://<shop>.myshopify.com on the internet.
  service = await startService({ simulator: false, platformApiUrl: 'http://127.0.0.1:9/{shopDomain}' });
}, 60_000);
afterAll(() => service?.stop());

const RESELLER_FIELDS = [
  'apiVersion',
  'connection',
  'createdAt',
  'deletedAt',
  'id',
  'name',
  'object',
  'ownerId',
  'platform',
  'request_id',
  'routingPolicy',
  'shopDomain',
  'tokenExpiresAt',
  'webhooks',
];
const SOURCE_FIELDS = [
  'apiVersion',
  'connection',
  'createdAt',
  'deletedAt',
  'id',
  'name',
  'object',
  'platform',
  'pricingConfig',
  'pricingMode',
  'request_id',
  'resellerStoreId',
  'serviceLevel',
  'shopDomain',
  'tokenExpiresAt',
  'vendorTag',
  'webhooks',
];

const TYPE_OF_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  404: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
};

/** The contract's error body; `param: null` means the body must not name one. */
const expectError = (res: ApiResponse, status: number, code: string, param: string | null) => {
  expect({ status: res.status, code: res.body?.error?.code, param: res.body?.error?.param ?? null }).toEqual({
    status,
    code,
    param,
  });
  expect(Object.keys(res.body).sort()).toEqual(['error', 'request_id']);
  expect(res.body.error.type).toBe(TYPE_OF_STATUS[status]);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.message.length).toBeGreaterThan(0);
  expect(res.body.request_id).toMatch(REQUEST_ID);
  expect(res.headers.get('request-id')).toBe(res.body.request_id);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
};

/**
 * The table's items but events: those the change stream's recorder writes a moment after the earlier
 * tests' writes (a store made, its subscriptions checked), not anything the request under test wrote.
 */
const itemKeys = async () =>
  (await scanAll(service.doc, service.tableName))
    .filter((item) => !String(item.PK).startsWith('EVT#'))
    .map((item) => `${item.PK}|${item.SK}`)
    .sort();

/** Runs `act` and asserts the table holds exactly the same items afterwards. */
const expectNoWrites = async (act: () => Promise<unknown>) => {
  const before = await itemKeys();
  await act();
  expect(await itemKeys()).toEqual(before);
};

/** The validation cases of a body that leaves out each of `fields`: `a missing <field>`, naming it. */
const missing = (...fields: string[]): [string, Record<string, unknown>, string][] =>
  fields.map((field) => [`a missing ${field}`, { [field]: undefined }, field]);

const rawItem = async (key: { PK: string; SK: string }) =>
  (await service.doc.send(new GetCommand({ TableName: service.tableName, Key: key, ConsistentRead: true }))).Item;

const kmsClient = () =>
  new KMSClient({
    endpoint: service.runtime.endpoints.kms,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });

const decrypt = async (ciphertext: string, context: Record<string, string>) => {
  const kms = kmsClient();
  try {
    const out = await kms.send(
      new DecryptCommand({ CiphertextBlob: Buffer.from(ciphertext, 'base64'), EncryptionContext: context }),
    );
    return Buffer.from(out.Plaintext!).toString('utf8');
  } finally {
    kms.destroy();
  }
};

const expectTimestampNow = (value: unknown, before: number, after: number) => {
  expect(value).toMatch(ISO_MS);
  const at = Date.parse(value as string);
  expect(at).toBeGreaterThanOrEqual(before - 5);
  expect(at).toBeLessThanOrEqual(after + 5);
};

const sourcePath = (rstId: string, id?: string) => `/v1/reseller_stores/${rstId}/source_stores${id ? `/${id}` : ''}`;

/** Every id of a list, following `starting_after` page by page. */
const walk = async (api: ApiClient, path: string, limit: number, startingAfter?: string) => {
  const pages: { ids: string[]; hasMore: boolean }[] = [];
  let cursor = startingAfter;
  for (let guard = 0; guard < 100; guard++) {
    const res = await api.get(`${path}?limit=${limit}${cursor ? `&starting_after=${cursor}` : ''}`);
    expect(res.status).toBe(200);
    const ids = res.body.data.map((item: { id: string }) => item.id);
    pages.push({ ids, hasMore: res.body.has_more });
    if (!res.body.has_more) break;
    cursor = ids.at(-1);
  }
  return pages;
};

describe('Authentication', () => {
  it('answers 401 unauthorized without an Authorization header', async () => {
    const res = await service.api(null).get('/v1/reseller_stores');
    expectError(res, 401, 'unauthorized', null);
  });

  it.each([
    ['a Basic scheme', 'Basic b3duZXJfYTpzZWNyZXQ='],
    ['a bare key', 'sk_test_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'],
    ['Bearer without a key', 'Bearer'],
    ['Bearer with two tokens', 'Bearer sk_test_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa extra'],
  ])('answers 401 unauthorized for a malformed header (%s)', async (_, authorization) => {
    const res = await service.api(null).get('/v1/reseller_stores', { headers: { authorization } });
    expectError(res, 401, 'unauthorized', null);
  });

  it('answers 401 unauthorized for an unknown key', async () => {
    const res = await service.api('sk_test_unknownunknownunknownunknownunknown00').get('/v1/reseller_stores');
    expectError(res, 401, 'unauthorized', null);
  });

  it('accepts the scheme name in any case', async () => {
    const res = await service.api(null).get('/v1/reseller_stores', {
      headers: { authorization: 'bearer sk_test_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' },
    });
    expect(res.status).toBe(200);
  });

  it('answers 401 before looking at the body, and writes nothing', async () => {
    await expectNoWrites(async () => {
      const res = await service.api(null).post('/v1/reseller_stores', resellerStoreBody());
      expectError(res, 401, 'unauthorized', null);
    });
  });

  it('answers 401 on every store route without a key', async () => {
    const store = await createResellerStore(A());
    const anonymous = service.api('sk_test_nobody');
    const results = await Promise.all([
      anonymous.get(`/v1/reseller_stores/${store.id}`),
      anonymous.patch(`/v1/reseller_stores/${store.id}`, { name: 'x' }),
      anonymous.delete(`/v1/reseller_stores/${store.id}`),
      anonymous.post(sourcePath(store.id), sourceStoreBody()),
      anonymous.get(sourcePath(store.id)),
      anonymous.get(sourcePath(store.id, 'sst_x')),
      anonymous.delete(sourcePath(store.id, 'sst_x')),
    ]);
    expect(results.map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 401, 401]);
    expect((await A().get(`/v1/reseller_stores/${store.id}`)).body.name).toBe(store.name);
  });

  it('answers 404 resource_missing for an unknown route', async () => {
    const res = await A().get('/v1/nothing_here');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('resource_missing');
    expect(res.headers.get('request-id')).toBe(res.body.request_id);
  });
});

describe('POST /v1/reseller_stores', () => {
  it('answers 201 with the reseller store and no secrets', async () => {
    const body = resellerStoreBody({ name: 'Acme Outlet', platform: 'storeplatform_b' });
    const before = Date.now();
    const res = await A().post('/v1/reseller_stores', body);
    const after = Date.now();

    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(RESELLER_FIELDS);
    expect(res.body).toMatchObject({
      object: 'reseller_store',
      ownerId: 'owner_a',
      name: 'Acme Outlet',
      platform: 'storeplatform_b',
      shopDomain: body.shopDomain,
      deletedAt: null,
    });
    expect(res.body.id).toMatch(/^rst_[0-9a-z]{16,}$/);
    expectTimestampNow(res.body.createdAt, before, after);
    expect(res.body.request_id).toMatch(REQUEST_ID);
    expect(res.headers.get('request-id')).toBe(res.body.request_id);
    expect(res.text).not.toContain(body.accessToken);
    expect(res.text).not.toContain(body.webhookSecret);
    expect(res.text).not.toMatch(/accessToken|webhookSecret/);
  });

  it('gives every store its own id and every request its own request id', async () => {
    const [one, two] = await Promise.all([
      A().post('/v1/reseller_stores', resellerStoreBody()),
      A().post('/v1/reseller_stores', resellerStoreBody()),
    ]);
    expect(one.body.id).not.toBe(two.body.id);
    expect(one.body.request_id).not.toBe(two.body.request_id);
  });

  it('stores both secrets encrypted under the store id and field', async () => {
    const body = resellerStoreBody();
    const store = await createResellerStore(A(), body);
    const item = await rawItem(keys.resellerStore(store.id));

    expect(item).toBeDefined();
    for (const field of ['accessToken', 'webhookSecret'] as const) {
      expect(typeof item![field]).toBe('string');
      expect(item![field]).not.toContain(body[field]);
      expect(Buffer.from(item![field], 'base64').toString('utf8')).not.toContain(body[field]);
      await expect(decrypt(item![field], { storeId: store.id, field })).resolves.toBe(body[field]);
    }
    await expect(decrypt(item!.accessToken, { storeId: store.id, field: 'webhookSecret' })).rejects.toThrow();
  });

  it('stores the shop domain lower-cased', async () => {
    const label = unique('MixedCase').toUpperCase();
    const res = await A().post('/v1/reseller_stores', resellerStoreBody({ shopDomain: `${label}.MyShopify.COM` }));
    expect(res.status).toBe(201);
    expect(res.body.shopDomain).toBe(`${label.toLowerCase()}.myshopify.com`);
    expect((await rawItem(keys.resellerStore(res.body.id)))!.shopDomain).toBe(`${label.toLowerCase()}.myshopify.com`);
  });

  it('accepts a shop domain label of 63 characters', async () => {
    const label = `${unique('l')}`.padEnd(63, 'x');
    const res = await A().post('/v1/reseller_stores', resellerStoreBody({ shopDomain: `${label}.myshopify.com` }));
    expect(res.status).toBe(201);
  });

  it.each([
    ...missing('name', 'platform', 'shopDomain', 'accessToken', 'webhookSecret'),
    ['an unknown field', { ownerId: 'owner_b' }, 'ownerId'],
    ['a name that is not a string', { name: 42 }, 'name'],
    ['an empty name', { name: '   ' }, 'name'],
    ['a name over 255 characters', { name: 'n'.repeat(256) }, 'name'],
    ['an unknown platform', { platform: 'shopify' }, 'platform'],
    ['a platform that is not a string', { platform: ['custom'] }, 'platform'],
    ['a shop domain of another suffix', { shopDomain: 'acme.example.com' }, 'shopDomain'],
    ['a shop domain that only ends in the suffix', { shopDomain: 'acme.myshopify.com.evil.com' }, 'shopDomain'],
    ['a shop domain with a nested label', { shopDomain: 'a.b.myshopify.com' }, 'shopDomain'],
    ['a shop domain without a label', { shopDomain: 'myshopify.com' }, 'shopDomain'],
    ['a shop domain with a label of 64 characters', { shopDomain: `${'a'.repeat(64)}.myshopify.com` }, 'shopDomain'],
    ['a shop domain label starting with a hyphen', { shopDomain: '-acme.myshopify.com' }, 'shopDomain'],
    ['a shop domain with an underscore', { shopDomain: 'ac_me.myshopify.com' }, 'shopDomain'],
    ['a shop domain that is a URL', { shopDomain: 'https://acme.myshopify.com' }, 'shopDomain'],
    ['an empty accessToken', { accessToken: '' }, 'accessToken'],
    ['a webhookSecret that is not a string', { webhookSecret: 123 }, 'webhookSecret'],
  ])('answers 400 validation_failed for %s, and writes nothing', async (_, overrides, param) => {
    await expectNoWrites(async () => {
      const res = await A().post('/v1/reseller_stores', resellerStoreBody(overrides));
      expectError(res, 400, 'validation_failed', param);
    });
  });

  it('says a missing field is required and an unknown field is unknown', async () => {
    const missing = await A().post('/v1/reseller_stores', resellerStoreBody({ name: undefined }));
    expect(missing.body.error.message).toMatch(/required/i);
    expect(missing.body.error.message).not.toMatch(/unknown/i);
    const extra = await A().post('/v1/reseller_stores', resellerStoreBody({ color: 'red' }));
    expect(extra.body.error.message).toMatch(/unknown field 'color'/);
  });

  it.each([
    ['no body', undefined, /must be a JSON object/],
    ['a JSON array', [], /required/],
    ['a JSON string', 'store', /must be a JSON object/],
    ['JSON null', null, /must be a JSON object/],
  ])('answers 400 validation_failed for %s', async (_, body, message) => {
    const res = await A().post(
      '/v1/reseller_stores',
      undefined,
      body === undefined ? {} : { rawBody: JSON.stringify(body), headers: { 'content-type': 'application/json' } },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.message).toMatch(message);
    expect(res.headers.get('request-id')).toBe(res.body.request_id);
  });

  it('answers 400 validation_failed for a body that is not valid JSON, and writes nothing', async () => {
    await expectNoWrites(async () => {
      const res = await A().post('/v1/reseller_stores', undefined, {
        rawBody: '{"name": "x",',
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 400, 'validation_failed', null);
    });
  });

  it('answers 415 unsupported_media_type for a text/plain body, and writes nothing', async () => {
    await expectNoWrites(async () => {
      const res = await A().post('/v1/reseller_stores', undefined, {
        rawBody: JSON.stringify(resellerStoreBody()),
        headers: { 'content-type': 'text/plain' },
      });
      expectError(res, 415, 'unsupported_media_type', null);
    });
  });

  it('answers 415 unsupported_media_type for a form body and for a body without a Content-Type', async () => {
    const form = await A().post('/v1/reseller_stores', undefined, {
      rawBody: 'name=x&platform=custom',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectError(form, 415, 'unsupported_media_type', null);
    const bare = await A().post('/v1/reseller_stores', undefined, {
      rawBody: Buffer.from(JSON.stringify(resellerStoreBody())),
    });
    expectError(bare, 415, 'unsupported_media_type', null);
  });

  it('accepts application/json with a charset parameter', async () => {
    const res = await A().post('/v1/reseller_stores', undefined, {
      rawBody: JSON.stringify(resellerStoreBody()),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(201);
  });

  it('answers 413 payload_too_large for a body over 64 KiB, and writes nothing', async () => {
    // {"name":"…"} is the padding plus 11 bytes: 65,537 bytes in all.
    const rawBody = JSON.stringify({ name: 'x'.repeat(64 * 1024 + 1 - 11) });
    expect(Buffer.byteLength(rawBody)).toBe(64 * 1024 + 1);
    await expectNoWrites(async () => {
      const res = await A().post('/v1/reseller_stores', undefined, {
        rawBody,
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 413, 'payload_too_large', null);
    });
  });

  it('reads a body of exactly 64 KiB (and rejects it for what it says)', async () => {
    const rawBody = JSON.stringify({ name: 'x'.repeat(64 * 1024 - 11) });
    expect(Buffer.byteLength(rawBody)).toBe(64 * 1024);
    const res = await A().post('/v1/reseller_stores', undefined, {
      rawBody,
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 400, 'validation_failed', 'name');
  });
});

describe('GET /v1/reseller_stores/{id}', () => {
  it('answers 200 with the same store the create answered', async () => {
    const created = await createResellerStore(A());
    const res = await A().get(`/v1/reseller_stores/${created.id}`);
    expect(res.status).toBe(200);
    const { request_id: createdRequestId, ...fields } = created;
    expect(res.body).toEqual({ ...fields, request_id: res.headers.get('request-id') });
    expect(res.body.request_id).not.toBe(createdRequestId);
    expect(res.text).not.toMatch(/accessToken|webhookSecret/);
  });

  it.each([
    ['an unknown id', 'rst_doesnotexist000000000'],
    ['an id without the prefix', 'doesnotexist'],
  ])('answers 404 resource_missing for %s', async (_, id) => {
    const res = await A().get(`/v1/reseller_stores/${id}`);
    expectError(res, 404, 'resource_missing', 'id');
  });

  it("answers 404 resource_missing for another owner's store", async () => {
    const store = await createResellerStore(A());
    const res = await B().get(`/v1/reseller_stores/${store.id}`);
    expectError(res, 404, 'resource_missing', 'id');
    expect(res.text).not.toContain('owner_a');
  });

  it('answers 404 for a source store id', async () => {
    const reseller = await createResellerStore(A());
    const source = await createSourceStore(A(), reseller.id);
    expectError(await A().get(`/v1/reseller_stores/${source.id}`), 404, 'resource_missing', 'id');
  });

  it('answers a soft-deleted store with its deletedAt', async () => {
    const store = await createResellerStore(A());
    const before = Date.now();
    expect((await A().delete(`/v1/reseller_stores/${store.id}`)).status).toBe(204);
    const after = Date.now();
    const res = await A().get(`/v1/reseller_stores/${store.id}`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(store.id);
    expectTimestampNow(res.body.deletedAt, before, after);
  });
});

describe('PATCH /v1/reseller_stores/{id}', () => {
  it('renames the store and changes nothing else', async () => {
    const store = await createResellerStore(A(), { name: 'Old name' });
    const res = await A().patch(`/v1/reseller_stores/${store.id}`, { name: 'New name' });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(RESELLER_FIELDS);
    const { request_id: _, ...fields } = store;
    expect(res.body).toEqual({ ...fields, name: 'New name', request_id: res.headers.get('request-id') });
    expect((await A().get(`/v1/reseller_stores/${store.id}`)).body.name).toBe('New name');
  });

  it('keeps the encrypted secrets as they were', async () => {
    const store = await createResellerStore(A());
    const before = await rawItem(keys.resellerStore(store.id));
    await A().patch(`/v1/reseller_stores/${store.id}`, { name: 'Renamed' });
    const after = await rawItem(keys.resellerStore(store.id));
    expect(after!.accessToken).toBe(before!.accessToken);
    expect(after!.webhookSecret).toBe(before!.webhookSecret);
  });

  it('answers 200 with the store unchanged for an empty body object', async () => {
    const store = await createResellerStore(A(), { name: 'Unchanged' });
    const res = await A().patch(`/v1/reseller_stores/${store.id}`, {});
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Unchanged');
    expect(res.body.createdAt).toBe(store.createdAt);
  });

  it.each([
    ['platform', { platform: 'custom' }, 'platform'],
    ['shopDomain', { shopDomain: 'other.myshopify.com' }, 'shopDomain'],
    ['ownerId', { ownerId: 'owner_b' }, 'ownerId'],
    ['accessToken', { accessToken: 'new' }, 'accessToken'],
    ['a name that is not a string', { name: 7 }, 'name'],
    ['a null name', { name: null }, 'name'],
    ['an empty name', { name: '' }, 'name'],
    ['a name over 255 characters', { name: 'n'.repeat(256) }, 'name'],
  ])('answers 400 validation_failed for %s, and changes nothing', async (_, body, param) => {
    const store = await createResellerStore(A(), { name: 'Kept' });
    const res = await A().patch(`/v1/reseller_stores/${store.id}`, body);
    expectError(res, 400, 'validation_failed', param);
    const now = (await A().get(`/v1/reseller_stores/${store.id}`)).body;
    expect({ name: now.name, platform: now.platform, shopDomain: now.shopDomain, ownerId: now.ownerId }).toEqual({
      name: 'Kept',
      platform: store.platform,
      shopDomain: store.shopDomain,
      ownerId: 'owner_a',
    });
  });

  it('answers 415 for a text/plain body', async () => {
    const store = await createResellerStore(A());
    const res = await A().patch(`/v1/reseller_stores/${store.id}`, undefined, {
      rawBody: '{"name":"x"}',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(res, 415, 'unsupported_media_type', null);
  });

  it('answers 404 resource_missing for an unknown id', async () => {
    const res = await A().patch('/v1/reseller_stores/rst_doesnotexist000000000', { name: 'x' });
    expectError(res, 404, 'resource_missing', 'id');
  });

  it("answers 404 resource_missing for another owner's store, and leaves it alone", async () => {
    const store = await createResellerStore(A(), { name: 'Mine' });
    const res = await B().patch(`/v1/reseller_stores/${store.id}`, { name: 'Stolen' });
    expectError(res, 404, 'resource_missing', 'id');
    expect((await A().get(`/v1/reseller_stores/${store.id}`)).body.name).toBe('Mine');
  });

  it('answers 404 resource_missing for a soft-deleted store', async () => {
    const store = await createResellerStore(A());
    await A().delete(`/v1/reseller_stores/${store.id}`);
    expectError(await A().patch(`/v1/reseller_stores/${store.id}`, { name: 'Back' }), 404, 'resource_missing', 'id');
    expect((await A().get(`/v1/reseller_stores/${store.id}`)).body.name).toBe(store.name);
  });

  it('does not create an item when renaming an unknown id', async () => {
    await expectNoWrites(() => A().patch('/v1/reseller_stores/rst_ghost00000000000000000', { name: 'Ghost' }));
  });
});

describe('DELETE /v1/reseller_stores/{id}', () => {
  it('answers 204 with no body, soft-deletes, and a second DELETE answers 404', async () => {
    const store = await createResellerStore(A());
    const res = await A().delete(`/v1/reseller_stores/${store.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers.get('request-id')).toMatch(REQUEST_ID);

    const item = await rawItem(keys.resellerStore(store.id));
    expect(item).toBeDefined();
    expect(item!.deletedAt).toMatch(ISO_MS);

    expectError(await A().delete(`/v1/reseller_stores/${store.id}`), 404, 'resource_missing', 'id');
  });

  it('takes the store out of the list', async () => {
    const kept = await createResellerStore(A());
    const gone = await createResellerStore(A());
    await A().delete(`/v1/reseller_stores/${gone.id}`);
    const ids = (await A().get('/v1/reseller_stores?limit=100')).body.data.map((s: { id: string }) => s.id);
    expect(ids).toContain(kept.id);
    expect(ids).not.toContain(gone.id);
  });

  it('answers 404 resource_missing for an unknown id', async () => {
    expectError(await A().delete('/v1/reseller_stores/rst_doesnotexist000000000'), 404, 'resource_missing', 'id');
  });

  it("answers 404 resource_missing for another owner's store, and leaves it active", async () => {
    const store = await createResellerStore(A());
    expectError(await B().delete(`/v1/reseller_stores/${store.id}`), 404, 'resource_missing', 'id');
    expect((await A().get(`/v1/reseller_stores/${store.id}`)).body.deletedAt).toBeNull();
  });
});

describe('GET /v1/reseller_stores', () => {
  it('answers the list envelope; every item carries the request id', async () => {
    await createResellerStore(A());
    const res = await A().get('/v1/reseller_stores');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'has_more', 'object', 'request_id', 'url']);
    expect(res.body).toMatchObject({ object: 'list', url: '/v1/reseller_stores' });
    expect(typeof res.body.has_more).toBe('boolean');
    expect(res.body.request_id).toBe(res.headers.get('request-id'));
    expect(res.body.data.length).toBeGreaterThan(0);
    for (const item of res.body.data) {
      expect(Object.keys(item).sort()).toEqual(RESELLER_FIELDS);
      expect(item.object).toBe('reseller_store');
      expect(item.request_id).toBe(res.body.request_id);
      expect(item.ownerId).toBe('owner_a');
      expect(item.deletedAt).toBeNull();
      expect(item.createdAt).toMatch(ISO_MS);
    }
    expect(res.text).not.toMatch(/accessToken|webhookSecret/);
  });

  it("never shows one owner's stores to another", async () => {
    const mine = await createResellerStore(A());
    const theirs = await createResellerStore(B());
    const listA = (await A().get('/v1/reseller_stores?limit=100')).body.data;
    const listB = (await B().get('/v1/reseller_stores?limit=100')).body.data;
    expect(listA.map((s: { id: string }) => s.id)).toContain(mine.id);
    expect(listA.map((s: { id: string }) => s.id)).not.toContain(theirs.id);
    expect(listB.map((s: { id: string }) => s.id)).toEqual([theirs.id]);
    expect(listA.every((s: { ownerId: string }) => s.ownerId === 'owner_a')).toBe(true);
  });

  it.each([
    ['0', 'limit'],
    ['101', 'limit'],
    ['abc', 'limit'],
    ['-1', 'limit'],
    ['1.5', 'limit'],
    ['', 'limit'],
  ])('answers 400 validation_failed for limit=%s', async (limit, param) => {
    expectError(await A().get(`/v1/reseller_stores?limit=${limit}`), 400, 'validation_failed', param);
  });

  it('answers 400 validation_failed for an unknown query parameter', async () => {
    expectError(await A().get('/v1/reseller_stores?sort=asc'), 400, 'validation_failed', 'sort');
  });

  it('answers 400 validation_failed for an empty starting_after', async () => {
    expectError(await A().get('/v1/reseller_stores?starting_after='), 400, 'validation_failed', 'starting_after');
  });

  it('answers 400 invalid_cursor for an id that was never in the list', async () => {
    expectError(
      await A().get('/v1/reseller_stores?starting_after=rst_doesnotexist000000000'),
      400,
      'invalid_cursor',
      'starting_after',
    );
    expectError(await A().get('/v1/reseller_stores?starting_after=nonsense'), 400, 'invalid_cursor', 'starting_after');
  });

  it("answers 400 invalid_cursor for another owner's store id", async () => {
    const theirs = await createResellerStore(B());
    expectError(
      await A().get(`/v1/reseller_stores?starting_after=${theirs.id}`),
      400,
      'invalid_cursor',
      'starting_after',
    );
  });

  it('answers 400 invalid_cursor for a source store id', async () => {
    const reseller = await createResellerStore(A());
    const source = await createSourceStore(A(), reseller.id);
    expectError(
      await A().get(`/v1/reseller_stores?starting_after=${source.id}`),
      400,
      'invalid_cursor',
      'starting_after',
    );
  });
});

describe('Pagination of GET /v1/reseller_stores', () => {
  const SAME = '2026-03-01T12:00:00.000Z';

  interface Seeded {
    id: string;
    createdAt: string;
  }

  /** An owner of its own, so the other tests' stores do not mix into the pages. */
  const newOwner = async () => {
    const ownerId = unique('pages');
    const key = `sk_test_${createHash('sha256').update(ownerId).digest('base64url')}`;
    await service.doc.send(
      new PutCommand({
        TableName: service.tableName,
        Item: {
          ...keys.apiKey(createHash('sha256').update(key, 'utf8').digest('hex')),
          keyId: `key_${ownerId}`,
          ownerId,
          createdAt: SAME,
        },
      }),
    );
    return { ownerId, api: service.api(key) };
  };

  /** Items as createResellerStore writes them (shared/dynamo/keys.ts formats). */
  const seed = async (ownerId: string, stores: Seeded[]) => {
    const items = stores.map(({ id, createdAt }) => ({
      ...keys.resellerStore(id),
      GSI1PK: lists.resellerStores(ownerId),
      GSI1SK: listSortKey(createdAt, id),
      GSI2PK: lookups.shop(`${id.replace('_', '-')}.myshopify.com`),
      GSI2SK: lookups.shopResellerStore(id),
      id,
      ownerId,
      name: `Seeded ${id}`,
      platform: 'custom',
      shopDomain: `${id.replace('_', '-')}.myshopify.com`,
      accessToken: 'c2VlZGVkLWNpcGhlcnRleHQ=',
      webhookSecret: 'c2VlZGVkLWNpcGhlcnRleHQ=',
      createdAt,
      updatedAt: createdAt,
      deletedAt: null,
    }));
    for (let i = 0; i < items.length; i += 25) {
      await service.doc.send(
        new BatchWriteCommand({
          RequestItems: { [service.tableName]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
        }),
      );
    }
  };

  /** 45 stores sharing one timestamp, with ids whose order is unrelated to their creation, and 5 others. */
  const dataset = (ownerId: string): Seeded[] => {
    const ids = (n: number) => `rst_${createHash('sha256').update(`${ownerId}:${n}`).digest('hex').slice(0, 24)}`;
    const same = Array.from({ length: 45 }, (_, i) => ({ id: ids(i), createdAt: SAME }));
    return [
      ...same,
      { id: ids(100), createdAt: '2026-03-01T12:00:00.001Z' },
      { id: ids(101), createdAt: '2026-03-01T12:00:00.001Z' },
      { id: ids(102), createdAt: '2026-03-01T11:59:59.999Z' },
      { id: ids(103), createdAt: '2026-02-28T23:59:59.999Z' },
      { id: ids(104), createdAt: '2025-12-31T00:00:00.000Z' },
    ];
  };

  /** SPEC 8.1: createdAt descending, then id descending. */
  const newestFirst = (stores: Seeded[]) =>
    [...stores]
      .sort((x, y) => (x.createdAt === y.createdAt ? (x.id < y.id ? 1 : -1) : x.createdAt < y.createdAt ? 1 : -1))
      .map((s) => s.id);

  it('walks 50 stores, 45 of them sharing a timestamp, 7 at a time without skipping or repeating one', async () => {
    const { ownerId, api } = await newOwner();
    const stores = dataset(ownerId);
    await seed(ownerId, stores);
    const expected = newestFirst(stores);

    const pages = await walk(api, '/v1/reseller_stores', 7);

    expect(pages.map((p) => p.ids.length)).toEqual([7, 7, 7, 7, 7, 7, 7, 1]);
    expect(pages.map((p) => p.hasMore)).toEqual([true, true, true, true, true, true, true, false]);
    const walked = pages.flatMap((p) => p.ids);
    expect(new Set(walked).size).toBe(50);
    expect(walked).toEqual(expected);
  });

  it('serves 20 per page by default, up to 100 on request, and says has_more exactly', async () => {
    const { ownerId, api } = await newOwner();
    const stores = dataset(ownerId);
    await seed(ownerId, stores);
    const expected = newestFirst(stores);

    const first = await api.get('/v1/reseller_stores');
    expect(first.body.data.map((s: { id: string }) => s.id)).toEqual(expected.slice(0, 20));
    expect(first.body.has_more).toBe(true);

    const all = await api.get('/v1/reseller_stores?limit=100');
    expect(all.body.data.map((s: { id: string }) => s.id)).toEqual(expected);
    expect(all.body.has_more).toBe(false);

    const exact = await api.get('/v1/reseller_stores?limit=50');
    expect(exact.body.data).toHaveLength(50);
    expect(exact.body.has_more).toBe(false);

    const oneShort = await api.get('/v1/reseller_stores?limit=49');
    expect(oneShort.body.data).toHaveLength(49);
    expect(oneShort.body.has_more).toBe(true);

    const last = await api.get(`/v1/reseller_stores?limit=5&starting_after=${expected[48]}`);
    expect(last.body.data.map((s: { id: string }) => s.id)).toEqual([expected[49]]);
    expect(last.body.has_more).toBe(false);

    const beyond = await api.get(`/v1/reseller_stores?starting_after=${expected[49]}`);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.has_more).toBe(false);
  });

  it('keeps later pages intact while new stores arrive', async () => {
    const { ownerId, api } = await newOwner();
    const stores = dataset(ownerId);
    await seed(ownerId, stores);

    const first = await api.get('/v1/reseller_stores?limit=7');
    const cursor = first.body.data.at(-1);
    expect(first.body.data.map((s: { id: string }) => s.id)).toEqual(newestFirst(stores).slice(0, 7));

    // Newer than everything (through the API), and two with the shared timestamp: one that sorts
    // above the cursor (already passed) and one that sorts below it (still ahead).
    const fresh = await Promise.all([createResellerStore(api), createResellerStore(api)]);
    const passed = { id: `rst_${'z'.repeat(24)}`, createdAt: SAME };
    const ahead = { id: `rst_${'0'.repeat(24)}`, createdAt: SAME };
    expect(listSortKey(passed.createdAt, passed.id) > listSortKey(cursor.createdAt, cursor.id)).toBe(true);
    await seed(ownerId, [passed, ahead]);

    const rest = (await walk(api, '/v1/reseller_stores', 7, cursor.id)).flatMap((p) => p.ids);
    const all = [
      ...stores,
      passed,
      ahead,
      ...fresh.map((s) => ({ id: s.id as string, createdAt: s.createdAt as string })),
    ];
    const expectedRest = newestFirst(
      all.filter((s) => listSortKey(s.createdAt, s.id) < listSortKey(cursor.createdAt, cursor.id)),
    );
    expect(rest).toEqual(expectedRest);
    expect(rest).toContain(ahead.id);
    expect(rest).not.toContain(passed.id);
    expect(rest.filter((id) => fresh.some((s) => s.id === id))).toEqual([]);
    expect([...first.body.data.map((s: { id: string }) => s.id), ...rest].filter((id) => id !== ahead.id)).toEqual(
      newestFirst(stores),
    );
  });

  it('continues from a cursor whose store was soft-deleted since', async () => {
    const { ownerId, api } = await newOwner();
    const stores = dataset(ownerId);
    await seed(ownerId, stores);
    const expected = newestFirst(stores);

    const first = await api.get('/v1/reseller_stores?limit=7');
    const cursorId = first.body.data.at(-1).id;
    expect(cursorId).toBe(expected[6]);
    expect((await api.delete(`/v1/reseller_stores/${cursorId}`)).status).toBe(204);

    const next = await api.get(`/v1/reseller_stores?limit=7&starting_after=${cursorId}`);
    expect(next.status).toBe(200);
    expect(next.body.data.map((s: { id: string }) => s.id)).toEqual(expected.slice(7, 14));

    const everything = await api.get('/v1/reseller_stores?limit=100');
    expect(everything.body.data.map((s: { id: string }) => s.id)).toEqual(expected.filter((id) => id !== cursorId));
  });
});

describe('POST /v1/reseller_stores/{rst_id}/source_stores', () => {
  it('answers 201 with the source store and no secrets', async () => {
    const reseller = await createResellerStore(A());
    const body = sourceStoreBody({ name: 'Acme Supply', platform: 'custom', vendorTag: 'Acme' });
    const before = Date.now();
    const res = await A().post(sourcePath(reseller.id), body);
    const after = Date.now();

    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(SOURCE_FIELDS);
    expect(res.body).toMatchObject({
      object: 'source_store',
      resellerStoreId: reseller.id,
      name: 'Acme Supply',
      platform: 'custom',
      shopDomain: body.shopDomain,
      vendorTag: 'Acme',
      pricingMode: 'percentage',
      pricingConfig: { type: 'percentage', value: 30 },
      deletedAt: null,
    });
    expect(res.body.id).toMatch(/^sst_[0-9a-z]{16,}$/);
    expectTimestampNow(res.body.createdAt, before, after);
    expect(res.headers.get('request-id')).toBe(res.body.request_id);
    expect(res.body.request_id).toMatch(REQUEST_ID);
    expect(res.text).not.toContain(body.accessToken);
    expect(res.text).not.toContain(body.webhookSecret);
    expect(res.text).not.toMatch(/accessToken|webhookSecret/);
  });

  it('accepts field_rules pricing and answers it as given', async () => {
    const reseller = await createResellerStore(A());
    const pricingConfig = { type: 'field_rules', productCost: 3, shippingCost: 2.5 };
    const res = await A().post(sourcePath(reseller.id), sourceStoreBody({ pricingMode: 'field_rules', pricingConfig }));
    expect(res.status).toBe(201);
    expect(res.body.pricingMode).toBe('field_rules');
    expect(res.body.pricingConfig).toEqual(pricingConfig);
  });

  it.each([
    ['percentage 0', { type: 'percentage', value: 0 }],
    ['percentage 1000', { type: 'percentage', value: 1000 }],
  ])('accepts %s', async (_, pricingConfig) => {
    const reseller = await createResellerStore(A());
    const res = await A().post(sourcePath(reseller.id), sourceStoreBody({ pricingConfig }));
    expect(res.status).toBe(201);
    expect(res.body.pricingConfig).toEqual(pricingConfig);
  });

  it('stores both secrets encrypted, and the key refuses them under another store or field', async () => {
    const reseller = await createResellerStore(A());
    const body = sourceStoreBody();
    const store = await createSourceStore(A(), reseller.id, body);
    const other = await createSourceStore(A(), reseller.id);
    const item = await rawItem(keys.sourceStore(store.id));

    expect(item).toBeDefined();
    for (const field of ['accessToken', 'webhookSecret'] as const) {
      expect(typeof item![field]).toBe('string');
      expect(item![field]).not.toBe(body[field]);
      expect(item![field]).not.toContain(body[field]);
      expect(Buffer.from(item![field], 'base64').toString('utf8')).not.toContain(body[field]);
      await expect(decrypt(item![field], { storeId: store.id, field })).resolves.toBe(body[field]);
      await expect(decrypt(item![field], { storeId: other.id, field })).rejects.toMatchObject({
        name: 'InvalidCiphertextException',
      });
      await expect(decrypt(item![field], { storeId: reseller.id, field })).rejects.toMatchObject({
        name: 'InvalidCiphertextException',
      });
      await expect(decrypt(item![field], {})).rejects.toMatchObject({ name: 'InvalidCiphertextException' });
    }
    await expect(decrypt(item!.accessToken, { storeId: store.id, field: 'webhookSecret' })).rejects.toMatchObject({
      name: 'InvalidCiphertextException',
    });
  });

  it('stores the shop domain lower-cased', async () => {
    const reseller = await createResellerStore(A());
    const label = unique('UPPER').toUpperCase();
    const res = await A().post(sourcePath(reseller.id), sourceStoreBody({ shopDomain: `${label}.MYSHOPIFY.COM` }));
    expect(res.status).toBe(201);
    expect(res.body.shopDomain).toBe(`${label.toLowerCase()}.myshopify.com`);
  });

  it.each([
    ...missing('name', 'vendorTag', 'pricingMode', 'pricingConfig', 'accessToken', 'webhookSecret'),
    ['an unknown field', { resellerStoreId: 'rst_other' }, 'resellerStoreId'],
    ['a vendorTag that is not a string', { vendorTag: 5 }, 'vendorTag'],
    ['an empty vendorTag', { vendorTag: '' }, 'vendorTag'],
    ['an unknown platform', { platform: 'magento' }, 'platform'],
    ['a shop domain of another suffix', { shopDomain: 'supplier.example.com' }, 'shopDomain'],
    ['a shop domain label of 64 characters', { shopDomain: `${'b'.repeat(64)}.myshopify.com` }, 'shopDomain'],
    ['an unknown pricingMode', { pricingMode: 'fixed' }, 'pricingMode'],
    [
      'a pricingConfig.type other than pricingMode',
      { pricingMode: 'percentage', pricingConfig: { type: 'field_rules', productCost: 1, shippingCost: 1 } },
      'pricingConfig.type',
    ],
    [
      'a field_rules mode with a percentage config',
      { pricingMode: 'field_rules', pricingConfig: { type: 'percentage', value: 10 } },
      'pricingConfig.type',
    ],
    ['an unknown pricingConfig.type', { pricingConfig: { type: 'markup', value: 10 } }, 'pricingConfig.type'],
    ['a pricingConfig that is not an object', { pricingConfig: 'percentage' }, 'pricingConfig'],
    [
      'a pricingConfig.value over 1000',
      { pricingConfig: { type: 'percentage', value: 1000.5 } },
      'pricingConfig.value',
    ],
    ['a negative pricingConfig.value', { pricingConfig: { type: 'percentage', value: -1 } }, 'pricingConfig.value'],
    [
      'a pricingConfig.value that is a string',
      { pricingConfig: { type: 'percentage', value: '30' } },
      'pricingConfig.value',
    ],
    ['a missing pricingConfig.value', { pricingConfig: { type: 'percentage' } }, 'pricingConfig.value'],
    [
      'an unknown pricingConfig field',
      { pricingConfig: { type: 'percentage', value: 30, currency: 'USD' } },
      'pricingConfig.currency',
    ],
    [
      'a negative productCost',
      { pricingMode: 'field_rules', pricingConfig: { type: 'field_rules', productCost: -0.01, shippingCost: 1 } },
      'pricingConfig.productCost',
    ],
    [
      'a negative shippingCost',
      { pricingMode: 'field_rules', pricingConfig: { type: 'field_rules', productCost: 1, shippingCost: -1 } },
      'pricingConfig.shippingCost',
    ],
    [
      'a missing shippingCost',
      { pricingMode: 'field_rules', pricingConfig: { type: 'field_rules', productCost: 1 } },
      'pricingConfig.shippingCost',
    ],
  ])('answers 400 validation_failed for %s, and writes nothing', async (_, overrides, param) => {
    const reseller = await createResellerStore(A());
    await expectNoWrites(async () => {
      const res = await A().post(sourcePath(reseller.id), sourceStoreBody(overrides));
      expectError(res, 400, 'validation_failed', param);
    });
  });

  it('answers 400 for bad JSON, 415 for text/plain and 413 for over 64 KiB', async () => {
    const reseller = await createResellerStore(A());
    await expectNoWrites(async () => {
      const json = { 'content-type': 'application/json' };
      expectError(
        await A().post(sourcePath(reseller.id), undefined, { rawBody: '{', headers: json }),
        400,
        'validation_failed',
        null,
      );
      expectError(
        await A().post(sourcePath(reseller.id), undefined, {
          rawBody: JSON.stringify(sourceStoreBody()),
          headers: { 'content-type': 'text/plain' },
        }),
        415,
        'unsupported_media_type',
        null,
      );
      const huge = JSON.stringify(sourceStoreBody({ name: 'n'.repeat(70_000) }));
      expectError(
        await A().post(sourcePath(reseller.id), undefined, { rawBody: huge, headers: json }),
        413,
        'payload_too_large',
        null,
      );
    });
  });

  it('answers 404 resource_missing (param rst_id) for an unknown reseller store, and writes nothing', async () => {
    await expectNoWrites(async () => {
      const res = await A().post(sourcePath('rst_doesnotexist000000000'), sourceStoreBody());
      expectError(res, 404, 'resource_missing', 'rst_id');
    });
  });

  it("answers 404 resource_missing (param rst_id) under another owner's reseller store; writes nothing", async () => {
    const reseller = await createResellerStore(A());
    await expectNoWrites(async () => {
      const res = await B().post(sourcePath(reseller.id), sourceStoreBody());
      expectError(res, 404, 'resource_missing', 'rst_id');
    });
  });

  it('answers 404 resource_missing (param rst_id) under a soft-deleted reseller store', async () => {
    const reseller = await createResellerStore(A());
    await A().delete(`/v1/reseller_stores/${reseller.id}`);
    await expectNoWrites(async () => {
      expectError(await A().post(sourcePath(reseller.id), sourceStoreBody()), 404, 'resource_missing', 'rst_id');
    });
  });

  it('answers 409 vendor_tag_conflict for a second active store with the same tag, and writes nothing', async () => {
    const reseller = await createResellerStore(A());
    const first = await createSourceStore(A(), reseller.id, { vendorTag: 'Acme' });
    await expectNoWrites(async () => {
      const res = await A().post(sourcePath(reseller.id), sourceStoreBody({ vendorTag: 'Acme' }));
      expectError(res, 409, 'vendor_tag_conflict', 'vendorTag');
    });
    const listed = (await A().get(sourcePath(reseller.id))).body.data.map((s: { id: string }) => s.id);
    expect(listed).toEqual([first.id]);
  });

  it('lets only one of two concurrent creates with the same tag win', async () => {
    const reseller = await createResellerStore(A());
    const results = await Promise.all(
      Array.from({ length: 4 }, () => A().post(sourcePath(reseller.id), sourceStoreBody({ vendorTag: 'Racer' }))),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    expect((await A().get(sourcePath(reseller.id))).body.data).toHaveLength(1);
  });

  it('frees the tag when the store holding it is deleted', async () => {
    const reseller = await createResellerStore(A());
    const first = await createSourceStore(A(), reseller.id, { vendorTag: 'Reused' });
    expect((await A().delete(sourcePath(reseller.id, first.id))).status).toBe(204);
    const second = await A().post(sourcePath(reseller.id), sourceStoreBody({ vendorTag: 'Reused' }));
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.id);
    // The deleted store's (late) second DELETE must not free the successor's tag.
    expectError(await A().delete(sourcePath(reseller.id, first.id)), 404, 'resource_missing', 'id');
    expectError(
      await A().post(sourcePath(reseller.id), sourceStoreBody({ vendorTag: 'Reused' })),
      409,
      'vendor_tag_conflict',
      'vendorTag',
    );
  });

  it('treats tags as case-sensitive and scoped to their reseller store', async () => {
    const one = await createResellerStore(A());
    const two = await createResellerStore(A());
    await createSourceStore(A(), one.id, { vendorTag: 'Acme' });
    expect((await A().post(sourcePath(one.id), sourceStoreBody({ vendorTag: 'acme' }))).status).toBe(201);
    expect((await A().post(sourcePath(two.id), sourceStoreBody({ vendorTag: 'Acme' }))).status).toBe(201);
  });
});

describe('GET /v1/reseller_stores/{rst_id}/source_stores', () => {
  it('lists the active source stores newest first, in the list envelope', async () => {
    const reseller = await createResellerStore(A());
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await createSourceStore(A(), reseller.id, { vendorTag: `Tag${i}` }));
    await A().delete(sourcePath(reseller.id, created[2].id));

    const res = await A().get(sourcePath(reseller.id));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', url: sourcePath(reseller.id), has_more: false });
    expect(res.body.request_id).toBe(res.headers.get('request-id'));
    const expected = created
      .filter((_, i) => i !== 2)
      .sort((x, y) => (x.createdAt === y.createdAt ? (x.id < y.id ? 1 : -1) : x.createdAt < y.createdAt ? 1 : -1))
      .map((s) => s.id);
    expect(res.body.data.map((s: { id: string }) => s.id)).toEqual(expected);
    for (const item of res.body.data) {
      expect(Object.keys(item).sort()).toEqual(SOURCE_FIELDS);
      expect(item.request_id).toBe(res.body.request_id);
      expect(item.resellerStoreId).toBe(reseller.id);
    }
    expect(res.text).not.toMatch(/accessToken|webhookSecret/);

    const pages = await walk(A(), sourcePath(reseller.id), 2);
    expect(pages.map((p) => p.hasMore)).toEqual([true, false]);
    expect(pages.flatMap((p) => p.ids)).toEqual(expected);
  });

  it('lists only the stores of that reseller store', async () => {
    const one = await createResellerStore(A());
    const two = await createResellerStore(A());
    const mine = await createSourceStore(A(), one.id);
    await createSourceStore(A(), two.id);
    expect((await A().get(sourcePath(one.id))).body.data.map((s: { id: string }) => s.id)).toEqual([mine.id]);
  });

  it("answers 404 resource_missing (param rst_id) for another owner's reseller store", async () => {
    const reseller = await createResellerStore(A());
    await createSourceStore(A(), reseller.id);
    const res = await B().get(sourcePath(reseller.id));
    expectError(res, 404, 'resource_missing', 'rst_id');
    expect(res.text).not.toContain('sst_');
  });

  it('answers 404 resource_missing (param rst_id) for an unknown reseller store', async () => {
    expectError(await A().get(sourcePath('rst_doesnotexist000000000')), 404, 'resource_missing', 'rst_id');
  });

  it('answers 400 validation_failed for a bad limit or an unknown parameter', async () => {
    const reseller = await createResellerStore(A());
    expectError(await A().get(`${sourcePath(reseller.id)}?limit=0`), 400, 'validation_failed', 'limit');
    expectError(await A().get(`${sourcePath(reseller.id)}?limit=101`), 400, 'validation_failed', 'limit');
    expectError(await A().get(`${sourcePath(reseller.id)}?limit=abc`), 400, 'validation_failed', 'limit');
    expectError(await A().get(`${sourcePath(reseller.id)}?vendorTag=Acme`), 400, 'validation_failed', 'vendorTag');
  });

  it('answers 400 invalid_cursor for an unknown id or a store of another reseller store', async () => {
    const one = await createResellerStore(A());
    const two = await createResellerStore(A());
    const elsewhere = await createSourceStore(A(), two.id);
    expectError(
      await A().get(`${sourcePath(one.id)}?starting_after=sst_doesnotexist000000000`),
      400,
      'invalid_cursor',
      'starting_after',
    );
    expectError(
      await A().get(`${sourcePath(one.id)}?starting_after=${elsewhere.id}`),
      400,
      'invalid_cursor',
      'starting_after',
    );
    expectError(
      await A().get(`${sourcePath(one.id)}?starting_after=${one.id}`),
      400,
      'invalid_cursor',
      'starting_after',
    );
  });

  it('continues from a cursor whose store was deleted since', async () => {
    const reseller = await createResellerStore(A());
    const created = [];
    for (let i = 0; i < 4; i++) created.push(await createSourceStore(A(), reseller.id, { vendorTag: `Cursor${i}` }));
    const first = await A().get(`${sourcePath(reseller.id)}?limit=2`);
    const [, cursor] = first.body.data;
    await A().delete(sourcePath(reseller.id, cursor.id));
    const next = await A().get(`${sourcePath(reseller.id)}?limit=2&starting_after=${cursor.id}`);
    expect(next.status).toBe(200);
    const shown = [...first.body.data, ...next.body.data].map((s: { id: string }) => s.id);
    expect(new Set(shown).size).toBe(4);
    expect(shown.sort()).toEqual(created.map((s) => s.id).sort());
    expect(next.body.has_more).toBe(false);
  });
});

describe('GET /v1/reseller_stores/{rst_id}/source_stores/{id}', () => {
  it('answers 200 with the same store the create answered', async () => {
    const reseller = await createResellerStore(A());
    const created = await createSourceStore(A(), reseller.id, {
      pricingMode: 'field_rules',
      pricingConfig: { type: 'field_rules', productCost: 1.25, shippingCost: 0 },
    });
    const res = await A().get(sourcePath(reseller.id, created.id));
    expect(res.status).toBe(200);
    const { request_id: _, ...fields } = created;
    expect(res.body).toEqual({ ...fields, request_id: res.headers.get('request-id') });
    expect(res.text).not.toMatch(/accessToken|webhookSecret/);
  });

  it('answers a soft-deleted store with its deletedAt', async () => {
    const reseller = await createResellerStore(A());
    const store = await createSourceStore(A(), reseller.id);
    const before = Date.now();
    await A().delete(sourcePath(reseller.id, store.id));
    const after = Date.now();
    const res = await A().get(sourcePath(reseller.id, store.id));
    expect(res.status).toBe(200);
    expectTimestampNow(res.body.deletedAt, before, after);
  });

  it('answers 404 resource_missing for an unknown id', async () => {
    const reseller = await createResellerStore(A());
    expectError(await A().get(sourcePath(reseller.id, 'sst_doesnotexist000000000')), 404, 'resource_missing', 'id');
    expectError(await A().get(sourcePath(reseller.id, reseller.id)), 404, 'resource_missing', 'id');
  });

  it('answers 404 resource_missing for a store under another reseller store of the same owner', async () => {
    const one = await createResellerStore(A());
    const two = await createResellerStore(A());
    const store = await createSourceStore(A(), two.id);
    expectError(await A().get(sourcePath(one.id, store.id)), 404, 'resource_missing', 'id');
  });

  it("answers 404 resource_missing for another owner's store", async () => {
    const reseller = await createResellerStore(A());
    const store = await createSourceStore(A(), reseller.id);
    const res = await B().get(sourcePath(reseller.id, store.id));
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('resource_missing');
    expect(res.text).not.toContain(store.vendorTag);
  });
});

describe('DELETE /v1/reseller_stores/{rst_id}/source_stores/{id}', () => {
  it('answers 204 with no body, soft-deletes, and a second DELETE answers 404', async () => {
    const reseller = await createResellerStore(A());
    const store = await createSourceStore(A(), reseller.id);
    const res = await A().delete(sourcePath(reseller.id, store.id));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers.get('request-id')).toMatch(REQUEST_ID);

    const item = await rawItem(keys.sourceStore(store.id));
    expect(item!.deletedAt).toMatch(ISO_MS);
    expect(item!.accessToken).toEqual(expect.any(String));
    expect(await rawItem(keys.vendorTag(reseller.id, store.vendorTag))).toBeUndefined();

    expectError(await A().delete(sourcePath(reseller.id, store.id)), 404, 'resource_missing', 'id');
    expect((await A().get(sourcePath(reseller.id))).body.data).toEqual([]);
  });

  it('answers 404 resource_missing for an unknown id', async () => {
    const reseller = await createResellerStore(A());
    await expectNoWrites(async () => {
      expectError(
        await A().delete(sourcePath(reseller.id, 'sst_doesnotexist000000000')),
        404,
        'resource_missing',
        'id',
      );
    });
  });

  it('answers 404 for a store under another reseller store, and leaves it active', async () => {
    const one = await createResellerStore(A());
    const two = await createResellerStore(A());
    const store = await createSourceStore(A(), two.id);
    expectError(await A().delete(sourcePath(one.id, store.id)), 404, 'resource_missing', 'id');
    expect((await A().get(sourcePath(two.id, store.id))).body.deletedAt).toBeNull();
  });

  it("answers 404 resource_missing for another owner's store, and leaves it active", async () => {
    const reseller = await createResellerStore(A());
    const store = await createSourceStore(A(), reseller.id);
    await expectNoWrites(async () => {
      const res = await B().delete(sourcePath(reseller.id, store.id));
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('resource_missing');
    });
    expect((await A().get(sourcePath(reseller.id, store.id))).body.deletedAt).toBeNull();
    expectError(
      await A().post(sourcePath(reseller.id), sourceStoreBody({ vendorTag: store.vendorTag })),
      409,
      'vendor_tag_conflict',
      'vendorTag',
    );
  });
});
