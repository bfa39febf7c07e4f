import { gunzipSync } from 'node:zlib';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { config } from '../core/config.js';
import {
  ApiError,
  InvalidSignatureError,
  PayloadTooLargeError,
  RateLimitedError,
  RouteNotFoundError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../core/errors.js';
import { newId } from '../core/ids.js';
import { logger } from '../core/telemetry.js';
import { parseWithExactIntegers } from '../domain/orders.js';
import { takeRequest } from '../entities/rate-limits.js';
import type { WebhookCall } from '../stores/verify.js';

export interface ApiRequest {
  event: HttpEvent;
  ownerId: string;
  keyId?: string;
  requestId: string;
  body: unknown;
  path: Record<string, string>;
  query: Record<string, string>;
}

export interface WebhookRequest {
  event: HttpEvent;
  requestId: string;
  rawBody: Buffer;
  /** The call's `X-Platform-*` (or `X-Shopify-*`) headers and raw body, as shared/stores/verify.ts reads them. */
  call: WebhookCall;
  /**
   * The signed body as JSON, read once verified: it must say it is JSON (415) and be JSON (400).
   * Integers past 2^53 come as their digits (strings), so ids are never rounded.
   */
  json: () => unknown;
}

/**
 * A webhook call's header under either spelling: the platform's `X-Platform-<name>` or Shopify's
 * `X-Shopify-<name>` (CONTRACT.md §5), so a Shopify store can point its webhooks here. Both sent
 * with different values is refused: `conflict` says how.
 */
const callHeader = (event: HttpEvent, name: string, conflict: () => Error): string | undefined => {
  const platform = header(event, `x-platform-${name}`);
  const shopify = header(event, `x-shopify-${name}`);
  if (platform !== undefined && shopify !== undefined && platform !== shopify) throw conflict();
  return platform ?? shopify;
};

const callOf = (event: HttpEvent, rawBody: Buffer): WebhookCall => {
  const unverifiable = () => new InvalidSignatureError();
  const shopDomain = callHeader(event, 'shop-domain', unverifiable);
  const signature = callHeader(event, 'hmac-sha256', unverifiable);
  const topic = callHeader(
    event,
    'topic',
    () => new ValidationError('X-Platform-Topic and X-Shopify-Topic name different topics.', 'X-Platform-Topic'),
  );
  const webhookId = callHeader(
    event,
    'webhook-id',
    () => new ValidationError('X-Platform-Webhook-Id and X-Shopify-Webhook-Id differ.', 'X-Platform-Webhook-Id'),
  );
  return { shopDomain, signature, topic, webhookId, rawBody };
};

const webhookRequest = (event: HttpEvent, requestId: string, rawBody: Buffer): WebhookRequest => ({
  event,
  requestId,
  rawBody,
  call: callOf(event, rawBody),
  json: () => {
    assertJsonContentType(event);
    try {
      return parseWithExactIntegers(rawBody.toString('utf8'));
    } catch {
      throw new ValidationError('The webhook body is not valid JSON.');
    }
  },
});

type Lambda = (event: HttpEvent, context: HttpContext) => Promise<HttpResponse>;

/**
 * The last step of every HTTP function: the standard headers on whatever the chain answered,
 * an early response of a middleware included (middy skips the `after` steps for those: an
 * idempotent replay, for one).
 */
const withStandardHeaders =
  (lambda: Lambda): Lambda =>
  async (event, context) => {
    const response = await lambda(event, context);
    return { ...response, headers: { ...response.headers, ...STANDARD_HEADERS } };
  };

/**
 * A bearer-key route: request id, error mapping, owner from the authorizer, the key's rate (a change:
 * shared/http/handler.ts), 64 KiB JSON body; then
 * the route's own middlewares (`Idempotency-Key` for POST and PATCH: shared/http/idempotent-handler.ts).
 */
export const apiHandler = (fn: (request: ApiRequest) => Promise<HttpResult>, ...own: HttpMiddleware[]): Lambda =>
  withStandardHeaders(
    middy<HttpEvent, HttpResult, Error, HttpContext>()
      .use(injectLambdaContext(logger, { resetKeys: true }))
      .use(httpResponseMiddleware())
      .use(authenticateMiddleware())
      .use(rateLimitMiddleware())
      .use(bodyLimitMiddleware(API_BODY_LIMIT))
      .use(jsonBodyMiddleware())
      .use(own)
      .handler((event, context) =>
        fn({
          event,
          ownerId: context.state.ownerId!,
          keyId: context.state.keyId,
          requestId: context.state.requestId,
          body: context.state.body,
          path: (event.pathParameters ?? {}) as Record<string, string>,
          query: (event.queryStringParameters ?? {}) as Record<string, string>,
        }),
      ) as unknown as Lambda,
  );

/**
 * A webhook route: no bearer key; the handler verifies the HMAC over the raw bytes itself; then the
 * route's own middlewares (metrics).
 */
export const webhookHandler = (
  fn: (request: WebhookRequest) => Promise<HttpResult>,
  ...own: HttpMiddleware[]
): Lambda =>
  withStandardHeaders(
    middy<HttpEvent, HttpResult, Error, HttpContext>()
      .use(injectLambdaContext(logger, { resetKeys: true }))
      .use(httpResponseMiddleware())
      .use(bodyLimitMiddleware(WEBHOOK_BODY_LIMIT))
      .use(own)
      .handler((event, context) =>
        fn(webhookRequest(event, context.state.requestId, context.state.rawBody)),
      ) as unknown as Lambda,
  );

/**
 * The `$default` route: any method and path no route matches answers the contract's 404
 * `resource_missing` with a request id, on AWS and locally alike (never API Gateway's own body).
 * `redirects`: a GET (or HEAD) of a path no route can hold answers a 308 to the path that serves it.
 */
export const notFoundHandler = (redirects: Readonly<Record<string, string>> = {}): Lambda =>
  withStandardHeaders(
    middy<HttpEvent, HttpResult, Error, HttpContext>()
      .use(injectLambdaContext(logger, { resetKeys: true }))
      .use(httpResponseMiddleware())
      .handler(async (event) => {
        const method = event.requestContext?.http?.method ?? '?';
        const path = event.rawPath ?? '/';
        if ((method === 'GET' || method === 'HEAD') && Object.hasOwn(redirects, path))
          return { status: 308, headers: { Location: redirects[path] } };
        throw new RouteNotFoundError(method, path);
      }) as unknown as Lambda,
  );

/** A file a route answers as it is: its media type and its bytes, gzipped (the operator console's files). */
export interface StaticFile {
  contentType: string;
  /** The gzipped bytes, base64. */
  gzip: string;
}

/**
 * A route that answers files (the operator console): the request id and the standard headers as
 * every route, `headers` on each file, an unknown file the contract's 404. The file goes gzipped to
 * a client that accepts it, and plain to any other.
 */
export const fileHandler = (files: Readonly<Record<string, StaticFile>>, headers: Record<string, string>): Lambda => {
  const { before, onError } = httpResponseMiddleware();
  return withStandardHeaders(
    middy<HttpEvent, HttpResponse, Error, HttpContext>()
      .use(injectLambdaContext(logger, { resetKeys: true }))
      .use({ before, onError })
      .handler((event, context) => {
        const name = event.pathParameters?.file || 'index.html';
        const file = Object.hasOwn(files, name) ? files[name] : undefined;
        if (!file) throw new RouteNotFoundError(event.requestContext?.http?.method ?? 'GET', event.rawPath ?? '/');
        const gzip = /\bgzip\b/i.test(header(event, 'accept-encoding') ?? '');
        return Promise.resolve({
          statusCode: 200,
          headers: {
            ...headers,
            'Content-Type': file.contentType,
            'Request-Id': context.state.requestId,
            Vary: 'Accept-Encoding',
            ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
          },
          body: gzip ? file.gzip : gunzipSync(Buffer.from(file.gzip, 'base64')).toString('base64'),
          isBase64Encoded: true,
        });
      }) as unknown as Lambda,
  );
};

/** What the authorizer passes to a route (`requestContext.authorizer.lambda`). */
export interface AuthorizerContext {
  ownerId?: string;
  keyId?: string;
  /** The API keys could not be read: what the authorizer answered before it threw instead (issue 32). */
  unavailable?: boolean;
}

export type HttpEvent = APIGatewayProxyEventV2 & {
  requestContext: APIGatewayProxyEventV2['requestContext'] & { authorizer?: { lambda?: AuthorizerContext } };
};

/** A handler's answer before serialization; `request_id` and headers are added by the middleware. */
export interface HttpResult {
  status: number;
  body?: Record<string, unknown>;
  /** Headers besides the ones every response gets. */
  headers?: Record<string, string>;
}

export interface RequestState {
  requestId: string;
  /** The body exactly as the client sent it (API Gateway may have base64-encoded it). */
  rawBody: Buffer;
  /** Set by the JSON body middleware. */
  body?: unknown;
  ownerId?: string;
  keyId?: string;
  /** The `Idempotency-Key` this request holds while it runs (shared/http/idempotency.ts). */
  idempotencyKey?: { ownerId: string; key: string };
}

export type HttpContext = Context & { state: RequestState };

export type HttpResponse = APIGatewayProxyStructuredResultV2;

/** A middy middleware of the HTTP handlers: it sees the handler's result before serialization. */
export type HttpMiddleware = middy.MiddlewareObj<HttpEvent, HttpResponse | HttpResult, Error, HttpContext>;

export const ok = (body: Record<string, unknown>): HttpResult => ({ status: 200, body });
export const created = (body: Record<string, unknown>): HttpResult => ({ status: 201, body });
export const noContent = (): HttpResult => ({ status: 204 });

type Middleware = middy.MiddlewareObj<HttpEvent, HttpResponse | HttpResult, Error, HttpContext>;

const header = (event: HttpEvent, name: string) => {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) if (key.toLowerCase() === wanted) return value;
  return undefined;
};

