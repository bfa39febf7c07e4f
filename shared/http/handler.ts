import { gunzipSync } from 'node:zlib';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { InvalidSignatureError, RouteNotFoundError, ValidationError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { parseWithExactIntegers } from '../domain/json-text.js';
import type { WebhookCall } from '../stores/verify.js';
import {
  API_BODY_LIMIT,
  assertJsonContentType,
  authenticateMiddleware,
  bodyLimitMiddleware,
  httpResponseMiddleware,
  jsonBodyMiddleware,
  readHeader,
  STANDARD_HEADERS,
  WEBHOOK_BODY_LIMIT,
} from './middlewares.js';
import { rateLimitMiddleware } from './rate-limit.js';
import type { HttpContext, HttpEvent, HttpMiddleware, HttpResponse, HttpResult } from './types.js';

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
  const platform = readHeader(event, `x-platform-${name}`);
  const shopify = readHeader(event, `x-shopify-${name}`);
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
 * shared/http/rate-limit.ts), 64 KiB JSON body; then
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
        const gzip = /\bgzip\b/i.test(readHeader(event, 'accept-encoding') ?? '');
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
