import { createHash } from 'node:crypto';
import { keys } from '../dynamo/keys.js';
import { attributes, ConditionFailed, getItem, type Item, putIf, updateIf } from '../dynamo/table.js';

/**
 * The idempotent request entity (CONTRACT.md §9): one item per owner and `Idempotency-Key`, keyed
 * by the hash of both, gone through the table's TTL (`expiresAt`) 24 hours after the first request.
 * The only place that knows its attributes and writes it; shared/idempotency/requests.ts claims,
 * keeps and releases it through the writes below.
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

/**
 * Puts the item of a request claiming its key, on condition that no live request holds it (none,
 * expired, or in progress past its lock): true, or the request the failed put met (undefined when
 * none came back, or the one it met has lapsed since: the caller then reads, or claims again).
 */
export const putClaimedRequest = async (
  scope: KeyScope,
  request: { fingerprint: string; requestId: string; lockedUntil: number },
  expiresAt: number,
): Promise<true | { met: IdempotentRequest | undefined }> => {
  const written = await putIf(
    claimedRequestItem(scope, request, expiresAt),
    'attribute_not_exists(PK) OR expiresAt <= :nowSeconds OR (#state = :inProgress AND lockedUntil <= :nowMs)',
    { ':nowSeconds': nowSeconds(), ':nowMs': Date.now(), ':inProgress': 'in_progress' },
    { '#state': 'state' },
  );
  if (written === true) return true;
  return { met: written.met ? idempotentRequestFrom(written.met) : undefined };
};

/** Keeps the answer of the request holding the key; false if the key is no longer its own (its lock lapsed). */
export const keepRequestResponse = async (scope: KeyScope, requestId: string, response: KeptResponse) => {
  const kept = keptResponseAttributes(response);
  const written = await updateIf({
    Key: idempotentRequestKey(scope),
    UpdateExpression:
      'SET #state = :completed, responseStatus = :status, responseBody = :body, responseSealed = :sealed ' +
      'REMOVE lockedUntil',
    ConditionExpression: 'requestId = :requestId AND #state = :inProgress',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: {
      ':completed': 'completed',
      ':inProgress': 'in_progress',
      ':status': kept.responseStatus,
      ':body': kept.responseBody,
      ':sealed': kept.responseSealed,
      ':requestId': requestId,
    },
  });
  return !(written instanceof ConditionFailed);
};

/**
 * Expires the record of the request holding the key now, if it still holds it: a claim then treats
 * it as no record, and TTL removes it later (now, not 0: DynamoDB's TTL never deletes an item whose
 * time is more than five years past).
 */
export const expireClaimedRequest = async (scope: KeyScope, requestId: string) => {
  await updateIf({
    Key: idempotentRequestKey(scope),
    UpdateExpression: 'SET expiresAt = :expired',
    ConditionExpression: 'requestId = :requestId AND #state = :inProgress',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: { ':requestId': requestId, ':inProgress': 'in_progress', ':expired': nowSeconds() },
  });
};

/** The request holding a key, read consistently; undefined when none does. */
export const findIdempotentRequest = async (scope: KeyScope) =>
  (await getItem(idempotentRequestKey(scope), idempotentRequestFrom, true)) ?? undefined;
