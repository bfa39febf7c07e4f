import type { Context, SQSRecord } from 'aws-lambda';
import type { MessageOutcome } from '../aws/batch.js';
import type { SecretCipher } from '../aws/kms-cipher.js';
import { config } from '../core/config.js';
import { now } from '../core/ids.js';
import { logger } from '../core/telemetry.js';
import { endpointUrlProblem, type Resolve } from '../domain/endpoint-url.js';
import { signatureHeaders } from '../domain/webhook-signature.js';
import {
  allHeld,
  type EndpointLeases,
  heldLongerThan,
  type Lease,
  readLeases,
  releaseLease,
  takeLease,
} from '../entities/endpoint-leases.js';
import { type Event, getEvent } from '../entities/event.js';
import { type EventDelivery, findDelivery } from '../entities/event-delivery.js';
import {
  findWebhookEndpoint,
  markEndpointPrompt,
  markEndpointSlow,
  type WebhookEndpoint,
} from '../entities/webhook-endpoint.js';
import { type Attempt, runParsed, runWork, type WorkKind } from '../work/runner.js';
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
  /**
   * Hands a try that could hang to the slow try (`delivery-hand-off.ts`: an asynchronous invoke of
   * EventDeliverySlowTry); the worker's alone, the slow try has none.
   */
  handOff?: (message: DeliveryMessage) => Promise<void>;
}

/** A delivery in the runner's hands: the delivery as claimed, its event and its endpoint. */
export interface DeliveryItem {
  delivery: EventDelivery;
  event: Event;
  endpoint: WebhookEndpoint;
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
  const delivery = await findDelivery(message.eventId, message.endpointId);
  if (delivery?.status !== 'pending' || delivery.attempts !== message.attempts) return undefined;
  const [event, endpoint] = await Promise.all([
    getEvent(delivery.ownerId, message.eventId),
    findWebhookEndpoint(delivery.ownerId, message.endpointId),
  ]);
  return event && endpoint ? { delivery, event, endpoint } : undefined;
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
  attempt: (deps, attempt) => deliverInBatch(deps, attempt),
  internalReason: 'internal error while delivering the event',
  throttledSince: () => undefined,
  // Reached only if the service's own error were taken for a refusal: the delivery fails, for `recover`.
  end: async (_deps, { item }, _reason, status) => ((await deliveryFailed(item, status, null)) ? 'failed' : 'moved'),
  defer: async (attempt) => attempt.message,
  fail: async () => undefined,
};

export const processDeliveryMessage = (deps: DeliveryDeps, received: SQSRecord, context?: Context) =>
  runWork(deliveryWork, deps, received, context);

/** The slow try (EventDeliverySlowTry): the same work, the try always under a lease, with §14's 15 s. */
const slowTryWork: WorkKind<DeliveryMessage, DeliveryItem, DeliveryDeps> = {
  ...deliveryWork,
  attempt: (deps, attempt) => deliverLeased(deps, attempt),
};

/**
 * One try handed over by the worker (`event`: its message, ids only). The service's own error throws,
 * for Lambda's asynchronous retries and then the on-failure destination (lib/routes.ts).
 */
export const processSlowTry = async (deps: DeliveryDeps, event: unknown, context?: Context) => {
  const message = parseDeliveryMessage(JSON.stringify(event ?? null));
  if (!message) {
    logger.error('dropping a malformed slow try of an event delivery');
    return;
  }
  const received = {
    messageId: context?.awsRequestId ?? '',
    body: '',
    attributes: { ApproximateReceiveCount: '1' },
  } as unknown as SQSRecord;
  if ((await runParsed(slowTryWork, deps, message, received, context)) !== 'done')
    throw new Error('event delivery slow try failed; Lambda tries it again');
};

const isSuccess = (status: number | null): status is number => status !== null && status >= 200 && status < 300;

/** A disabled endpoint's deliveries fail at once, for `recover` to send once it is enabled again. */
const disabled = async ({ item }: DeliveryAttempt) => {
  if (item.endpoint.status === 'enabled') return false;
  await deliveryFailed(item, null, null);
  logger.info('event delivery failed: its endpoint is disabled');
  return true;
};

/** The receiver's answer (or none: null) written: delivered, or failed and tried again on §14's schedule. */
const recordAnswer = async (attempt: DeliveryAttempt, status: number | null): Promise<MessageOutcome> => {
  if (isSuccess(status)) {
    if (await deliveryDelivered(attempt.item, status)) await endpointSucceeded(attempt.item.endpoint);
    logger.info('event delivered', { status });
    return 'done';
  }
  await tryAgainLater(attempt, status);
  return 'done';
};