export { header as readHeader };

/**
 * On every response of every function, errors and webhooks included (CONTRACT.md §3): answers are
 * per request and per caller, so no cache may keep them, and a browser must not guess a type.
 */
export const STANDARD_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

const json = (status: number, body: Record<string, unknown>, requestId: string): HttpResponse => ({
  statusCode: status,
  headers: { 'Content-Type': 'application/json', 'Request-Id': requestId },
  body: JSON.stringify({ ...body, request_id: requestId }),
});

/** A handler's result as the response: the request id in body and header, and in each item of a list. */
export const serializeResult = (result: HttpResult, requestId: string): HttpResponse => {
  if (result.status === 204 || !result.body) {
    return { statusCode: result.status, headers: { ...result.headers, 'Request-Id': requestId } };
  }
  const body = result.body;
  // Objects inside a list carry the request id too (CONTRACT.md §3).
  if (Array.isArray(body.data)) body.data = body.data.map((item) => ({ ...item, request_id: requestId }));
  const response = json(result.status, body, requestId);
  return { ...response, headers: { ...result.headers, ...response.headers } };
};

/** The contract's error body of a domain error (CONTRACT.md §3). */
export const errorBody = (error: ApiError) => ({
  error: {
    type: error.type,
    code: error.code,
    message: error.message,
    ...(error.param ? { param: error.param } : {}),
  },
});

