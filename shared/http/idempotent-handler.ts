import { type ApiRequest, apiHandler, type HttpResult } from './handler.js';
import { type IdempotencyOptions, idempotencyMiddleware } from './idempotency.js';

/**
 * A bearer-key POST or PATCH route: `apiHandler` with `Idempotency-Key` (CONTRACT.md §9). A module
 * of its own, so the routes that never take a key do not carry its code in their bundles.
 */
export const idempotentApiHandler = (
  fn: (request: ApiRequest) => Promise<HttpResult>,
  options: IdempotencyOptions = {},
) => apiHandler(fn, idempotencyMiddleware(options));
