import { createHash } from 'node:crypto';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { attributes } from '../dynamo/attributes.js';
import { dynamo } from '../dynamo/client.js';
import { keys } from '../dynamo/keys.js';
import { getItem, type Item, isConditionFailure, TABLE } from '../dynamo/table.js';

/**
 * The records of idempotent requests (CONTRACT.md §9): one item per owner and `Idempotency-Key`,
 * in the one table, gone through its TTL 24 hours after the first request. The first request
 * claims the key with a conditional put, so of concurrent requests with one key exactly one runs;
 * it then keeps its answer, or gives the key up when there is nothing to keep.
 */

export const KEEP_SECONDS = 24 * 3600;

/** Who holds a key: the caller's owner and the key as sent. Keys of two owners never meet. */
export interface KeyScope {
  ownerId: string;
  key: string;
}

/** An answer as the handler gave it, before serialization: replayed with the first request's id. */
export interface KeptResponse {
  status: number;
  body?: Record<string, unknown>;
}

export type IdempotentRequest =
  | { state: 'in_progress'; fingerprint: string; requestId: string }
  | { state: 'completed'; fingerprint: string; requestId: string; response: KeptResponse };

const STATES = ['in_progress', 'completed'] as const;

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** What "the same request" means for a key: its method, path and body bytes. */
export const requestFingerprint = (method: string, path: string, body: Buffer) =>
  createHash('sha256').update(`${method} ${path}\n`).update(body).digest('hex');

const keyOf = (scope: KeyScope) => keys.idempotentRequest(sha256(JSON.stringify([scope.ownerId, scope.key])));

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A record past its 24 hours is gone, whether or not TTL has deleted it yet (TTL runs up to days late). */
const idempotentRequestFrom = (item: Item): IdempotentRequest | undefined => {
  const read = attributes(item, 'idempotent request');
  if (read.number('expiresAt') <= nowSeconds()) return undefined;
  const common = { fingerprint: read.string('fingerprint'), requestId: read.string('requestId') };
  if (read.oneOf('state', STATES) === 'in_progress') {
    // A holder that died (a timed-out function) frees its key when its lock runs out.
    return read.number('lockedUntil') <= Date.now() ? undefined : { state: 'in_progress', ...common };
  }
  const body = read.stringOrNull('responseBody');
  const response = { status: read.number('responseStatus'), ...(body === null ? {} : { body: JSON.parse(body) }) };
  return { state: 'completed', ...common, response };
};

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
    try {
      await dynamo.send(
        new PutCommand({
          TableName: TABLE(),
          Item: {
            ...keyOf(scope),
            state: 'in_progress',
            fingerprint: request.fingerprint,
            requestId: request.requestId,
            lockedUntil: request.lockedUntil,
            expiresAt: nowSeconds() + KEEP_SECONDS,
          },
          ConditionExpression:
            'attribute_not_exists(PK) OR expiresAt <= :nowSeconds OR (#state = :inProgress AND lockedUntil <= :nowMs)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':nowSeconds': nowSeconds(),
            ':nowMs': Date.now(),
            ':inProgress': 'in_progress',
          },
        }),
      );
      return { claimed: true };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    const existing = await getItem(keyOf(scope), idempotentRequestFrom, true);
    if (existing) return { claimed: false, existing };
    // Given up or lapsed between the put and the read: claim it again.
  }
  throw new Error('an idempotency key changed hands three times in a row');
};

/** Keeps the answer of the request holding the key; false if the key is no longer its own (its lock lapsed). */
export const keepResponse = async (scope: KeyScope, requestId: string, response: KeptResponse) => {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: keyOf(scope),
        UpdateExpression: 'SET #state = :completed, responseStatus = :status, responseBody = :body REMOVE lockedUntil',
        ConditionExpression: 'requestId = :requestId AND #state = :inProgress',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':completed': 'completed',
          ':inProgress': 'in_progress',
          ':status': response.status,
          ':body': response.body === undefined ? null : JSON.stringify(response.body),
          ':requestId': requestId,
        },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
};

/**
 * Gives the key up (nothing to keep: a 5xx, or input that never ran), so the same request may run
 * again: the record expires now, which a claim treats as no record, and TTL removes it later (now,
 * not 0: DynamoDB's TTL never deletes an item whose time is more than five years past). An update
 * rather than a delete, so the routes bundle and may call one write fewer.
 */
export const releaseKey = async (scope: KeyScope, requestId: string) => {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: keyOf(scope),
        UpdateExpression: 'SET expiresAt = :expired',
        ConditionExpression: 'requestId = :requestId AND #state = :inProgress',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':requestId': requestId, ':inProgress': 'in_progress', ':expired': nowSeconds() },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
};
