import { type EventRef, eventFailingAdd, eventFailingDelete, leaveFailingList } from '../entities/event.js';
import {
  type DeliveryRef,
  deliveryTryDelivered,
  deliveryTryFailed,
  saveDeliveryTry,
  saveTryDelivered,
} from '../entities/event-delivery.js';

/**
 * What a delivery try does to the items (CONTRACT.md §14), for the delivery pipeline: a failed try
 * counts, sets the next one (or `failed` after the last) and puts the event in the failing list; a
 * delivered one takes it out again once no delivery of the event is failing. The writes are the
 * entity modules' (shared/entities/event-delivery.ts, event.ts).
 */

/**
 * Runs a delivery's transaction (the delivery's write first); false when the delivery had moved past
 * the try (another message's). Cancelled otherwise (the event gone meanwhile, say), it is a fault:
 * the message comes again and its claim finds no event.
 */
const ifStill = async (items: Parameters<typeof saveDeliveryTry>[0]) => {
  const written = await saveDeliveryTry(items);
  if (written === true) return true;
  if (written.failed[0]) return false;
  throw new Error('a delivery try’s transaction was cancelled');
};

/**
 * A try that failed: `pending` with its next try, or `failed` when there is none (`nextAttemptAt` null).
 * False when the delivery had moved past this try.
 */
export const deliveryFailed = async (
  { event, delivery }: { event: EventRef; delivery: DeliveryRef },
  responseStatus: number | null,
  nextAttemptAt: string | null,
) => ifStill([deliveryTryFailed(delivery, responseStatus, nextAttemptAt), eventFailingAdd(event, delivery.endpointId)]);

/**
 * A try that a 2xx answered: `delivered`; the event leaves the failing list when no delivery of it fails.
 * False when the delivery had moved past this try.
 *
 * A first try (no try failed before it) is one UpdateItem of the delivery alone (issue 44: one write
 * unit, where a transaction of two items costs four): the event is not in the failing list for this
 * endpoint, since only a failed try puts it there and a failed try counts (`attempts` > 0; `recover`
 * keeps the count). After a failed try the event's set must change with the delivery: a transaction.
 */
export const deliveryDelivered = async (
  { event, delivery }: { event: EventRef; delivery: DeliveryRef },
  responseStatus: number,
) => {
  if (delivery.attempts === 0) return saveTryDelivered(delivery, responseStatus);
  const written = await ifStill([
    deliveryTryDelivered(delivery, responseStatus),
    eventFailingDelete(event, delivery.endpointId),
  ]);
  if (written && delivery.attempts > 0) await leaveFailingList(event);
  return written;
};
