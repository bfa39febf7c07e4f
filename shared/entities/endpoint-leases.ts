import { eventKeys } from '../dynamo/keys.js';
import { ConditionFailed, getItem, type Item, updateIf } from '../dynamo/table.js';

/**
 * One endpoint's share of delivery capacity (CONTRACT.md §14; shared/events/README.md). A try of an
 * endpoint not known to answer promptly (new, or seen slow) takes one of the endpoint's leases before
 * it starts, and gives it back when its POST ends: across every worker such an endpoint has at most
 * `leasesPerEndpoint()` tries in flight. A receiver that hangs holds its leases for the POST's 15 s
 * each, no more; its other tries find none free.
 *
 * The entity: the only place that knows the lease item (`eventKeys.endpointLeases`) and writes it.
 * The item: `s0`, `s1`… the epoch ms until which each lease is held (a worker that died frees it
 * then), and `expiresAt` for the table's TTL.
 */

/** Leases per endpoint by default: a hanging receiver holds at most 4 of the worker's 10 batches. */
export const LEASES_PER_ENDPOINT = 4;
/** `DELIVERY_ENDPOINT_CONCURRENCY` (a whole number from 1 to 50), else `LEASES_PER_ENDPOINT`. */
export const leasesPerEndpoint = () => {
  const configured = Number(process.env.DELIVERY_ENDPOINT_CONCURRENCY);
  return Number.isSafeInteger(configured) && configured >= 1 && configured <= 50 ? configured : LEASES_PER_ENDPOINT;
};
/** How long a lease holds at most: the POST's 15 s, its name's 3 s, the writes; past it, a dead holder's is free. */
export const LEASE_MS = 20_000;
/** The item stays a day after its last write. */
const KEPT_SECONDS = 86_400;

export interface EndpointLeases {
  /** Per lease, the epoch ms until which it is held (0: free). */
  held: number[];
}

export interface Lease {
  slot: number;
  until: number;
}

const slotName = (slot: number) => `s${slot}`;

const leasesFrom = (item: Item | undefined): EndpointLeases => ({
  held: Array.from({ length: leasesPerEndpoint() }, (_, slot) => Number(item?.[slotName(slot)] ?? 0)),
});

/** The endpoint's leases as last written (eventually consistent: a hint; each lease is taken on condition). */
export const readLeases = async (endpointId: string, consistent = false): Promise<EndpointLeases> =>
  leasesFrom(await getItem(eventKeys.endpointLeases(endpointId), (item) => item, consistent));

const takeSlot = async (endpointId: string, slot: number, at: number): Promise<Lease | undefined> => {
  const until = at + LEASE_MS;
  const written = await updateIf({
    Key: eventKeys.endpointLeases(endpointId),
    UpdateExpression: 'SET #slot = :until, expiresAt = :ttl',
    ConditionExpression: 'attribute_not_exists(#slot) OR #slot <= :at',
    ExpressionAttributeNames: { '#slot': slotName(slot) },
    ExpressionAttributeValues: { ':until': until, ':ttl': Math.floor(at / 1000) + KEPT_SECONDS, ':at': at },
  });
  return written instanceof ConditionFailed ? undefined : { slot, until };
};

/**
 * Takes a lease the read shows free (on condition that it still is), in random order so that
 * workers that read alike spread over the slots; undefined when none is (no write when the read
 * shows none held free).
 */
export const takeLease = async (endpointId: string, leases: EndpointLeases, at = Date.now()) => {
  const free = leases.held.flatMap((until, slot) => (until <= at ? [slot] : []));
  for (const slot of free.sort(() => Math.random() - 0.5)) {
    const lease = await takeSlot(endpointId, slot, at);
    if (lease) return lease;
  }
  return undefined;
};

/**
 * Gives a lease back, if it is still this try's (one that outlived `LEASE_MS` may be another's now): the
 * endpoint's leases as that write left them, undefined when it was not this try's any more.
 */
export const releaseLease = async (endpointId: string, lease: Lease): Promise<EndpointLeases | undefined> => {
  const written = await updateIf(
    {
      Key: eventKeys.endpointLeases(endpointId),
      UpdateExpression: 'SET #slot = :free',
      ConditionExpression: '#slot = :until',
      ExpressionAttributeNames: { '#slot': slotName(lease.slot) },
      ExpressionAttributeValues: { ':free': 0, ':until': lease.until },
    },
    true,
  );
  return written instanceof ConditionFailed ? undefined : leasesFrom(written);
};

/** Whether a lease is held at `at` that was taken more than `ms` before it: a try that long in flight. */
export const heldLongerThan = (leases: EndpointLeases, ms: number, at = Date.now()) =>
  leases.held.some((until) => until > at && until - LEASE_MS < at - ms);

/** Whether every lease is held at `at` (as read: a stale read may show one held that was given back). */
export const allHeld = (leases: EndpointLeases, at = Date.now()) => leases.held.every((until) => until > at);
