import type { LogAttributes } from '@aws-lambda-powertools/logger/types';
import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSRecord } from 'aws-lambda';
import { type MessageOutcome, sqs, sqsDelay } from '../aws/batch.js';
import type { Deps } from '../aws/deps.js';
import { config, throttledPastBudget } from '../core/config.js';
import {
  addLogContext,
  BUSINESS_METRICS,
  countIfSystemic,
  countMetric,
  countPlatformError,
  logger,
  withMessageContext,
} from '../core/telemetry.js';
import {
  classify,
  type Failure,
  MAX_DEFERRAL_SECONDS,
  platformStatusClass,
  platformStatusOf,
  secondsUntil,
} from '../platforms/port.js';

/**
 * The work-item runner: one received message of any kind (`WorkKind`), from its body to its outcome, in the
 * manner of a job queue's worker (BullMQ's, Sidekiq's): parse, send on a message that came before
 * its time, claim (a stale message is dropped untouched), try, and hand whatever the try threw to
 * the failure path (below), which classifies it: an unexpected throw after the claim gets the
 * backoff of a transient failure rather than the queue's visibility timeout. Every line logged
 * meanwhile names the item and the request that sent its message.
 */
export const runWork = async <M extends WorkMessage, I, D = Deps>(
  kind: WorkKind<M, I, D>,
  deps: D,
  received: SQSRecord,
  context?: Context,
): Promise<MessageOutcome> => {
  const message = parseReceived(kind.parse, kind.words.queue, received);
  return message ? runParsed(kind, deps, message, received, context) : 'done';
};

/** A received message's body parsed; a malformed one is logged (it can never be processed) and undefined. */
const parseReceived = <M>(parse: (body: string) => M | undefined, queue: string, received: SQSRecord) => {
  const message = parse(received.body);
  if (!message) logger.error(`dropping a malformed ${queue} message`, { messageId: received.messageId });
  return message;
};

/**
 * A queue's door (`openDoor`): the queue's one message type, a union tagged by `kind`, parsed once
 * from the body, and the one handler of each kind. A queue that carries several kinds of work says
 * which a message is here, once, rather than each handler trying its parser in turn.
 */
export interface QueueDoor<U extends { kind: string }, D, R> {
  queue: string;
  parse: (body: string) => U | undefined;
  handlers: {
    [K in U['kind']]: (deps: D, message: Extract<U, { kind: K }>, received: SQSRecord, context?: Context) => Promise<R>;
  };
  /** What a malformed body answers (it is logged and dropped: it can never be processed). */
  malformed: R;
}

/** One received message through its queue's door: parsed once, handed to the handler of its kind. */
export const openDoor = async <U extends { kind: string }, D, R>(
  door: QueueDoor<U, D, R>,
  deps: D,
  received: SQSRecord,
  context?: Context,
): Promise<R> => {
  const message = parseReceived(door.parse, door.queue, received);
  if (!message) return door.malformed;
  type Handler = (deps: D, message: U, received: SQSRecord, context?: Context) => Promise<R>;
  const handle = door.handlers[message.kind as U['kind']] as Handler;
  return handle(deps, message, received, context);
};

/** A message already parsed (at its queue's door, or by `runWork`), from its claim to its outcome. */
export const runParsed = async <M extends WorkMessage, I, D = Deps>(
  kind: WorkKind<M, I, D>,
  deps: D,
  message: M,
  received: SQSRecord,
  context?: Context,
): Promise<MessageOutcome> => {
  const unexpected = `${kind.words.item} failed unexpectedly; SQS will retry`;
  return withMessageContext(kind.messageContext(message), unexpected, () =>
    beforeTheEnd(kind, received, context, () => kind.divert?.(deps, message) ?? tryItem(kind, deps, message, received)),
  );
};

const tryItem = async <M extends WorkMessage, I, D>(
  kind: WorkKind<M, I, D>,
  deps: D,
  message: M,
  received: SQSRecord,
): Promise<MessageOutcome> => {
  if (await sentOn(kind, message)) return 'done';
  const item = await kind.claim(message);
  if (!item) {
    logger.info(`stale ${kind.words.queue} message dropped`);
    return 'done';
  }
  addLogContext(kind.itemContext(item));
  const attempt: Attempt<M, I> = {
    message,
    item,
    received,
    startedAt: kind.startedAt(item),
    redelivered: Number(received.attributes?.ApproximateReceiveCount) > 1,
    retry: (reason, status) => retry(kind, attempt, reason, status),
    waitForSlot: (slotAt) => waitForSlot(kind, attempt, slotAt),
  };
  try {
    return await kind.attempt(deps, attempt);
  } catch (error) {
    return failed(kind, deps, attempt, error);
  }
};

