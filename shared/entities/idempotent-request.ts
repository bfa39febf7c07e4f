import { createHash } from 'node:crypto';
import { attributes } from '../dynamo/attributes.js';
import { keys } from '../dynamo/keys.js';
import type { Item } from '../dynamo/table.js';

/**
 * The idempotent request entity (CONTRACT.md §9): one item per owner and `Idempotency-Key`, keyed
 * by the hash of both, gone through the table's TTL (`expiresAt`) 24 hours after the first request.
 * The only place that knows its attributes; shared/idempotency/requests.ts claims, keeps and
 * releases it.
 */

/** Who holds a key: the caller's owner and the key as sent. Keys of two owners never meet. */
export interface KeyScope {
  ownerId: string;
  key: string;
}

/** An answer as the handler gave it, before serialization: replayed with the first request's id. */
export interface KeptResponse {
  status: number;
  body?: Record<string, unknown>;
  /** Fields of `body` kept encrypted (a webhook endpoint's `secret`): decrypted before a replay. */
  sealed?: string[];
}

export type IdempotentRequest =
  | { state: 'in_progress'; fingerprint: string; requestId: string }
  | { state: 'completed'; fingerprint: string; requestId: string; response: KeptResponse };

const STATES = ['in_progress', 'completed'] as const;

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

export const idempotentRequestKey = (scope: KeyScope) =>
  keys.idempotentRequest(sha256(JSON.stringify([scope.ownerId, scope.key])));

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The item of a request that has just claimed its key: in progress until `lockedUntil` (epoch ms). */
export const claimedRequestItem = (
  scope: KeyScope,
  request: { fingerprint: string; requestId: string; lockedUntil: number },
  expiresAt: number,
): Item => ({
  ...idempotentRequestKey(scope),
  state: 'in_progress',
  fingerprint: request.fingerprint,
  requestId: request.requestId,
  lockedUntil: request.lockedUntil,
  expiresAt,
});

/** A kept answer's attributes. */
export const keptResponseAttributes = (response: KeptResponse) => ({
  responseStatus: response.status,
  responseBody: response.body === undefined ? null : JSON.stringify(response.body),
  responseSealed: response.sealed?.length ? response.sealed : null,
});

/** A record past its 24 hours is gone, whether or not TTL has deleted it yet (TTL runs up to days late). */
export const idempotentRequestFrom = (item: Item): IdempotentRequest | undefined => {
  const read = attributes(item, 'idempotent request');
  if (read.number('expiresAt') <= nowSeconds()) return undefined;
  const common = { fingerprint: read.string('fingerprint'), requestId: read.string('requestId') };
  if (read.oneOf('state', STATES) === 'in_progress') {
    // A holder that died (a timed-out function) frees its key when its lock runs out.
    return read.number('lockedUntil') <= Date.now() ? undefined : { state: 'in_progress', ...common };
  }
  const body = read.stringOrNull('responseBody');
  const sealed = Array.isArray(item.responseSealed) ? { sealed: item.responseSealed.map(String) } : {};
  const response = {
    status: read.number('responseStatus'),
    ...(body === null ? {} : { body: JSON.parse(body) }),
    ...sealed,
  };
  return { state: 'completed', ...common, response };
};