/**
 * Gives every request its `req_` id and decodes the raw body; turns the handler's result into
 * the response (the id in body and header), and every error into the contract's error body.
 * Unknown errors become a bare 500: the details go to the log, never to the client.
 */
export const httpResponseMiddleware = (): Middleware => ({
  before: function assignRequestId(request) {
    const { event } = request;
    const raw = event.body ?? '';
    request.context.state = {
      requestId: newId('req'),
      rawBody: Buffer.from(raw, event.isBase64Encoded ? 'base64' : 'utf8'),
    };
    // The service's id and API Gateway's on every line: the access log names a request by the latter.
    logger.appendKeys({ request_id: request.context.state.requestId });
    if (event.requestContext?.requestId) logger.setCorrelationId(event.requestContext.requestId);
  },
  after: function serialize(request) {
    request.response = serializeResult(request.response as HttpResult, request.context.state.requestId);
  },
  onError: function mapError(request) {
    const requestId = request.context.state?.requestId ?? newId('req');
    const error = request.error;
    if (error instanceof ApiError) {
      if (error.status >= 500) logger.error('request failed', { code: error.code });
      const response = json(error.status, errorBody(error), requestId);
      request.response = { ...response, headers: { ...error.headers, ...response.headers } };
      return;
    }
    logger.error('unexpected error', error as Error);
    request.response = json(
      500,
      {
        error: {
          type: 'api_error',
          code: 'internal_error',
          message: 'An internal error occurred; quote the request id when asking for help.',
        },
      },
      requestId,
    );
  },
});