/** A 429's wait longer than one message delay: on again, until its time (no claim, no platform call). */
const sentOn = async <M extends WorkMessage, I, D>(kind: WorkKind<M, I, D>, message: M) => {
  const early = secondsUntil(message.notBefore);
  if (early <= 0) return false;
  await sendWork(kind.queueUrl(), [message], early);
  logger.info(`throttled ${kind.words.item} still waiting; message sent on`, { waitSeconds: early });
  return true;
};

/** How long before the invocation's end a message still running is given its backoff. */
const END_MARGIN_MS = 2_000;

/**
 * The remaining-time guard: a message still running shortly before the invocation's time is up gets
 * its backoff (from the end of the invocation) as its visibility, so a timed-out batch comes back
 * after the backoff rather than the queue's visibility timeout. Its try goes on meanwhile: if it
 * ends in time, its own outcome stands (its writes are conditional, its platform calls keyed).
 */
const beforeTheEnd = async <M extends WorkMessage, I, D>(
  kind: WorkKind<M, I, D>,
  received: SQSRecord,
  context: Context | undefined,
  work: () => Promise<MessageOutcome>,
) => {
  if (!context?.getRemainingTimeInMillis || !kind.backoffSeconds) return work();
  const giveBack = () => {
    const waitSeconds = Math.ceil(END_MARGIN_MS / 1000) + backoffOf(kind, received);
    logger.warn('the invocation ends before this message does; it comes back after its backoff', { waitSeconds });
    setVisibility(kind.queueUrl(), received.receiptHandle, waitSeconds).catch((error: Error) =>
      logger.error('could not give the message its backoff', error),
    );
  };
  const timer = setTimeout(giveBack, Math.max(0, context.getRemainingTimeInMillis() - END_MARGIN_MS));
  try {
    return await work();
  } finally {
    clearTimeout(timer);
  }
};

/**
 * What every work message may carry, whatever its kind: the request that sent it (for its handler's
 * log lines) and, for a 429's wait longer than one message delay, the time before which it is not to
 * be tried (epoch ms); one that arrives earlier is sent on again, untouched.
 */
export interface WorkMessage {
  requestId?: string;
  notBefore?: number;
  /**
   * The supplier's call slot (epoch ms) this message keeps, taken from its shop's pace before the
   * item was sent to wait for it: the try calls at that time without taking another.
   */
  slotAt?: number;
}

export type Fields = Record<string, unknown>;

export const isText = (value: unknown): value is string => typeof value === 'string';

/** `{ key: value }` when the field is text, else nothing: an optional field of another type is dropped. */
export const optionalText = (parsed: Fields, key: string) => (isText(parsed[key]) ? { [key]: parsed[key] } : {});

/** The fields every kind's message shares, when present and of their type. */
export const workFields = (parsed: Fields): WorkMessage => ({
  ...optionalText(parsed, 'requestId'),
  ...(Number.isSafeInteger(parsed.notBefore) ? { notBefore: Number(parsed.notBefore) } : {}),
  ...(Number.isSafeInteger(parsed.slotAt) ? { slotAt: Number(parsed.slotAt) } : {}),
});

/**
 * A message body read as JSON and handed to the kind's reader; undefined for a body that is not
 * JSON or that the reader refuses: a malformed message can never be processed.
 */
export const parseWith = <M>(body: string, read: (parsed: Fields) => M | undefined): M | undefined => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  return parsed && typeof parsed === 'object' ? read(parsed as Fields) : undefined;
};

/**
 * One try of a claimed work item: its message, the item as the claim left it, the message as SQS
 * handed it over (`received`) and when the try began. `retry` hands it back to the runner's failure path (the item
 * `failed`, the message back after its backoff), for a kind that finds, in its own logic, a reason
 * to try again later.
 */