/** The try's message to the slow try: done here once Lambda accepted it. */
const handOff = async (deps: DeliveryDeps, { message }: DeliveryAttempt, why: string): Promise<MessageOutcome> => {
  if (!deps.handOff) throw new Error('an event delivery handed off where there is no slow try');
  await deps.handOff(message);
  logger.info(`event delivery handed to the slow try: ${why}`);
  return 'done';
};

/**
 * A try in the worker's batch (shared/events/README.md, "Integrators isolated"): POSTed here for
 * `promptMs()` at most, a prompt endpoint's with no lease, any other's under one of its leases; one
 * unanswered by then (its POST aborted, its lease given back) goes to the slow try. No batch waits on a
 * receiver longer.
 */
const deliverInBatch = async (deps: DeliveryDeps, attempt: DeliveryAttempt): Promise<MessageOutcome> => {
  if (await disabled(attempt)) return 'done';
  const status = isPrompt(attempt.item.endpoint)
    ? await sendFree(deps, attempt.item, await sign(deps, attempt.item))
    : await sendLeased(deps, attempt.item, promptMs());
  if (status === LATE) return handOff(deps, attempt, 'its receiver did not answer in time');
  return settleLeased(attempt, status);
};

/** The slow try's: under one of the endpoint's leases (none free: put back, or failed at once when it hangs). */
const deliverLeased = async (deps: DeliveryDeps, attempt: DeliveryAttempt): Promise<MessageOutcome> => {
  if (await disabled(attempt)) return 'done';
  const status = await sendLeased(deps, attempt.item);
  // Never cut: the slow try has §14's whole time.
  if (status === LATE) throw new Error('a slow try cut short');
  return settleLeased(attempt, status);
};

/** A try's outcome: its answer written, or, with no lease free, put back or (its receiver hangs) failed at once. */
const settleLeased = async (attempt: DeliveryAttempt, status: number | null | 'busy' | 'hung') => {
  if (status === 'busy') {
    await deferOrFail(attempt);
    return 'done';
  }
  // Every lease held, one by a try in flight past `promptMs()`: the receiver hangs, putting back gains nothing.
  if (status === 'hung') {
    logger.info('event delivery: every lease of its endpoint held, one by a try its receiver has not answered');
    await tryAgainLater(attempt, null);
    return 'done';
  }
  return recordAnswer(attempt, status);
};

/**
 * How long a receiver has to answer a try for its endpoint to count as prompt: `DELIVERY_PROMPT_MS`
 * (a whole number from 100 to 15,000), else 2 s. A try in flight longer holds its batch that long.
 */
export const PROMPT_MS = 2_000;
export const promptMs = () => {
  const configured = Number(process.env.DELIVERY_PROMPT_MS);
  return Number.isSafeInteger(configured) && configured >= 100 && configured <= 15_000 ? configured : PROMPT_MS;
};

/**
 * This environment's own judgements, per endpoint, before its write is read back: the `promptSince`
 * it found slow (a newer one, from a prompt answer since, ends it), and when it last marked it prompt
 * (so the tries of one batch claimed before that mark do not each write it again).
 */
const foundSlow = new Map<string, string>();
const markedPromptAt = new Map<string, number>();
/** Forgets this environment's judgements (tests). */
export const forgetJudgements = () => {
  foundSlow.clear();
  markedPromptAt.clear();
};

/** Whether the endpoint's tries go without a lease: prompt as read, and not found slow here since. */
const isPrompt = ({ id, promptSince }: WebhookEndpoint) => Boolean(promptSince) && foundSlow.get(id) !== promptSince;

/** A prompt endpoint's try not answered in time: its tries take leases again (one write, once per environment). */
const judgeSlow = async (endpoint: WebhookEndpoint) => {
  const was = endpoint.promptSince;
  if (!was || foundSlow.get(endpoint.id) === was) return;
  foundSlow.set(endpoint.id, was);
  markedPromptAt.delete(endpoint.id);
  logger.warn('webhook endpoint slow: its tries take a lease again', { endpointId: endpoint.id });
  // The judgement holds here whatever the write does; another environment makes its own.
  await markEndpointSlow(endpoint, was).catch((error: Error) =>
    logger.warn('webhook endpoint slow: not written', { error: error.name }),
  );
};

/**
 * A leased try answered within `promptMs()` while no other lease of its endpoint was held longer (no
 * other try of it hangs): its tries take no lease from now (one write).
 */
const judgePrompt = async (endpoint: WebhookEndpoint, leases: EndpointLeases) => {
  if (isPrompt(endpoint) || heldLongerThan(leases, promptMs())) return;
  if (Date.now() - (markedPromptAt.get(endpoint.id) ?? 0) < 60_000) return;
  markedPromptAt.set(endpoint.id, Date.now());
  logger.info('webhook endpoint prompt: its tries take no lease', { endpointId: endpoint.id });
  await markEndpointPrompt(endpoint, now()).catch((error: Error) =>
    logger.warn('webhook endpoint prompt: not written', { error: error.name }),
  );
};

