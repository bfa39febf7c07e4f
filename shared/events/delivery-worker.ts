import type { Context, SQSRecord } from 'aws-lambda';
import type { MessageOutcome } from '../aws/batch.js';
import type { SecretCipher } from '../aws/kms-cipher.js';
import { config } from '../core/config.js';
import { now } from '../core/ids.js';
import { logger } from '../core/logger.js';
import { endpointUrlProblem, type Resolve } from '../domain/endpoint-url.js';
import { signatureHeaders } from '../domain/webhook-signature.js';
import { getItem } from '../dynamo/table.js';
import { type EndpointLeases, type Lease, readLeases, releaseLease, takeLease } from '../entities/endpoint-leases.js';
import { type Event, getEvent } from '../entities/event.js';
import { type EventDelivery, eventDeliveryFrom, eventDeliveryKey } from '../entities/event-delivery.js';
import { type WebhookEndpoint, webhookEndpointFrom, webhookEndpointKey } from '../entities/webhook-endpoint.js';
import type { Attempt, WorkKind } from '../work/kind.js';
import { runWork } from '../work/runner.js';
import { deliveryDelivered, deliveryFailed } from './deliveries.js';
import { type DeliveryMessage, deliveryLogContext, parseDeliveryMessage, sendDeliveries } from './delivery-queue.js';
import { endpointFailed, endpointSucceeded } from './endpoint-health.js';
import { signingSecrets } from './endpoints.js';
import type { PostWebhook } from './webhook-sender.js';

/**
 * What a delivery needs: the cipher of the signing secrets, the resolver the URL rules use, the POST,
 * and the event as the API shows it (shared/http/present.ts' `presentEvent`: the body is what
 * `GET /v1/events/{id}` answers, and use cases do not import the HTTP layer).
 */
export interface DeliveryDeps {
  cipher: SecretCipher;
  resolve: Resolve;
  post: PostWebhook;
  present: (event: Event) => Record<string, unknown>;
}

/** A delivery in the runner's hands: the delivery as claimed, its event, its endpoint and its leases. */
export interface DeliveryItem {
  delivery: EventDelivery;
  event: Event;
  endpoint: WebhookEndpoint;
  leases: EndpointLeases;
}

type DeliveryAttempt = Attempt<DeliveryMessage, DeliveryItem>;

/** The longest delay one SQS message takes; a longer wait hops (`notBefore`, the runner sends it on). */
const MAX_DELAY_SECONDS = 900;

/**
 * The delivery still waiting for this very try: pending, at the count the message was sent with
 * (an older message, or one a recover made moot, is stale), its event still kept and its endpoint
 * not deleted.
 */
const claimDelivery = async (message: DeliveryMessage): Promise<DeliveryItem | undefined> => {
  const delivery = await getItem(eventDeliveryKey(message.eventId, message.endpointId), eventDeliveryFrom, true);
  if (delivery?.status !== 'pending' || delivery.attempts !== message.attempts) return undefined;
  const [event, endpoint, leases] = await Promise.all([
    getEvent(delivery.ownerId, message.eventId),
    getItem(webhookEndpointKey(delivery.ownerId, message.endpointId), webhookEndpointFrom, true),
    readLeases(message.endpointId),
  ]);
  return event && endpoint ? { delivery, event, endpoint, leases } : undefined;
};

/**
 * Event delivery as a work-item kind. A receiver's answer is no exception: every failed try is
 * written and its next try sent as a fresh message here (a hop past SQS's 15 minutes carries
 * `notBefore`), so a receiver failing for hours spends no receive of the queue. What reaches the
 * runner's failure path is the service's own error (a read, a write), retried on the queue's
 * visibility timeout and, after `maxReceiveCount`, the dead-letter queue.
 */
export const deliveryWork: WorkKind<DeliveryMessage, DeliveryItem, DeliveryDeps> = {
  words: {
    item: 'event delivery',
    queue: 'delivery',
    refused: 'event delivery refused',
    throttledPastBudget: 'event delivery throttled past the budget',
    deferred: 'event delivery deferred',
  },
  queueUrl: config.deliveryQueueUrl,
  parse: parseDeliveryMessage,
  messageContext: deliveryLogContext,
  itemContext: ({ event }) => ({ eventType: event.type, ownerId: event.ownerId }),
  claim: claimDelivery,
  startedAt: now,
  attempt: (deps, attempt) => deliver(deps, attempt),
  internalReason: 'internal error while delivering the event',
  throttledSince: () => undefined,
  // Reached only if the service's own error were taken for a refusal: the delivery fails, for `recover`.
  end: async (_deps, { item }, _reason, status) => ((await deliveryFailed(item, status, null)) ? 'failed' : 'moved'),
  defer: async (attempt) => attempt.message,
  fail: async () => undefined,
};

export const processDeliveryMessage = (deps: DeliveryDeps, received: SQSRecord, context?: Context) =>
  runWork(deliveryWork, deps, received, context);

const isSuccess = (status: number | null): status is number => status !== null && status >= 200 && status < 300;

const deliver = async (deps: DeliveryDeps, attempt: DeliveryAttempt): Promise<MessageOutcome> => {
  const { endpoint } = attempt.item;
  // A disabled endpoint's deliveries fail at once, for `recover` to send once it is enabled again.
  if (endpoint.status !== 'enabled') {
    await deliveryFailed(attempt.item, null, null);
    logger.info('event delivery failed: its endpoint is disabled');
    return 'done';
  }
  const status = await sendWithinShare(deps, attempt.item);
  if (status === 'busy') {
    await deferOrFail(attempt);
    return 'done';
  }
  if (isSuccess(status)) {
    if (await deliveryDelivered(attempt.item, status)) await endpointSucceeded(endpoint);
    logger.info('event delivered', { status });
    return 'done';
  }
  await tryAgainLater(attempt, status);
  return 'done';
};