export interface Attempt<M extends WorkMessage, I> {
  message: M;
  item: I;
  received: SQSRecord;
  startedAt: string;
  /** A message SQS delivers again is a redelivery, whatever first sent it. */
  redelivered: boolean;
  retry: (reason: string, platformStatus: number | null) => Promise<MessageOutcome>;
  /**
   * Hands the item back to the runner until `slotAt` (epoch ms), the call slot its supplier's pace
   * gave it: no try is counted, the throttling budget is untouched.
   */
  waitForSlot: (slotAt: number) => Promise<MessageOutcome>;
}

/**
 * How an end the runner asked for went, for its log line (`dead`, `found`, `moved`…); `unknown` when
 * the platform could not be asked whether an earlier try made it: the item then fails and comes back.
 */
export type EndOutcome = 'unknown' | (string & {});

/** The log lines a kind writes in its own words (integration tests and dashboards read some of them). */
export interface WorkWords {
  /** What one item is called: `sync job`, `fulfillment`. */
  item: string;
  /** Its queue's name: `sync`, `fulfillment`. */
  queue: string;
  refused: string;
  /** How a refusal is logged: `warn` (default), or `info` for a kind whose refusals are expected (a tag). */
  refusedLevel?: 'info' | 'warn';
  throttledPastBudget: string;
  deferred: string;
}

/**
 * A work-item kind (a sync job, a fulfillment entry's propagation, later a tag or an event delivery):
 * what the runner (runner.ts) cannot know. Its message, its log attributes, the platform call and
 * what completes it, and the moves of its item, each a small adapter over the item's own module, so
 * that a change of how an item is stored changes only its adapters. The runner owns the rest:
 * parsing, the early re-send, the claim, the 429 deferral within THROTTLE_BUDGET_SECONDS, failure with
 * backoff, the end on a refusal, and every log line about them. `D`: what its calls need (a platform's
 * adapters, a webhook sender).
 */
export interface WorkKind<M extends WorkMessage, I, D = Deps> {
  words: WorkWords;
  queueUrl: () => string;
  parse: (body: string) => M | undefined;
  /** What its message tells the log lines, before anything is read. */
  messageContext: (message: M) => LogAttributes;
  /** What the item adds to them once claimed. */
  itemContext: (item: I) => LogAttributes;
  /** A message that is not a try of its item (a change of a placed order, say): the kind's alone. */
  divert?: (deps: D, message: M) => Promise<MessageOutcome> | undefined;
  /** The item, claimed for this try; undefined for a stale message (or nothing left to do). */
  claim: (message: M) => Promise<I | undefined>;
  startedAt: (item: I) => string;
  /** The kind's own logic: the platform call and what completes the item. May throw: the runner classifies it. */
  attempt: (deps: D, attempt: Attempt<M, I>) => Promise<MessageOutcome>;
  /** The reason an internal error (not the platform's answer) records: never its text. */
  internalReason: string;
  /** When its current run of 429s began, if it is in one. */
  throttledSince: (item: I) => string | undefined;
  /** Ends the item (`dead`) on a refusal or a spent throttling budget; `status`: the platform's. */
  end: (deps: D, attempt: Attempt<M, I>, reason: string, status: number | null) => Promise<EndOutcome>;
  /**
   * Defers the item after a 429 (`error`, for what the kind learns of it: its supplier's pace);
   * answers the message to send it, or undefined if it moved meanwhile.
   */
  defer: (attempt: Attempt<M, I>, delaySeconds: number, reason: string, error: unknown) => Promise<M | undefined>;
  /**
   * Puts the item back before its call, for `delaySeconds` (its supplier's pace had no slot sooner):
   * like `defer` under a new generation, but neither a try nor a throttled run. Answers the message to
   * send it, or undefined if it moved meanwhile. Absent: the kind never waits for a slot.
   */
  waitForSlot?: (attempt: Attempt<M, I>, delaySeconds: number) => Promise<M | undefined>;
  /** Records a failed try, which waits `waitSeconds` (0: the queue's own visibility). */
  fail: (attempt: Attempt<M, I>, reason: string, status: number | null, waitSeconds: number) => Promise<unknown>;
  /**
   * The wait after each failed receive (the last repeating), given as the message's visibility;
   * absent, a failed message comes back on the queue's own visibility timeout.
   */
  backoffSeconds?: () => number[];
  /**
   * The request left and no usable answer came back: the kind may look for what it made. Answers
   * undefined when that settled the item, or the reason to fail with. Absent: a transient failure.
   */
  unknownOutcome?: (
    deps: D,
    attempt: Attempt<M, I>,
    reason: string,
    status: number | null,
  ) => Promise<string | undefined>;
}

