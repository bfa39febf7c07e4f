/**
 * The middlewares every route shares (shared/http): request id, body limits, JSON parsing,
 * authentication from the authorizer's context, and the error body (CONTRACT.md §3).
 */
import type { HttpHandler } from './http-handler.js';

Object.assign(process.env, {
  AWS_REGION: 'us-east-1',
  TABLE_NAME: 'middlewares-table',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
});

type Lambda = HttpHandler;
type Http = typeof import('../../shared/http/handler.js');
type Types = typeof import('../../shared/http/handler.js');
type Errors = typeof import('../../shared/core/errors.js');

let http: Http;
let types: Types;
let errors: Errors;
beforeAll(async () => {
  http = await import('../../shared/http/handler.js');
  types = await import('../../shared/http/handler.js');
  errors = await import('../../shared/core/errors.js');
});

const context = () => ({
  functionName: 'middlewares-test',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:middlewares-test',
  memoryLimitInMB: '256',
  awsRequestId: 'aws-req-1',
  getRemainingTimeInMillis: () => 10_000,
});

interface EventInput {
  body?: string | Buffer;
  base64?: boolean;
  headers?: Record<string, string>;
  /** The authorizer's context; `null` for none at all. */
  authorizer?: Record<string, unknown> | null;
  pathParameters?: Record<string, string>;
  queryStringParameters?: Record<string, string>;
}

const event = (input: EventInput = {}) => {
  const raw =
    input.body === undefined ? undefined : Buffer.isBuffer(input.body) ? input.body : Buffer.from(input.body, 'utf8');
  return {
    version: '2.0',
    routeKey: 'POST /v1/things',
    rawPath: '/v1/things',
    rawQueryString: '',
    headers: input.headers ?? (raw ? { 'content-type': 'application/json' } : {}),
    ...(input.pathParameters ? { pathParameters: input.pathParameters } : {}),
    ...(input.queryStringParameters ? { queryStringParameters: input.queryStringParameters } : {}),
    ...(raw
      ? { body: raw.toString(input.base64 ? 'base64' : 'utf8'), isBase64Encoded: Boolean(input.base64) }
      : { isBase64Encoded: false }),
    requestContext: {
      http: { method: 'POST', path: '/v1/things' },
      requestId: 'apigw-1',
      ...(input.authorizer === null
        ? {}
        : { authorizer: { lambda: input.authorizer ?? { ownerId: 'owner_a', keyId: 'key_a' } } }),
    },
  };
};

const invoke = async (handler: Lambda, e: unknown) => {
  const res = await handler(e, context());
  return {
    status: res.statusCode,
    headers: res.headers ?? {},
    text: res.body ?? '',
    body: res.body ? JSON.parse(res.body) : undefined,
  };
};

/** An API route that echoes what the middlewares handed it. */
const echoRoute = () => {
  const seen: unknown[] = [];
  const handler = http.apiHandler(async (request) => {
    seen.push(request);
    return types.ok({
      object: 'echo',
      body: request.body as never,
      ownerId: request.ownerId,
      keyId: request.keyId ?? null,
      requestId: request.requestId,
    });
  }) as unknown as Lambda;
  return { handler, seen };
};

const REQUEST_ID = /^req_[0-9a-z]{24}$/;

describe('Request id', () => {
  it('puts the same req_ id in the Request-Id header and the body, and hands it to the handler', async () => {
    const { handler } = echoRoute();
    const res = await invoke(handler, event({ body: '{"a":1}' }));
    expect(res.status).toBe(200);
    expect(res.headers['Request-Id']).toMatch(REQUEST_ID);
    expect(res.body.request_id).toBe(res.headers['Request-Id']);
    expect(res.body.requestId).toBe(res.headers['Request-Id']);
    expect(res.headers['Content-Type']).toBe('application/json');
  });

  it('gives every request its own id, also on errors', async () => {
    const { handler } = echoRoute();
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add((await invoke(handler, event())).headers['Request-Id']);
    ids.add((await invoke(handler, event({ authorizer: null }))).headers['Request-Id']);
    expect(ids.size).toBe(6);
  });

  it('copies the id into every object of a list', async () => {
    const handler = http.apiHandler(async () =>
      types.ok({ object: 'list', data: [{ id: 'a' }, { id: 'b' }], has_more: false, url: '/v1/x' }),
    ) as unknown as Lambda;
    const res = await invoke(handler, event());
    expect(res.body.data).toEqual([
      { id: 'a', request_id: res.headers['Request-Id'] },
      { id: 'b', request_id: res.headers['Request-Id'] },
    ]);
  });

  it('answers 204 with the header and no body', async () => {
    const handler = http.apiHandler(async () => types.noContent()) as unknown as Lambda;
    const res = await handler(event(), context());
    expect(res.statusCode).toBe(204);
    expect(res.body).toBeUndefined();
    expect(res.headers?.['Request-Id']).toMatch(REQUEST_ID);
  });

  it('keeps the id in the error body and header', async () => {
    const { handler } = echoRoute();
    const res = await invoke(handler, event({ body: '{', headers: { 'content-type': 'application/json' } }));
    expect(res.status).toBe(400);
    expect(res.body.request_id).toMatch(REQUEST_ID);
    expect(res.headers['Request-Id']).toBe(res.body.request_id);
  });
});

