import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { isId, newId } from '../../shared/core/ids.js';
import { dynamo } from './aws-mocks.js';
import type { HttpHandler } from './http-handler.js';

/**
 * Ids checked before any database call (CONTRACT.md §3): a path id or a cursor that cannot be an
 * id of its kind (prefix, length, alphabet) is missing, or an invalid cursor, without a single
 * DynamoDB call. Every SDK call would fail here (the clients are mocked with no answers), so a
 * handler that touched the table would answer 500.
 */

type Handler = HttpHandler;

const rawDynamo = mockClient(DynamoDBClient);

const context = () => ({ functionName: 'ids-test', awsRequestId: 'aws-1', getRemainingTimeInMillis: () => 10_000 });

const event = (
  method: string,
  path: string,
  pathParameters?: Record<string, string>,
  query?: Record<string, string>,
) => ({
  version: '2.0',
  routeKey: `${method} ${path}`,
  rawPath: path,
  rawQueryString: '',
  headers: method === 'PATCH' ? { 'content-type': 'application/json' } : {},
  ...(pathParameters ? { pathParameters } : {}),
  ...(query ? { queryStringParameters: query } : {}),
  ...(method === 'PATCH' ? { body: '{"name":"Renamed"}' } : {}),
  isBase64Encoded: false,
  requestContext: {
    http: { method, path },
    requestId: 'apigw-1',
    authorizer: { lambda: { ownerId: 'owner_a', keyId: 'key_1' } },
  },
});

const call = async (name: string, e: ReturnType<typeof event>) => {
  const handler = (await import(`../../functions/${name}.js`)).handler as Handler;
  const res = await handler(e, context());
  return { status: res.statusCode, headers: res.headers ?? {}, body: res.body ? JSON.parse(res.body) : undefined };
};

const LONG = `sj_${'a'.repeat(3_000)}`;
const hostile = [
  ['3,000 characters', LONG],
  ['a wrong prefix', newId('key')],
  ['one character short', newId('sj').slice(0, -1)],
  ['a letter outside the alphabet', `sj_${'u'.repeat(24)}`],
  ['upper case', newId('sj').toUpperCase()],
  ['a NUL byte', `sj_${'0'.repeat(23)}\u0000`],
];

beforeEach(() => {
  dynamo.reset();
  rawDynamo.reset();
  dynamo.onAnyCommand().rejects(new Error('no DynamoDB call was expected'));
});

const expectNoDynamoCall = () => {
  expect(dynamo.calls()).toHaveLength(0);
  expect(rawDynamo.calls()).toHaveLength(0);
};

describe('ids: isId', () => {
  it('accepts the ids the service makes, and nothing else', () => {
    expect(isId('sj', newId('sj'))).toBe(true);
    expect(isId('rst', newId('rst'))).toBe(true);
    for (const [, value] of hostile) expect(isId('sj', value)).toBe(false);
    expect(isId('sj', undefined)).toBe(false);
  });
});

const SOURCE = '/v1/reseller_stores/{rst_id}/source_stores/{id}';

describe.each([
  ['get-sync-job', 'GET', '/v1/sync_jobs/{id}', (id: string) => ({ id })],
  ['retry-sync-job', 'POST', '/v1/sync_jobs/{id}/retry', (id: string) => ({ id })],
  ['get-reseller-store', 'GET', '/v1/reseller_stores/{id}', (id: string) => ({ id })],
  ['update-reseller-store', 'PATCH', '/v1/reseller_stores/{id}', (id: string) => ({ id })],
  ['delete-reseller-store', 'DELETE', '/v1/reseller_stores/{id}', (id: string) => ({ id })],
  ['get-source-store', 'GET', SOURCE, (id: string) => ({ rst_id: id, id: newId('sst') })],
  ['get-source-store', 'GET', SOURCE, (id: string) => ({ rst_id: newId('rst'), id })],
  ['list-source-stores', 'GET', '/v1/reseller_stores/{rst_id}/source_stores', (id: string) => ({ rst_id: id })],
  ['delete-source-store', 'DELETE', SOURCE, (id: string) => ({ rst_id: id, id: newId('sst') })],
  ['delete-source-store', 'DELETE', SOURCE, (id: string) => ({ rst_id: newId('rst'), id })],
])('%s with a path id that cannot be one', (name, method, path, params) => {
  it.each(hostile)('answers 404 resource_missing for %s, without a DynamoDB call', async (_what, id) => {
    const res = await call(name, event(method, path, params(id)));
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('resource_missing');
    expect(res.body.error.message.length).toBeLessThan(200);
    expect(res.headers).toMatchObject({ 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
    expectNoDynamoCall();
  });
});

describe.each([
  ['list-sync-jobs', '/v1/sync_jobs'],
  ['list-reseller-stores', '/v1/reseller_stores'],
  ['list-audit-log', '/v1/audit_log'],
])('%s with a starting_after that cannot be an id of that list', (name, path) => {
  it.each(hostile)('answers 400 invalid_cursor for %s, without a DynamoDB call', async (_what, cursor) => {
    const res = await call(name, event('GET', path, undefined, { starting_after: cursor }));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
    expectNoDynamoCall();
  });
});

describe('id filters of the lists', () => {
  it.each([
    ['list-sync-jobs', '/v1/sync_jobs', 'reseller_store_id'],
    ['list-audit-log', '/v1/audit_log', 'reseller_store_id'],
    ['list-audit-log', '/v1/audit_log', 'resource_id'],
  ])(
    '%s (%s) refuses a %s that cannot be an id with 400 naming it, without a DynamoDB call',
    async (name, path, param) => {
      const res = await call(name, event('GET', path, undefined, { [param]: LONG }));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_failed', param });
      expectNoDynamoCall();
    },
  );
});
