import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logger } from '../core/logger.js';
import {
  API_BODY_LIMIT,
  authenticateMiddleware,
  bodyLimitMiddleware,
  httpResponseMiddleware,
  jsonBodyMiddleware,
  WEBHOOK_BODY_LIMIT,
} from './middlewares.js';
import type { HttpContext, HttpEvent, HttpResponse, HttpResult } from './types.js';

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
}

type Lambda = (event: HttpEvent, context: HttpContext) => Promise<HttpResponse>;

/** A bearer-key route: request id, error mapping, owner from the authorizer, 64 KiB JSON body. */
export const apiHandler = (fn: (request: ApiRequest) => Promise<HttpResult>): Lambda =>
  middy<HttpEvent, HttpResult, Error, HttpContext>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(httpResponseMiddleware())
    .use(authenticateMiddleware())
    .use(bodyLimitMiddleware(API_BODY_LIMIT))
    .use(jsonBodyMiddleware())
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
    ) as unknown as Lambda;

/** A webhook route: no bearer key; the handler verifies the HMAC over the raw bytes itself. */
export const webhookHandler = (fn: (request: WebhookRequest) => Promise<HttpResult>): Lambda =>
  middy<HttpEvent, HttpResult, Error, HttpContext>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(httpResponseMiddleware())
    .use(bodyLimitMiddleware(WEBHOOK_BODY_LIMIT))
    .handler((event, context) =>
      fn({ event, requestId: context.state.requestId, rawBody: context.state.rawBody }),
    ) as unknown as Lambda;
