import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys, supplierPaceKey } from '../dynamo/keys.js';
import { ConditionFailed, dynamo, getItem, type Item, isConditionFailure, TABLE, updateIf } from '../dynamo/table.js';

/**
 * An API key's rate window (docs/design.md, "Per-key rate limits"): the changes it requested in one
 * second, as one small item per key and second (`RATE#<keyId>#<second>`), counted by one conditional
 * UpdateItem that adds 1 unless the count has reached the limit. No read, no race: DynamoDB counts.
 * The item is gone by the table's TTL a minute later; a busy key's second is a partition of its own.
 */

/** The window's item outlives its second by this much, then the table's TTL removes it. */
const WINDOW_KEEP_SECONDS = 60;

export type Taken = { taken: true } | { taken: false; retryAfterSeconds: number };

/** Takes one request of `keyId`'s current second, at most `limit` a second. */
export const takeRequest = async (keyId: string, limit: number, nowMs: number): Promise<Taken> => {
  const second = Math.floor(nowMs / 1000);
  const out = await updateIf({
    Key: keys.rateWindow(keyId, second),
    UpdateExpression: 'ADD #n :one SET #e = :e',
    ConditionExpression: 'attribute_not_exists(#n) OR #n < :limit',
    ExpressionAttributeNames: { '#n': 'requests', '#e': 'expiresAt' },
    ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':e': second + WINDOW_KEEP_SECONDS },
  });
  // The next second's window is fresh: Retry-After is whole seconds, so 1.
  return out instanceof ConditionFailed ? { taken: false, retryAfterSeconds: 1 } : { taken: true };
};

/**
 * A supplier shop's pace (docs/design.md, "A pace per supplier"): the calls a second the service
 * allows itself on one source store's shop, shared by every worker, as one small item that exists
 * only once the shop has throttled a call. A virtual-scheduling bucket (GCRA): `nextAt` is the
 * shop's next free call slot, and each call takes the slot and moves it on by `intervalMs`, with
 * one conditional UpdateItem and no read-modify-write race.
 */
export interface SupplierPace {
  /** Milliseconds between two calls: 1000 / the calls a second the shop allows. */
  intervalMs: number;
  /** The shop's next free call slot (epoch ms). */
  nextAt: number;
}

/** A shop is hot while its last slot is younger than this: an older item takes no slot (and costs no write). */
export const HOT_FOR_MS = 60_000;

/** The item is removed (TTL) this long after its last write: a shop throttling again starts afresh. */
const PACE_KEEP_SECONDS = 2 * 86_400;

/** Never slower than one call a minute, never faster than a hundred a second (a platform's odd answer). */
const SLOWEST_MS = 60_000;
const FASTEST_MS = 10;

export const paceInterval = (ms: number) => Math.min(SLOWEST_MS, Math.max(FASTEST_MS, Math.ceil(ms)));

const NAMES = { '#i': 'intervalMs', '#n': 'nextAt', '#e': 'expiresAt' };

/** A pace item as read; one whose numbers are missing reads as no pace: a limiter never stops a call by mistake. */
const paceFrom = (item: Item): SupplierPace | undefined =>
  typeof item.intervalMs === 'number' && typeof item.nextAt === 'number'
    ? { intervalMs: item.intervalMs, nextAt: item.nextAt }
    : undefined;

const expiresAt = (now: number) => Math.floor(now / 1000) + PACE_KEEP_SECONDS;

/** One conditional UpdateItem of the pace; the pace after it, or undefined when its condition failed. */
const updatePace = async (
  shopDomain: string,
  expression: string,
  condition: string,
  values: Record<string, number>,
): Promise<SupplierPace | undefined> => {
  try {
    const out = await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: supplierPaceKey(shopDomain),
        UpdateExpression: expression,
        ConditionExpression: condition,
        ExpressionAttributeNames: Object.fromEntries(
          Object.entries(NAMES).filter(([name]) => `${expression} ${condition}`.includes(name)),
        ),
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes && paceFrom(out.Attributes);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
};

/** The shop's pace when it is hot; undefined (nothing to take) otherwise. Half a read unit. */
export const readPace = async (shopDomain: string, now = Date.now()) => {
  const pace = (await getItem(supplierPaceKey(shopDomain), paceFrom)) ?? undefined;
  return pace && pace.nextAt > now - HOT_FOR_MS ? pace : undefined;
};

/**
 * Takes the shop's next call slot (epoch ms): now when the pace is idle (its slot in the past),
 * else the next free one, which moves on by one interval. One write, two when the pace went idle
 * or busy between the read and the take. Undefined when the item is gone (the shop cooled).
 */
export const takeSlot = async (shopDomain: string, pace: SupplierPace, now = Date.now()) => {
  let idle = pace.nextAt <= now;
  for (let round = 0; round < 3; round++, idle = !idle) {
    const values = { ':now': now, ':e': expiresAt(now) };
    if (idle) {
      const taken = await updatePace(
        shopDomain,
        'SET #n = :now + #i, #e = :e',
        'attribute_exists(PK) AND #n <= :now',
        values,
      );
      if (taken) return now;
    } else {
      const taken = await updatePace(
        shopDomain,
        'SET #n = #n + #i, #e = :e',
        'attribute_exists(PK) AND #n > :now',
        values,
      );
      if (taken) return taken.nextAt - taken.intervalMs;
    }
  }
  return undefined;
};

/** What a throttled answer told of the shop. */
export interface Throttle {
  /** No call before this (epoch ms): `Retry-After` from the answer. */
  reopensAt: number;
  /** The interval the shop states (Shopify's `restoreRate` over the call's cost, `RateLimit-Policy`). */
  statedIntervalMs?: number;
  /** Without a stated rate: the interval to start a new pace with (one call per `Retry-After`). */
  fallbackIntervalMs: number;
  /** The pace the throttled call was made under, if it was: without a stated rate, it slows by half. */
  pacedAt?: SupplierPace;
}

/** How much slower a pace without a stated rate goes after a paced call was throttled all the same. */
const SLOWDOWN = 1.5;

/**
 * A throttled call makes (or keeps) the shop hot: the pace exists with the stated interval, or
 * slows down once per interval it had (concurrent 429s under one interval slow it once), and no
 * slot is given before the shop reopens. Two or three small writes, on a 429 only.
 */
export const learnThrottle = async (shopDomain: string, throttle: Throttle, now = Date.now()) => {
  const { reopensAt, statedIntervalMs, pacedAt } = throttle;
  const values = { ':e': expiresAt(now), ':r': reopensAt };
  if (statedIntervalMs !== undefined) {
    await updatePace(
      shopDomain,
      'SET #i = :i, #n = if_not_exists(#n, :r), #e = :e',
      'attribute_not_exists(PK) OR #i <> :i',
      {
        ...values,
        ':i': paceInterval(statedIntervalMs),
      },
    );
  } else if (pacedAt) {
    const slower = {
      ':e': values[':e'],
      ':old': pacedAt.intervalMs,
      ':i': paceInterval(pacedAt.intervalMs * SLOWDOWN),
    };
    await updatePace(shopDomain, 'SET #i = :i, #e = :e', '#i = :old', slower);
  } else {
    const fresh = { ...values, ':i': paceInterval(throttle.fallbackIntervalMs) };
    await updatePace(shopDomain, 'SET #i = :i, #n = :r, #e = :e', 'attribute_not_exists(PK)', fresh);
  }
  await updatePace(shopDomain, 'SET #n = :r, #e = :e', 'attribute_exists(PK) AND #n < :r', values);
};
