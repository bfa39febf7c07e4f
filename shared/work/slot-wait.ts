import type { MessageOutcome } from '../aws/batch.js';
import { logger } from '../core/telemetry.js';
import { MAX_DEFERRAL_SECONDS } from '../platforms/failure.js';
import type { Attempt, WorkKind } from './kind.js';
import type { WorkMessage } from './message.js';
import { sendWork } from './queue.js';

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