/** Batches of ten in flight at once: an order for a hundred source stores is enqueued in one round trip. */
const BATCHES_IN_FLIGHT = 10;

/** SendMessageBatch takes ten at a time. */
const BATCH_SIZE = 10;

const sendChunk = async (queueUrl: string, chunk: unknown[], delay: number) => {
  if (chunk.length === 1) {
    await sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(chunk[0]), DelaySeconds: delay }),
    );
    return;
  }
  const entries = chunk.map((message, index) => ({
    Id: String(index),
    MessageBody: JSON.stringify(message),
    DelaySeconds: delay,
  }));
  const out = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
  if (out.Failed?.length) throw new Error(`${out.Failed.length} messages were not accepted`);
};

/**
 * One message per work item, on a work queue, delayed by `delaySeconds` (up to SQS's 15 minutes).
 * Throws if any was refused: the caller's own message then comes back and sends them again.
 */
export const sendWork = async (queueUrl: string, messages: unknown[], delaySeconds = 0) => {
  const delay = sqsDelay(delaySeconds);
  const chunks: unknown[][] = [];
  for (let i = 0; i < messages.length; i += BATCH_SIZE) chunks.push(messages.slice(i, i + BATCH_SIZE));
  for (let i = 0; i < chunks.length; i += BATCHES_IN_FLIGHT) {
    await Promise.all(chunks.slice(i, i + BATCHES_IN_FLIGHT).map((chunk) => sendChunk(queueUrl, chunk, delay)));
  }
};

/** Sets when a received message comes back (its visibility timeout, from now): the backoff after a failure. */
export const setVisibility = (queueUrl: string, receiptHandle: string, seconds: number) =>
  sqs.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: queueUrl,
      ReceiptHandle: receiptHandle,
      VisibilityTimeout: seconds,
    }),
  );

/**
 * A claimed item whose supplier's pace (docs/design.md, "A pace per supplier") gave it a call slot
 * later than the try can wait for: the kind puts it back under a new generation without counting a
 * try, and one fresh message, delayed to the slot's second, keeps the slot (`slotAt`), so the next
 * try calls at that time without taking another. A fresh message rather than a visibility change:
 * it does not count towards `maxReceiveCount`. A wait past SQS's 15 minutes carries `notBefore`, a
 * second before the slot.
 */
export const waitForSlot = async <M extends WorkMessage, I, D>(
  kind: WorkKind<M, I, D>,
  attempt: Attempt<M, I>,
  slotAt: number,
): Promise<MessageOutcome> => {
  if (!kind.waitForSlot) throw new Error(`a ${kind.words.item} cannot wait for a slot`);
  const waitMs = Math.max(0, slotAt - Date.now());
  const delaySeconds = Math.floor(waitMs / 1000);
  const message = await kind.waitForSlot(attempt, Math.ceil(waitMs / 1000));
  if (message) {
    // A wait past 15 minutes is sent on until a second before the slot, so its last hop is not late for it.
    const notBefore = delaySeconds > MAX_DEFERRAL_SECONDS ? { notBefore: slotAt - 1000 } : {};
    const waiting = { ...message, slotAt, ...notBefore };
    await sendWork(kind.queueUrl(), [waiting], delaySeconds);
  }
  logger.info(`${kind.words.item} waits for its slot in its supplier's pace`, { delaySeconds, sent: !!message });
  return 'done';
};

/**
 * What a try that threw becomes, for every kind: a 429 defers the item within the throttling budget,
 * a refusal ends it, an unknown outcome lets the kind look for what it made, anything else (an
 * unexpected throw too) is a failure that comes back after its backoff.
 */