const LATE = Symbol('late');

/**
 * The work's outcome, or `LATE` once `ms` have passed without one. The timer's end waits for the
 * I/O already come to be handled first (setImmediate): an answer that arrived while this worker was
 * starved of CPU is read before the try is judged late.
 */
const within = async <T>(work: Promise<T>, ms: number): Promise<T | typeof LATE> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((settle) => {
    timer = setTimeout(() => setImmediate(() => settle(LATE)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
};

/** This environment's leased tries in flight, per endpoint, each ending with its status once its lease is back. */
const inFlight = new Map<string, Set<Promise<number | null>>>();

/**
 * The rest of a try under `lease`, registered in `inFlight` until the lease is given back; answered
 * within `promptMs()` of `started`, its endpoint may be judged prompt.
 */
const underLease = (item: DeliveryItem, lease: Lease, sending: Promise<number | null>, started: number) => {
  const { endpoint } = item;
  const tries = inFlight.get(endpoint.id) ?? new Set();
  inFlight.set(endpoint.id, tries);
  const ended = (async () => {
    let status: number | null = null;
    try {
      status = await sending;
      return status;
    } finally {
      const prompt = status !== null && Date.now() - started <= promptMs();
      // A lease not given back frees itself after LEASE_MS; the try's outcome is what must not be lost.
      try {
        const leases = await releaseLease(endpoint.id, lease);
        if (prompt && leases) await judgePrompt(endpoint, leases);
      } catch (error) {
        logger.warn('event delivery: its lease was not given back', { error: (error as Error).name });
      }
    }
  })();
  tries.add(ended);
  return ended.finally(() => {
    tries.delete(ended);
    if (!tries.size) inFlight.delete(endpoint.id);
  });
};

/**
 * A prompt endpoint's try: no lease, no write. Not answered within `promptMs()`, its endpoint is slow
 * (its tries go to the slow try from now) and the POST is aborted: `LATE`, for the slow try.
 */
const sendFree = async (deps: DeliveryDeps, item: DeliveryItem, signed: Signed) => {
  const cut = new AbortController();
  const sending = send(deps, item, signed, cut.signal);
  const answer = await within(sending, promptMs());
  if (answer !== LATE) return answer;
  cut.abort();
  sending.catch(() => undefined);
  await judgeSlow(item.endpoint);
  return LATE;
};

/**
 * A try under one of the endpoint's leases (shared/entities/endpoint-leases.ts), taken on an eventually
 * consistent read, then on a consistent one when that was stale. None free while a try of this very
 * batch holds one: it waits for that try's end (the batch lasts that long anyway) and takes again if
 * the receiver answered it; not if it did not (it hangs: nothing gained). `busy`: no lease, for a try
 * of another environment holds them, or the receiver hangs; `hung`: no lease, and one is held by a try
 * in flight longer than `promptMs()` (the receiver hangs, as `judgePrompt` judges it): not put back.
 */
const sendLeased = async (deps: DeliveryDeps, item: DeliveryItem, cutMs?: number) => {
  const endpointId = item.endpoint.id;
  const read = await readLeases(endpointId);
  // In the batch, a receiver with a try in flight past the cut hangs now: a try of it would hold the
  // batch for the cut only to be handed off. Handed off at once, or, no lease free, failed at once.
  if (cutMs !== undefined && heldLongerThan(read, cutMs)) return allHeld(read) ? 'hung' : LATE;
  let lease = await takeLease(endpointId, read);
  while (!lease) {
    const leases = await readLeases(endpointId, true);
    lease = await takeLease(endpointId, leases);
    if (lease) break;
    if (heldLongerThan(leases, promptMs())) return 'hung';
    const siblings = inFlight.get(endpointId);
    if (!siblings?.size || (await Promise.race(siblings)) === null) return 'busy';
  }
  // Signed once the lease is held (a try put back signs nothing); a failed signing gives the lease back.
  const cut = cutMs === undefined ? undefined : new AbortController();
  const sending = sign(deps, item).then((signed) => send(deps, item, signed, cut?.signal));
  const ended = underLease(item, lease, sending, Date.now());
  if (!cut) return ended;
  // In the worker's batch: not answered within `cutMs`, the POST is aborted (its lease given back): `LATE`.
  const answer = await within(ended, cutMs as number);
  if (answer !== LATE) return answer;
  cut.abort();
  ended.catch(() => undefined);
  return LATE;
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
  signal?: AbortSignal,
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
  return deps.post(endpoint.url, body, headers, addresses, signal);
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