/** Takes the owner the authorizer resolved; no owner means no valid key. */
export const authenticateMiddleware = (): Middleware => ({
  before: function authenticate(request) {
    const auth = request.event.requestContext.authorizer?.lambda;
    // The authorizer now throws instead, but API Gateway's cache may still hold such a verdict from
    // before that change (60 s): still a 500, never a 401 for a key that may be valid.
    if (auth?.unavailable) throw new Error('the authorizer could not read the API keys');
    if (!auth?.ownerId) throw new UnauthorizedError();
    request.context.state.ownerId = auth.ownerId;
    request.context.state.keyId = auth.keyId;
  },
});

export const API_BODY_LIMIT = 64 * 1024;
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

/** Refuses oversized bodies before anything else reads them. */
export const bodyLimitMiddleware = (limitBytes: number): Middleware => ({
  before: function limitBody(request) {
    if (request.context.state.rawBody.length > limitBytes) throw new PayloadTooLargeError(limitBytes);
  },
});

/** A body must say it is JSON: `application/json`, with or without parameters. */
export const assertJsonContentType = (event: HttpEvent) => {
  if (!/^application\/json\s*(;|$)/i.test(header(event, 'content-type') ?? '')) throw new UnsupportedMediaTypeError();
};

/** Parses a JSON body; an empty body stays `undefined`, for routes that take none. */
export const jsonBodyMiddleware = (): Middleware => ({
  before: function parseJson(request) {
    const { rawBody } = request.context.state;
    if (rawBody.length === 0) return;
    assertJsonContentType(request.event);
    try {
      request.context.state.body = JSON.parse(rawBody.toString('utf8'));
    } catch {
      throw new ValidationError('The request body is not valid JSON.');
    }
  },
});

/**
 * Per-key rate limits (docs/design.md, "Per-key rate limits"): a bearer-key request that changes
 * something (POST, PATCH, DELETE) takes one of its key's API_KEY_RATE_LIMIT requests of the current
 * second (shared/entities/rate-limits.ts), or is refused `429 rate_limited` with `Retry-After`
 * before it reads or changes anything, so one integrator cannot take another's share of a route's
 * bucket. Reads are not counted. A container that was refused a key's second refuses the rest of
 * that second without a write.
 */

/** Per container: the second each key was last refused, so a flood costs one write a second. */
const refused = new Map<string, number>();
const REMEMBERED_KEYS = 1_000;

export const rateLimitMiddleware = (): HttpMiddleware => ({
  before: async function limitRate(request) {
    const limit = config.apiKeyRateLimit();
    const method = request.event.requestContext?.http?.method ?? 'GET';
    const { keyId } = request.context.state;
    if (!limit || method === 'GET' || method === 'HEAD' || !keyId) return;
    const nowMs = Date.now();
    const second = Math.floor(nowMs / 1000);
    if (refused.get(keyId) === second) throw new RateLimitedError(limit, 1);
    const taken = await takeRequest(keyId, limit, nowMs);
    if (taken.taken) return;
    refused.delete(keyId);
    const [oldest] = refused.keys();
    if (refused.size >= REMEMBERED_KEYS && oldest !== undefined) refused.delete(oldest);
    refused.set(keyId, second);
    throw new RateLimitedError(limit, taken.retryAfterSeconds);
  },
});
