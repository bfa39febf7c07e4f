import { keys } from '../dynamo/keys.js';
import { ConditionFailed, updateIf } from '../dynamo/table.js';

/**
 * An API key's rate window (docs/design.md, "Per-key rate limits"): the changes it requested in one
 * second, as one small item per key and second (`RATE#<keyId>#<second>`), counted by one conditional
 * UpdateItem that adds 1 unless the count has reached the limit. No read, no race: DynamoDB counts.
 * The item is gone by the table's TTL a minute later; a busy key's second is a partition of its own.
 */

/** The window's item outlives its second by this much, then the table's TTL removes it. */
const KEEP_SECONDS = 60;

export type Taken = { taken: true } | { taken: false; retryAfterSeconds: number };

/** Takes one request of `keyId`'s current second, at most `limit` a second. */
export const takeRequest = async (keyId: string, limit: number, nowMs: number): Promise<Taken> => {
  const second = Math.floor(nowMs / 1000);
  const out = await updateIf({
    Key: keys.rateWindow(keyId, second),
    UpdateExpression: 'ADD #n :one SET #e = :e',
    ConditionExpression: 'attribute_not_exists(#n) OR #n < :limit',
    ExpressionAttributeNames: { '#n': 'requests', '#e': 'expiresAt' },
    ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':e': second + KEEP_SECONDS },
  });
  // The next second's window is fresh: Retry-After is whole seconds, so 1.
  return out instanceof ConditionFailed ? { taken: false, retryAfterSeconds: 1 } : { taken: true };
};
