import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';

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