describe('Authentication', () => {
  it('hands the owner and key id of the authorizer to the handler', async () => {
    const { handler, seen } = echoRoute();
    const res = await invoke(handler, event({ authorizer: { ownerId: 'owner_z', keyId: 'key_z' } }));
    expect(res.body).toMatchObject({ ownerId: 'owner_z', keyId: 'key_z' });
    expect(seen).toHaveLength(1);
  });

  it.each([
    ['no authorizer context', null],
    ['an empty authorizer context', {}],
    ['a key id without an owner', { keyId: 'key_a' }],
    ['an empty owner', { ownerId: '' }],
  ])('answers 401 unauthorized for %s, without calling the handler', async (_, authorizer) => {
    const { handler, seen } = echoRoute();
    const res = await invoke(handler, event({ authorizer }));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: { type: 'authentication_error', code: 'unauthorized', message: expect.stringContaining('Bearer') },
      request_id: res.headers['Request-Id'],
    });
    expect(seen).toHaveLength(0);
  });

  it('answers 500 internal_error, not 401, when the authorizer could not read the keys', async () => {
    const { handler, seen } = echoRoute();
    const res = await invoke(handler, event({ authorizer: { unavailable: true } }));
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      error: { type: 'api_error', code: 'internal_error', message: expect.any(String) },
      request_id: res.headers['Request-Id'],
    });
    expect(res.text).not.toMatch(/authorizer|key store/i);
    expect(seen).toHaveLength(0);
  });

  it('checks the key before the body: no 413 or 415 for an anonymous caller', async () => {
    const { handler } = echoRoute();
    const big = await invoke(handler, event({ authorizer: null, body: 'x'.repeat(70_000) }));
    expect(big.status).toBe(401);
    const text = await invoke(
      handler,
      event({ authorizer: null, body: 'hi', headers: { 'content-type': 'text/plain' } }),
    );
    expect(text.status).toBe(401);
  });
});

describe('Body limit', () => {
  const LIMIT = 64 * 1024;

  it('answers 413 payload_too_large for an API body over 64 KiB, without calling the handler', async () => {
    const { handler, seen } = echoRoute();
    const body = JSON.stringify({ pad: 'x'.repeat(LIMIT) });
    const res = await invoke(handler, event({ body }));
    expect(res.status).toBe(413);
    expect(res.body.error).toEqual({
      type: 'invalid_request_error',
      code: 'payload_too_large',
      message: expect.any(String),
    });
    expect(seen).toHaveLength(0);
  });

  it('accepts exactly 64 KiB', async () => {
    const { handler } = echoRoute();
    const body = JSON.stringify({ pad: 'x'.repeat(LIMIT - 10) });
    expect(Buffer.byteLength(body)).toBe(LIMIT);
    expect((await invoke(handler, event({ body }))).status).toBe(200);
  });

  it('counts bytes, not characters', async () => {
    const { handler } = echoRoute();
    // 30,000 euro signs are 90,000 bytes in UTF-8.
    const body = JSON.stringify({ pad: '€'.repeat(30_000) });
    expect(body.length).toBeLessThan(LIMIT);
    expect((await invoke(handler, event({ body }))).status).toBe(413);
  });

  it('measures a base64-encoded body after decoding it', async () => {
    const { handler } = echoRoute();
    // 60,000 bytes are 80,000 base64 characters: under the limit once decoded.
    const body = JSON.stringify({ pad: 'y'.repeat(60_000 - 10) });
    const res = await invoke(handler, event({ body, base64: true }));
    expect(res.status).toBe(200);
    expect(res.body.body.pad).toHaveLength(60_000 - 10);
  });

  it('allows a webhook body up to 1 MiB and refuses more', async () => {
    const handler = http.webhookHandler(async ({ rawBody }) =>
      types.ok({ object: 'webhook_receipt', bytes: rawBody.length }),
    ) as unknown as Lambda;
    const ok = await invoke(handler, event({ authorizer: null, body: 'a'.repeat(1024 * 1024) }));
    expect(ok.status).toBe(200);
    expect(ok.body.bytes).toBe(1024 * 1024);
    const tooBig = await invoke(handler, event({ authorizer: null, body: 'a'.repeat(1024 * 1024 + 1) }));
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error.code).toBe('payload_too_large');
  });
});

