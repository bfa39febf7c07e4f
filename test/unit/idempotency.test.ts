import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { ResourceMissingError, ValidationError } from '../../shared/core/errors.js';
import { idempotentRequestKey } from '../../shared/entities/idempotent-request.js';
import { created } from '../../shared/http/handler.js';
import { idempotentApiHandler } from '../../shared/http/idempotent-handler.js';
import { requestFingerprint } from '../../shared/idempotency/requests.js';
import { conditionOf, removesOf, requiresOf, setsOf } from '../command-meaning.js';
import { dynamo as ddb } from './aws-mocks.js';

/**
 * The idempotency middleware (shared/http/idempotency.ts) against a mocked table: what a request
 * leaves behind for the key it holds, whatever way it ends.
 */

mockClient(DynamoDBClient);

const context = () => ({
  functionName: 'idempotency-test',
  awsRequestId: 'aws-req-1',
  getRemainingTimeInMillis: () => 10_000,
});

const BODY = '{"name":"x"}';
const event = (key = 'key-1', body = BODY) => ({
  version: '2.0',
  rawPath: '/v1/things',
  headers: { 'content-type': 'application/json', 'idempotency-key': key },
  body,
  isBase64Encoded: false,
  requestContext: {
    http: { method: 'POST', path: '/v1/things' },
    requestId: 'apigw-1',
    authorizer: { lambda: { ownerId: 'owner_a', keyId: 'key_a' } },
  },
});

type Handler = (event: unknown, context: unknown) => Promise<{ statusCode: number; headers?: any; body?: string }>;
const run = async (fn: () => Promise<any>, e = event()) => {
  const res = await (idempotentApiHandler(fn) as unknown as Handler)(e, context());
  return { status: res.statusCode, headers: res.headers ?? {}, body: res.body ? JSON.parse(res.body) : undefined };
};

/** The updates that kept an answer, and those that released the key. */
const kept = () => ddb.commandCalls(UpdateCommand).filter((c) => 'responseStatus' in setsOf(c.args[0].input));
const released = () =>
  ddb
    .commandCalls(UpdateCommand)
    .filter((c) => Object.keys(setsOf(c.args[0].input)).join() === 'expiresAt' && !removesOf(c.args[0].input).length);

const conditionFailed = () => new ConditionalCheckFailedException({ message: 'failed', $metadata: {} });
const stored = (item: Record<string, unknown>) => ({
  ...idempotentRequestKey({ ownerId: 'owner_a', key: 'x' }),
  fingerprint: requestFingerprint('POST', '/v1/things', Buffer.from(BODY)),
  requestId: 'req_first',
  expiresAt: Math.floor(Date.now() / 1000) + 3600,
  ...item,
});

beforeEach(() => {
  ddb.reset();
  ddb.on(PutCommand).resolves({});
  ddb.on(UpdateCommand).resolves({});
});

describe('idempotentApiHandler', () => {
  it('claims the key with a conditional put, runs, and keeps the answer before request ids are added', async () => {
    const res = await run(async () => created({ object: 'thing', id: 't_1' }));

    expect(res.status).toBe(201);
    const claim = ddb.commandCalls(PutCommand)[0].args[0].input;
    expect(claim.Item).toMatchObject({ state: 'in_progress', requestId: res.body.request_id });
    expect(claim.Item!.lockedUntil).toBeGreaterThan(Date.now());
    expect(conditionOf(claim)).toContain('attribute_not_exists(PK)');
    expect(kept()).toHaveLength(1);
    expect(setsOf(kept()[0].args[0].input)).toMatchObject({
      responseStatus: 201,
      responseBody: JSON.stringify({ object: 'thing', id: 't_1' }),
    });
    expect(requiresOf(kept()[0].args[0].input)).toMatchObject({ requestId: res.body.request_id });
    expect(released()).toHaveLength(0);
  });

  it('keeps a domain refusal (404) as the answer', async () => {
    const res = await run(async () => {
      throw new ResourceMissingError('thing', 't_404');
    });
    expect(res.status).toBe(404);
    expect(setsOf(kept()[0].args[0].input)).toMatchObject({ responseStatus: 404 });
    expect(released()).toHaveLength(0);
  });

  it.each([
    ['an unexpected error (500)', new Error('boom'), 500],
    ['a validation_failed thrown by the handler (400)', new ValidationError('bad', 'name'), 400],
  ])('keeps nothing for %s: the key is given up', async (_what, error, status) => {
    const res = await run(async () => {
      throw error;
    });
    expect(res.status).toBe(status);
    expect(kept()).toHaveLength(0);
    expect(released()).toHaveLength(1);
    const release = released()[0].args[0].input;
    expect(conditionOf(release)).toBe(`requestId = "${res.body.request_id}" AND state = "in_progress"`);
    expect(requiresOf(release).requestId).toBe(res.body.request_id);
  });

  it('replays a completed record without running the handler', async () => {
    ddb.on(PutCommand).rejects(conditionFailed());
    ddb.on(GetCommand).resolves({
      Item: stored({ state: 'completed', responseStatus: 201, responseBody: '{"object":"thing","id":"t_1"}' }),
    });
    const fn = jest.fn();

    const res = await run(fn);

    expect(fn).not.toHaveBeenCalled();
    expect(res.status).toBe(201);
    expect(res.headers).toMatchObject({ 'Idempotent-Replayed': 'true', 'Request-Id': 'req_first' });
    expect(res.body).toEqual({ object: 'thing', id: 't_1', request_id: 'req_first' });
  });

  it('answers 409 while the first request holds the key, and 400 for another body', async () => {
    ddb.on(PutCommand).rejects(conditionFailed());
    ddb.on(GetCommand).resolves({ Item: stored({ state: 'in_progress', lockedUntil: Date.now() + 5_000 }) });
    const fn = jest.fn();

    const busy = await run(fn);
    const other = await run(fn, event('key-1', '{"name":"y"}'));

    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('idempotency_key_in_progress');
    expect(other.status).toBe(400);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    expect(fn).not.toHaveBeenCalled();
    // Refused requests never touch the record they do not hold.
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('claims again when the holder lapsed or the record expired between the put and the read', async () => {
    ddb.on(PutCommand).rejectsOnce(conditionFailed()).rejectsOnce(conditionFailed()).resolves({});
    ddb
      .on(GetCommand)
      .resolvesOnce({ Item: stored({ state: 'in_progress', lockedUntil: Date.now() - 1 }) })
      .resolvesOnce({ Item: stored({ state: 'completed', responseStatus: 201, expiresAt: 1 }) });

    const res = await run(async () => created({ object: 'thing' }));

    expect(res.status).toBe(201);
    expect(res.headers['Idempotent-Replayed']).toBeUndefined();
    expect(ddb.commandCalls(PutCommand)).toHaveLength(3);
  });

  it('still answers when the answer cannot be kept', async () => {
    ddb.on(UpdateCommand).rejects(new Error('throttled'));
    const res = await run(async () => created({ object: 'thing' }));
    expect(res.status).toBe(201);
  });

  it('answers 500 without running the handler when the key cannot be claimed', async () => {
    ddb.on(PutCommand).rejects(new Error('table unavailable'));
    const fn = jest.fn();
    const res = await run(fn);
    expect(res.status).toBe(500);
    expect(fn).not.toHaveBeenCalled();
  });
});