export const failed = async <M extends WorkMessage, I, D = Deps>(
  kind: WorkKind<M, I, D>,
  deps: D,
  attempt: Attempt<M, I>,
  error: unknown,
): Promise<MessageOutcome> => {
  const failure = classify(error, kind.internalReason);
  const status = platformStatusOf(error);
  const statusClass = platformStatusClass(error);
  if (statusClass) countPlatformError(statusClass);
  switch (failure.kind) {
    case 'throttled':
      return throttled(kind, deps, attempt, failure, error);
    case 'permanent': {
      // The kind may look first whether an earlier try made it (then the item ends done, not dead).
      const ended = await kind.end(deps, attempt, failure.reason, status);
      if (ended === 'unknown') return attempt.retry(failure.reason, status);
      logger[kind.words.refusedLevel ?? 'warn'](kind.words.refused, { status: failure.status, ended });
      return 'done';
    }
    case 'unknown_outcome': {
      const reason = kind.unknownOutcome
        ? await kind.unknownOutcome(deps, attempt, failure.reason, status)
        : failure.reason;
      return reason === undefined ? 'done' : attempt.retry(reason, status);
    }
    case 'transient':
      // The service's own error: an unexpected throw gets the backoff like any failure, and one no
      // retry mends (AccessDenied, a bug) is counted apart, for its alarm.
      if (failure.internal) {
        logger.error(`${kind.words.item} failed`, error as Error);
        countIfSystemic(error);
      }
      return attempt.retry(failure.reason, status);
  }
};

/**
 * A 429: the item is deferred, and one fresh message waits for Retry-After (carrying `notBefore` past
 * SQS's 15 minutes), so throttling never uses up a receive. Throttled for longer than the budget
 * (THROTTLE_BUDGET_SECONDS, from its run's first 429), it ends instead.
 */
const throttled = async <M extends WorkMessage, I, D>(
  kind: WorkKind<M, I, D>,
  deps: D,
  attempt: Attempt<M, I>,
  failure: Extract<Failure, { kind: 'throttled' }>,
  error: unknown,
): Promise<MessageOutcome> => {
  const pastBudget = throttledPastBudget(failure.reason, kind.throttledSince(attempt.item), attempt.startedAt);
  if (pastBudget) {
    const ended = await kind.end(deps, attempt, pastBudget, 429);
    logger.warn(kind.words.throttledPastBudget, { budgetSeconds: config.throttleBudgetSeconds(), ended });
    if (ended !== 'unknown') return 'done';
  }
  const message = await kind.defer(attempt, failure.delaySeconds, failure.reason, error);
  if (message) {
    const notBefore = Date.now() + failure.delaySeconds * 1000;
    const resent = failure.delaySeconds > MAX_DEFERRAL_SECONDS ? { ...message, notBefore } : message;
    await sendWork(kind.queueUrl(), [resent], failure.delaySeconds);
    countMetric(BUSINESS_METRICS.throttleDeferrals);
  }
  logger.warn(kind.words.deferred, { delaySeconds: failure.delaySeconds });
  return 'done';
};

/** The wait after the n-th failed receive of a message: the n-th backoff step, the last one repeating. */
export const backoffOf = <M extends WorkMessage, I, D>(kind: WorkKind<M, I, D>, received: SQSRecord) => {
  const steps = kind.backoffSeconds?.();
  if (!steps) return 0;
  const receive = Math.max(1, Number(received.attributes?.ApproximateReceiveCount) || 1);
  return steps[Math.min(receive, steps.length) - 1] ?? 0;
};

/**
 * A failed try: the item records it, and its message comes back after the kind's backoff (a growing
 * delay, so its receives span an outage instead of being spent within minutes), or, for a kind
 * without one, after the queue's visibility timeout; after `maxReceiveCount`, the dead-letter queue.
 */
export const retry = async <M extends WorkMessage, I, D>(
  kind: WorkKind<M, I, D>,
  attempt: Attempt<M, I>,
  reason: string,
  status: number | null,
): Promise<MessageOutcome> => {
  const { received } = attempt;
  const waitSeconds = backoffOf(kind, received);
  await kind.fail(attempt, reason, status, waitSeconds);
  if (kind.backoffSeconds) await setVisibility(kind.queueUrl(), received.receiptHandle, waitSeconds);
  logger.warn(`${kind.words.item} failed; SQS will retry`, {
    reason,
    receiveCount: received.attributes?.ApproximateReceiveCount,
    waitSeconds: kind.backoffSeconds ? waitSeconds : undefined,
  });
  return 'retry';
};