describe('JSON body', () => {
  it('parses an application/json body for the handler', async () => {
    const { handler } = echoRoute();
    const res = await invoke(handler, event({ body: '{"name":"Acme","n":[1,2]}' }));
    expect(res.body.body).toEqual({ name: 'Acme', n: [1, 2] });
  });

  it.each(['application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8'])(
    'accepts Content-Type %s',
    async (contentType) => {
      const { handler } = echoRoute();
      const res = await invoke(handler, event({ body: '{"a":1}', headers: { 'Content-Type': contentType } }));
      expect(res.status).toBe(200);
      expect(res.body.body).toEqual({ a: 1 });
    },
  );

  it.each([
    ['text/plain', { 'content-type': 'text/plain' }],
    ['application/x-www-form-urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['application/jsonp', { 'content-type': 'application/jsonp' }],
    ['no Content-Type', {}],
  ])('answers 415 unsupported_media_type for a body sent as %s', async (_, headers) => {
    const { handler, seen } = echoRoute();
    const res = await invoke(handler, event({ body: '{"a":1}', headers }));
    expect(res.status).toBe(415);
    expect(res.body).toEqual({
      error: { type: 'invalid_request_error', code: 'unsupported_media_type', message: expect.any(String) },
      request_id: res.headers['Request-Id'],
    });
    expect(seen).toHaveLength(0);
  });

  it.each(['{', '{"a":1,}', "{'a':1}", 'undefined', '{"a":1}{"b":2}'])(
    'answers 400 validation_failed for the invalid JSON %s',
    async (body) => {
      const { handler, seen } = echoRoute();
      const res = await invoke(handler, event({ body }));
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({
        type: 'invalid_request_error',
        code: 'validation_failed',
        message: expect.stringMatching(/JSON/),
      });
      expect(seen).toHaveLength(0);
    },
  );

  it('leaves an empty body undefined, whatever the Content-Type', async () => {
    const { handler, seen } = echoRoute();
    const res = await invoke(handler, event({ headers: { 'content-type': 'text/plain' } }));
    expect(res.status).toBe(200);
    expect((seen[0] as { body: unknown }).body).toBeUndefined();
  });

  it('hands path and query parameters through', async () => {
    const { handler, seen } = echoRoute();
    await invoke(handler, event({ pathParameters: { id: 'rst_1' }, queryStringParameters: { limit: '5' } }));
    expect(seen[0]).toMatchObject({ path: { id: 'rst_1' }, query: { limit: '5' } });
  });
});

describe('Error mapping', () => {
  it('maps a domain error to its status, code and param', async () => {
    const handler = http.apiHandler(async () => {
      throw new errors.ResourceMissingError('reseller_store', 'rst_x', 'rst_id');
    }) as unknown as Lambda;
    const res = await invoke(handler, event());
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'resource_missing',
        message: "No such reseller_store: 'rst_x'.",
        param: 'rst_id',
      },
      request_id: res.headers['Request-Id'],
    });
  });

  it('leaves param out when no single input is at fault', async () => {
    const handler = http.apiHandler(async () => {
      throw new errors.SyncJobNotRetryableError('completed');
    }) as unknown as Lambda;
    const res = await invoke(handler, event());
    expect(res.status).toBe(400);
    expect(res.body.error).not.toHaveProperty('param');
    expect(res.body.error.code).toBe('sync_job_not_retryable');
  });

  it('answers a bare 500 internal_error for an unexpected error, with nothing of it in the body', async () => {
    const handler = http.apiHandler(async () => {
      const error = new Error(
        'ValidationException: One or more parameter values were invalid: table reseller-routing-prod',
      );
      error.name = 'ValidationException';
      throw error;
    }) as unknown as Lambda;
    const res = await invoke(handler, event());
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      error: { type: 'api_error', code: 'internal_error', message: expect.any(String) },
      request_id: res.headers['Request-Id'],
    });
    expect(res.text).not.toMatch(/ValidationException|parameter values|reseller-routing-prod|stack|\.ts:/);
  });

  it('answers 500 for a thrown non-Error value too', async () => {
    const handler = http.apiHandler(async () => {
      throw 'plain string with secret sk_live_abc';
    }) as unknown as Lambda;
    const res = await invoke(handler, event());
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('sk_live_abc');
  });
});
