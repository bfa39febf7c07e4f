import { createHash } from 'node:crypto';
import {
  expireClaimedRequest,
  findIdempotentRequest,
  type IdempotentRequest,
  type KeptResponse,
  type KeyScope,
  keepRequestResponse,
  nowSeconds,
  putClaimedRequest,
} from '../entities/idempotent-request.js';

export type { IdempotentRequest, KeptResponse, KeyScope };

/**
 * Idempotent requests (CONTRACT.md §9; the record and its writes: shared/entities/idempotent-request.ts).
 * The first request claims the key with a conditional put, so of concurrent requests with one key
 * exactly one runs; it then keeps its answer, or gives the key up when there is nothing to keep.
 */

export const KEEP_SECONDS = 24 * 3600;

/** What "the same request" means for a key: its method, path and body bytes. */
export const requestFingerprint = (method: string, path: string, body: Buffer) =>
  createHash('sha256').update(`${method} ${path}\n`).update(body).digest('hex');

export type Claim = { claimed: true } | { claimed: false; existing: IdempotentRequest };

/**
 * Claims the key for this request, or answers the request that holds it. `lockedUntil` (epoch ms)
 * is when the claim lapses if this request never finishes: the function's own deadline.
 */
export const claimKey = async (
  scope: KeyScope,
  request: { fingerprint: string; requestId: string; lockedUntil: number },
): Promise<Claim> => {
  for (let attempt = 0; attempt < 3; attempt++) {
    const written = await putClaimedRequest(scope, request, nowSeconds() + KEEP_SECONDS);
    if (written === true) return { claimed: true };
    const existing = written.met ?? (await findIdempotentRequest(scope));
    if (existing) return { claimed: false, existing };
    // Given up or lapsed between the put and the read: claim it again.
  }
  throw new Error('an idempotency key changed hands three times in a row');
};

/** Keeps the answer of the request holding the key; false if the key is no longer its own (its lock lapsed). */
export const keepResponse = (scope: KeyScope, requestId: string, response: KeptResponse) =>
  keepRequestResponse(scope, requestId, response);

/**
 * Gives the key up (nothing to keep: a 5xx, or input that never ran), so the same request may run
 * again: the record expires now (shared/entities/idempotent-request.ts `expireClaimedRequest`). An
 * update rather than a delete, so the routes bundle and may call one write fewer.
 */
export const releaseKey = (scope: KeyScope, requestId: string) => expireClaimedRequest(scope, requestId);
