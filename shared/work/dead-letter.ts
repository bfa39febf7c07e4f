import type { LogAttributes } from '@aws-lambda-powertools/logger/types';
import type { Deps } from '../aws/deps.js';
import { gaveUpReason } from '../core/config.js';
import { addLogContext, logger, withLogContext } from '../core/telemetry.js';
import type { EndOutcome, WorkMessage, WorkWords } from './runner.js';

/**
 * What the dead-letter handler needs of a work-item kind: whether its message (parsed at its DLQ's
 * door, `openDoor`, which sends each kind of message to its own end) is still its item's current one,
 * and how the item ends (`D`: what that end needs, the platforms for a lookup).
 */
export interface DeadLetterKind<M extends WorkMessage, I, D = Deps> {
  words: Pick<WorkWords, 'item' | 'queue'>;
  messageContext: (message: M) => LogAttributes;
  itemContext: (item: I) => LogAttributes;
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
 * A message SQS gave up on after `maxReceiveCount` receives, parsed at its DLQ's door. If it is still
 * its item's current message, the item ends (after any redrives the kind allows) with the last
 * failure's reason: the headline the on-call engineer or the reseller needs. A stale message changes
 * nothing. Every line names the item and the request that sent the message.
 */
export const deadLetterParsed = async <M extends WorkMessage, I, D>(
  kind: DeadLetterKind<M, I, D>,
  deps: D,
  message: M,
) => {
  await withLogContext(kind.messageContext(message), () => endItem(kind, deps, message));
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
