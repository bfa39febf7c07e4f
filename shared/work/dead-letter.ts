import type { LogAttributes } from '@aws-lambda-powertools/logger/types';
import type { SQSRecord } from 'aws-lambda';
import type { Deps } from '../aws/deps.js';
import { gaveUpReason } from '../core/config.js';
import { addLogContext, logger, withLogContext } from '../core/telemetry.js';
import type { EndOutcome, WorkMessage, WorkWords } from './runner.js';

/**
 * What the dead-letter handler needs of a work-item kind: its message, whether the message is still
 * its item's current one, and how the item ends (`D`: what that end needs, the platforms for a lookup).
 */
export interface DeadLetterKind<M extends WorkMessage, I, D = Deps> {
  words: Pick<WorkWords, 'item' | 'queue'>;
  parse: (body: string) => M | undefined;
  messageContext: (message: M) => LogAttributes;
  itemContext: (item: I) => LogAttributes;
  /** A message that is not a try of its item (a change of a placed order, say): the kind's alone. */
  divert?: (deps: D, message: M) => Promise<void> | undefined;
  /** The item, if this message is still its current one and it has not ended; undefined: stale. */
  current: (message: M) => Promise<I | undefined>;
  /** Puts the message back on the queue instead, while the platform may still recover: true when it did. */
  redrive?: (message: M, item: I) => Promise<boolean>;
  /** The tries of this message that failed (reached an outcome); the last failure's reason. */
  failedAttempts: (item: I) => number;
  lastError: (item: I) => string | null | undefined;
  /**
   * Receives that never reached an outcome (a throttled Lambda, a worker that died) are no attempts:
   * when set, an item none of whose tries failed is left to the reconciler, which re-sends it.
   */
  untriedToReconciler?: boolean;
  /** Ends the item (`dead`, or done if the platform turns out to have it). */
  end: (deps: D, item: I, reason: string) => Promise<EndOutcome>;
}

/**
 * A message SQS gave up on after `maxReceiveCount` receives. If it is still its item's current
 * message, the item ends (after any redrives the kind allows) with the last failure's reason: the
 * headline the on-call engineer or the reseller needs. A stale message changes nothing. Every line
 * names the item and the request that sent the message.
 */
export const runDeadLetter = async <M extends WorkMessage, I, D>(
  kind: DeadLetterKind<M, I, D>,
  deps: D,
  received: SQSRecord,
) => {
  const message = kind.parse(received.body);
  if (!message)
    return logger.error(`malformed message in the ${kind.words.queue} DLQ`, { messageId: received.messageId });
  await deadLetterParsed(kind, deps, message);
};

/** A dead message already parsed (at its queue's door, or by `runDeadLetter`): its item ended, or left. */
export const deadLetterParsed = async <M extends WorkMessage, I, D>(
  kind: DeadLetterKind<M, I, D>,
  deps: D,
  message: M,
) => {
  await withLogContext(
    kind.messageContext(message),
    () => kind.divert?.(deps, message) ?? endItem(kind, deps, message),
  );
};

const endItem = async <M extends WorkMessage, I, D>(kind: DeadLetterKind<M, I, D>, deps: D, message: M) => {
  const item = await kind.current(message);
  if (!item) return logger.info('stale DLQ message ignored');
  addLogContext(kind.itemContext(item));
  if (kind.redrive && (await kind.redrive(message, item))) return;
  const attempts = kind.failedAttempts(item);
  if (!attempts && kind.untriedToReconciler)
    return logger.warn('no attempt of this message reached an outcome; left to the reconciler');
  const reason = gaveUpReason(kind.lastError(item), attempts);
  const ended = await kind.end(deps, item, reason);
  // The platform could not say whether it has what the item makes: this message comes back, and asks again.
  if (ended === 'unknown') throw new Error(`the platform could not be asked whether the ${kind.words.item} was made`);
  logger.warn(`${kind.words.queue} DLQ message ended its ${kind.words.item}`, { ended, reason });
};
