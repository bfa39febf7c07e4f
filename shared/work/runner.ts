import type { Context, SQSRecord } from 'aws-lambda';
import type { MessageOutcome } from '../aws/batch.js';
import type { Deps } from '../aws/deps.js';
import { addLogContext, logger, withMessageContext } from '../core/telemetry.js';
import { secondsUntil } from '../platforms/failure.js';
import type { Attempt, WorkKind } from './kind.js';
import type { WorkMessage } from './message.js';
import { sendWork, setVisibility } from './queue.js';
import { waitForSlot } from './slot-wait.js';
import { backoffOf, failed, retry } from './work-failure.js';

/**
 * The work-item runner: one received message of any kind (kind.ts), from its body to its outcome, in the
 * manner of a job queue's worker (BullMQ's, Sidekiq's): parse, send on a message that came before
 * its time, claim (a stale message is dropped untouched), try, and hand whatever the try threw to
 * the failure path (work-failure.ts), which classifies it: an unexpected throw after the claim gets the
 * backoff of a transient failure rather than the queue's visibility timeout. Every line logged
 * meanwhile names the item and the request that sent its message.
 */
export const runWork = async <M extends WorkMessage, I, D = Deps>(
  kind: WorkKind<M, I, D>,
  deps: D,
  received: SQSRecord,
  context?: Context,
): Promise<MessageOutcome> => {
  const message = kind.parse(received.body);
  if (!message) {
    logger.error(`dropping a malformed ${kind.words.queue} message`, { messageId: received.messageId });
    return 'done';
  }
  return runParsed(kind, deps, message, received, context);
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
  const message = door.parse(received.body);
  if (!message) {
    logger.error(`dropping a malformed ${door.queue} message`, { messageId: received.messageId });
    return door.malformed;
  }
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
