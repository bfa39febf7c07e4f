import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from './aws-mocks.js';

/**
 * The bearer-key authorizer (functions/authorizer.ts): it always allows the request and says in
 * its context who the caller is, or nobody; it throws when the API keys could not be read.
 */

Object.assign(process.env, {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  TABLE_NAME: 'authorizer-table',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
});

type Authorizer = (event: unknown) => Promise<{ isAuthorized: boolean; context: Record<string, unknown> }>;

let authorize: Authorizer;
beforeAll(async () => {
  authorize = (await import('../../functions/authorizer.js')).handler as unknown as Authorizer;
});

const KEY = 'sk_test_Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWo';
const keyItem = (key: string) => ({ PK: `KEY#${createHash('sha256').update(key, 'utf8').digest('hex')}`, SK: 'KEY' });

const event = (headers: Record<string, string> | undefined) => ({
  version: '2.0',
  type: 'REQUEST',
  routeArn: 'arn:aws:execute-api:us-east-1:000000000000:api/$default/GET/v1/reseller_stores',
  identitySource: [],
  routeKey: 'GET /v1/reseller_stores',
  rawPath: '/v1/reseller_stores',
  rawQueryString: '',
  headers,
  requestContext: { http: { method: 'GET', path: '/v1/reseller_stores' } },
});

beforeEach(() => {
  dynamo.reset();
  dynamo.on(GetCommand).resolves({});
  dynamo
    .on(GetCommand, { Key: keyItem(KEY) })
    .resolves({ Item: { ...keyItem(KEY), keyId: 'key_1', ownerId: 'owner_a' } });
});

describe('Function: authorizer', () => {
  it('resolves a bearer key to its owner and key id, looking it up by its SHA-256 hash', async () => {
    const verdict = await authorize(event({ authorization: `Bearer ${KEY}` }));
    expect(verdict).toEqual({ isAuthorized: true, context: { ownerId: 'owner_a', keyId: 'key_1' } });

    const gets = dynamo.commandCalls(GetCommand).map((c) => c.args[0].input);
    expect(gets).toHaveLength(1);
    expect(gets[0]).toMatchObject({ TableName: 'authorizer-table', Key: keyItem(KEY) });
    // Consistently: a key revoked a moment ago is refused by the next lookup, so on AWS the cache's
    // TTL alone bounds how long it still works (test/cdk/revocation.test.ts).
    expect(gets[0].ConsistentRead).toBe(true);
    expect(JSON.stringify(gets[0])).not.toContain(KEY);
  });

  it.each([
    ['the header name in any case', { Authorization: `Bearer ${KEY}` }],
    ['the scheme in lower case', { authorization: `bearer ${KEY}` }],
    ['the scheme in upper case', { authorization: `BEARER ${KEY}` }],
    ['several spaces and a trailing space', { authorization: `Bearer   ${KEY} ` }],
  ])('accepts %s', async (_, headers) => {
    const verdict = await authorize(event(headers));
    expect(verdict.context).toEqual({ ownerId: 'owner_a', keyId: 'key_1' });
  });

  it.each([
    ['no headers at all', undefined],
    ['no Authorization header', { 'content-type': 'application/json' }],
    ['an empty header', { authorization: '' }],
    ['the Basic scheme', { authorization: `Basic ${Buffer.from(`owner_a:${KEY}`).toString('base64')}` }],
    ['a bare key', { authorization: KEY }],
    ['Bearer without a key', { authorization: 'Bearer ' }],
    ['two tokens', { authorization: `Bearer ${KEY} ${KEY}` }],
    ['a Token scheme', { authorization: `Token ${KEY}` }],
  ])('passes no owner, without a lookup, for %s', async (_, headers) => {
    const verdict = await authorize(event(headers));
    expect(verdict).toEqual({ isAuthorized: true, context: {} });
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(0);
  });

  it('passes no owner for an unknown key', async () => {
    const verdict = await authorize(event({ authorization: 'Bearer sk_test_unknown' }));
    expect(verdict).toEqual({ isAuthorized: true, context: {} });
    expect(dynamo.commandCalls(GetCommand)[0].args[0].input.Key).toEqual(keyItem('sk_test_unknown'));
  });

  it('treats keys as case-sensitive', async () => {
    const verdict = await authorize(event({ authorization: `Bearer ${KEY.toUpperCase()}` }));
    expect(verdict.context).toEqual({});
  });

  it('passes no owner for a revoked key', async () => {
    dynamo.on(GetCommand, { Key: keyItem(KEY) }).resolves({
      Item: { ...keyItem(KEY), keyId: 'key_1', ownerId: 'owner_a', revokedAt: '2026-11-01T00:00:00.000Z' },
    });
    const verdict = await authorize(event({ authorization: `Bearer ${KEY}` }));
    expect(verdict.context).toEqual({});
  });

  // Issue 32: the verdict is cached by API Gateway, so a failed lookup throws (a 500, cached for
  // no one) instead of answering a verdict that would be served from the cache for a minute.
  it('throws, passing no verdict and naming no key, when DynamoDB fails', async () => {
    dynamo.on(GetCommand).rejects(new Error('ProvisionedThroughputExceededException'));
    const thrown = await authorize(event({ authorization: `Bearer ${KEY}` })).catch((error: Error) => error);
    expect(thrown).toBeInstanceOf(Error);
    expect((thrown as Error).message).toBe('the API keys could not be read');
    expect(JSON.stringify(thrown, Object.getOwnPropertyNames(thrown))).not.toContain(KEY);
  });

  it('answers the next request from a fresh lookup once DynamoDB is back', async () => {
    dynamo.on(GetCommand).rejectsOnce(new Error('ProvisionedThroughputExceededException'));
    await expect(authorize(event({ authorization: `Bearer ${KEY}` }))).rejects.toThrow();
    dynamo
      .on(GetCommand, { Key: keyItem(KEY) })
      .resolves({ Item: { ...keyItem(KEY), keyId: 'key_1', ownerId: 'owner_a' } });
    const verdict = await authorize(event({ authorization: `Bearer ${KEY}` }));
    expect(verdict.context).toEqual({ ownerId: 'owner_a', keyId: 'key_1' });
  });

  it('never puts the key itself in the context', async () => {
    const verdict = await authorize(event({ authorization: `Bearer ${KEY}` }));
    expect(JSON.stringify(verdict)).not.toContain(KEY);
  });
});
