import { config } from '../core/config.js';
import { RateLimitedError } from '../core/errors.js';
import { takeRequest } from '../entities/rate-window.js';
import type { HttpMiddleware } from './types.js';

/**
 * Per-key rate limits (docs/design.md, "Per-key rate limits"): a bearer-key request that changes
 * something (POST, PATCH, DELETE) takes one of its key's API_KEY_RATE_LIMIT requests of the current
 * second (shared/entities/rate-window.ts), or is refused `429 rate_limited` with `Retry-After`
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
