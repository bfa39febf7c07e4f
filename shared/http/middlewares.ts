import type middy from '@middy/core';
import {
  ApiError,
  PayloadTooLargeError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../core/errors.js';
import { newId } from '../core/ids.js';
import { logger } from '../core/telemetry.js';
import type { HttpContext, HttpEvent, HttpResponse, HttpResult } from './types.js';

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