/** This environment's tries in flight, per endpoint, each ending with its status once its lease is back. */
const inFlight = new Map<string, Set<Promise<number | null>>>();

/** The send under `lease`, registered in `inFlight` until the lease is given back. */
const sendUnder = (deps: DeliveryDeps, item: DeliveryItem, signed: Signed, lease: Lease) => {
  const endpointId = item.endpoint.id;
  const tries = inFlight.get(endpointId) ?? new Set();
  inFlight.set(endpointId, tries);
  const sending = (async () => {
    try {
      return await send(deps, item, signed);
    } finally {
      // A lease not given back frees itself after LEASE_MS; the try's outcome is what must not be lost.
      await releaseLease(endpointId, lease).catch((error: Error) =>
        logger.warn('event delivery: its lease was not given back', { error: error.name }),
      );
    }
  })();
  tries.add(sending);
  return sending.finally(() => {
    tries.delete(sending);
    if (!tries.size) inFlight.delete(endpointId);
  });
};

/**
 * The send within the endpoint's share of delivery capacity (shared/entities/endpoint-leases.ts): it
 * takes a lease first, on the read the claim made, then on a consistent read when that one was stale.
 * None free while a try of this very batch holds one: it waits for that try's end (the batch lasts that
 * long anyway) and takes again if the receiver answered it; not if it did not (it hangs: nothing
 * gained). `busy`: no lease, for a try of another environment holds them, or the receiver hangs.
 */
const sendWithinShare = async (deps: DeliveryDeps, item: DeliveryItem): Promise<number | null | 'busy'> => {
  const endpointId = item.endpoint.id;
  const signed = await sign(deps, item);
  let lease = await takeLease(endpointId, item.leases);
  while (!lease) {
    lease = await takeLease(endpointId, await readLeases(endpointId, true));
    if (lease) break;
    const siblings = inFlight.get(endpointId);
    if (!siblings?.size || (await Promise.race(siblings)) === null) return 'busy';
  }
  return sendUnder(deps, item, signed, lease);
};

type Signed = Awaited<ReturnType<typeof sign>>;

/** The event's body and its signature headers (Standard Webhooks, both secrets during a rotation). */
const sign = async (deps: DeliveryDeps, { event, endpoint }: DeliveryItem) => {
  const body = JSON.stringify(deps.present(event));
  const secrets = await signingSecrets(deps, endpoint);
  return { body, headers: signatureHeaders({ id: event.id, timestamp: Math.floor(Date.now() / 1000), body, secrets }) };
};

/**
 * The signed POST, after the URL rules again: a name may resolve elsewhere now than when the endpoint
 * was made, and the POST connects only to the addresses just checked. Answers the receiver's status,
 * null when none came or the URL is refused.
 */
const send = async (
  deps: DeliveryDeps,
  { endpoint }: DeliveryItem,
  { body, headers }: { body: string; headers: Record<string, string> },
) => {
  // The addresses checked are the ones connected to: the name is not resolved again.
  const addresses: string[] = [];
  const resolve: Resolve = async (hostname) => {
    const resolved = await deps.resolve(hostname);
    addresses.push(...resolved);
    return resolved;
  };
  const problem = await endpointUrlProblem(endpoint.url, { local: config.localRuntime(), resolve });
  if (problem) {
    logger.warn('event delivery refused by the URL rules', { problem });
    return null;
  }
  return deps.post(endpoint.url, body, headers, addresses);
};

/**
 * The waits of a try put back because its endpoint's every lease was held, before it counts: a busy
 * receiver that answers gets its try a second or five later; one that hangs has the try fail after
 * the last (as one it did not answer: `lastResponseStatus` null) and tried again on §14's schedule.
 */
export const DEFERRAL_SECONDS = [1, 5];

/** A try that found no lease free: its message again, a little later, the same try; after the last, a failed one. */
const deferOrFail = async (attempt: DeliveryAttempt) => {
  const deferrals = attempt.message.deferrals ?? 0;
  const wait = DEFERRAL_SECONDS[deferrals];
  if (wait === undefined) {
    logger.info('event delivery: every lease of its endpoint held, past the last deferral');
    return tryAgainLater(attempt, null);
  }
  await sendDeliveries([{ ...attempt.message, deferrals: deferrals + 1 }], wait);
  logger.info('event delivery deferred: every lease of its endpoint is held', { deferrals: deferrals + 1 });
};

/** When the try after `attempts` failed ones is due, or null when the schedule is spent. */
export const nextAttemptAfter = (attempts: number, at = Date.now()) => {
  const wait = config.deliveryRetrySeconds()[attempts - 1];
  return wait === undefined ? null : { wait, at: new Date(at + wait * 1000).toISOString() };
};

/**
 * A failed try: its message for the next try goes first (delayed, so it finds the write done; a
 * write that failed leaves it stale and this message comes back), then the delivery records the try.
 */
const tryAgainLater = async ({ item, message }: DeliveryAttempt, status: number | null) => {
  const attempts = item.delivery.attempts + 1;
  const next = nextAttemptAfter(attempts);
  if (next) {
    const hop = next.wait > MAX_DELAY_SECONDS ? { notBefore: Date.parse(next.at) } : {};
    const { requestId } = message;
    await sendDeliveries(
      [{ eventId: message.eventId, endpointId: message.endpointId, attempts, requestId, ...hop }],
      next.wait,
    );
  }
  if (!(await deliveryFailed(item, status, next?.at ?? null))) return;
  await endpointFailed(item.endpoint);
  logger.warn(next ? 'event delivery failed; tried again later' : 'event delivery failed; no try left', {
    status,
    attempts,
    nextAttemptAt: next?.at ?? null,
  });
};
