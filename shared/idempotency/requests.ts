import { createHash } from 'node:crypto';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../dynamo/client.js';
import { getItem, isConditionFailure, TABLE } from '../dynamo/table.js';
import {
  claimedRequestItem,
  type IdempotentRequest,
  idempotentRequestFrom,
  idempotentRequestKey,
  type KeptResponse,
  type KeyScope,
  keptResponseAttributes,
  nowSeconds,
} from '../entities/idempotent-request.js';

export type { IdempotentRequest, KeptResponse, KeyScope };

/**
 * Idempotent requests (CONTRACT.md §9; the record: shared/entities/idempotent-request.ts). The first request
 * claims the key with a conditional put, so of concurrent requests with one key exactly one runs;
 * it then keeps its answer, or gives the key up when there is nothing to keep.
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
    try {
      await dynamo.send(
        new PutCommand({
          TableName: TABLE(),
          Item: claimedRequestItem(scope, request, nowSeconds() + KEEP_SECONDS),
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
    const existing = await getItem(idempotentRequestKey(scope), idempotentRequestFrom, true);
    if (existing) return { claimed: false, existing };
    // Given up or lapsed between the put and the read: claim it again.
  }
  throw new Error('an idempotency key changed hands three times in a row');
};

/** Keeps the answer of the request holding the key; false if the key is no longer its own (its lock lapsed). */
export const keepResponse = async (scope: KeyScope, requestId: string, response: KeptResponse) => {
  const kept = keptResponseAttributes(response);
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
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
        Key: idempotentRequestKey(scope),
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
