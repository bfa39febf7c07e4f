import { eventKeys } from '../dynamo/keys.js';
import { ConditionFailed, getItem, type Item, updateIf } from '../dynamo/table.js';

/**
 * One endpoint's share of delivery capacity (CONTRACT.md §14; docs/design.md, "Integrators
 * isolated"). Deliveries share the worker's few concurrent batches, and a batch lasts as long as its
 * slowest send: an endpoint that hangs would hold them all. So a try that has not ended after
 * `PROBE_MS` goes on only under one of the endpoint's `LEASES_PER_ENDPOINT` leases, and takes it
 * with a conditional write that also marks the endpoint slow for `SLOW_FOR_MS`; while it is slow,
 * each try takes a lease before it starts. A try that finds every lease held ends at once, as a try
 * the receiver did not answer (tried again on §14's schedule). A receiver that answers within
 * `PROBE_MS` never writes here: the happy path costs one eventually consistent read of a missing item.
 *
 * The item (`eventKeys.endpointLeases`): `s0`, `s1`… the epoch ms until which each lease is held (a
 * worker that died frees it then), `slowUntil`, and `expiresAt` for the table's TTL.
 */

/** How many of one endpoint's tries may run past `PROBE_MS` at once, across every worker. */
export const LEASES_PER_ENDPOINT = 2;
/** How long a try runs before it needs a lease. */
export const PROBE_MS = 1_000;
/** How long an endpoint stays slow after its last slow try (each try takes a lease meanwhile). */
export const SLOW_FOR_MS = 60_000;
/** How long a lease holds at most: the POST's 15 s, the writes around it; past it, a dead holder's is free. */
export const LEASE_MS = 20_000;
/** The item stays a day after its last write. */
const KEPT_SECONDS = 86_400;

export interface EndpointLeases {
  /** Epoch ms until which the endpoint is slow (0: it is not). */
  slowUntil: number;
  /** Per lease, the epoch ms until which it is held (0: free). */
  held: number[];
}

const slotName = (slot: number) => `s${slot}`;

const leasesFrom = (item: Item | undefined): EndpointLeases => ({
  slowUntil: Number(item?.slowUntil ?? 0),
  held: Array.from({ length: LEASES_PER_ENDPOINT }, (_, slot) => Number(item?.[slotName(slot)] ?? 0)),
});

/** The endpoint's leases as last written (eventually consistent: a hint; each lease is taken on condition). */
export const readLeases = async (endpointId: string): Promise<EndpointLeases> =>
  leasesFrom(await getItem(eventKeys.endpointLeases(endpointId), (item) => item));

export const isSlow = (leases: EndpointLeases, at = Date.now()) => leases.slowUntil > at;

/**
 * Takes a lease the read shows free (on condition that it still is); `markSlow` (a try past
 * `PROBE_MS`): the endpoint is slow from now. Its slot and until when it is held, or undefined when
 * none is free (no write when the read shows none).
 */
export const takeLease = async (endpointId: string, leases: EndpointLeases, markSlow: boolean, at = Date.now()) => {
  const free = leases.held.flatMap((until, slot) => (until <= at ? [slot] : []));
  for (const slot of free.sort(() => Math.random() - 0.5)) {
    const until = at + LEASE_MS;
    const written = await updateIf({
      Key: eventKeys.endpointLeases(endpointId),
      UpdateExpression: `SET #slot = :until, expiresAt = :ttl${markSlow ? ', slowUntil = :slow' : ''}`,
      ConditionExpression: 'attribute_not_exists(#slot) OR #slot <= :at',
      ExpressionAttributeNames: { '#slot': slotName(slot) },
      ExpressionAttributeValues: {
        ':until': until,
        ...(markSlow ? { ':slow': at + SLOW_FOR_MS } : {}),
        ':ttl': Math.floor(at / 1000) + KEPT_SECONDS,
        ':at': at,
      },
    });
    if (!(written instanceof ConditionFailed)) return { slot, until };
  }
  return undefined;
};

/**
 * Gives a lease back (if still this try's); `slow`: the try ran past `PROBE_MS`, so the endpoint
 * stays slow for `SLOW_FOR_MS` more.
 */
export const releaseLease = async (endpointId: string, lease: { slot: number; until: number }, slow: boolean) => {
  const at = Date.now();
  await updateIf({
    Key: eventKeys.endpointLeases(endpointId),
    UpdateExpression: `SET #slot = :free${slow ? ', slowUntil = :slow' : ''}`,
    ConditionExpression: '#slot = :until',
    ExpressionAttributeNames: { '#slot': slotName(lease.slot) },
    ExpressionAttributeValues: { ':free': 0, ':until': lease.until, ...(slow ? { ':slow': at + SLOW_FOR_MS } : {}) },
  });
};
