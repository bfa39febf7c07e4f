import { type Event, setEventEndpoints, storedEvent } from '../entities/event.js';
import { newDelivery, putNewDelivery } from '../entities/event-delivery.js';
import { endpointsOf, takesEvent, type WebhookEndpoint } from '../entities/webhook-endpoint.js';
import { type DeliveryMessage, sendDeliveries } from './delivery-queue.js';

/**
 * How long a container keeps an owner's endpoint list: a burst of one owner's events reads it once.
 * An endpoint created (or disabled) meanwhile is seen this much later at worst.
 */
export const ENDPOINTS_CACHE_MS = 10_000;

const cache = new Map<string, { endpoints: Promise<WebhookEndpoint[]>; expiresAt: number }>();

/** The owner's endpoints, from this container's cache while fresh (a failed read is not kept). */
const cachedEndpointsOf = (ownerId: string) => {
  const hit = cache.get(ownerId);
  if (hit && hit.expiresAt > Date.now()) return hit.endpoints;
  const endpoints = endpointsOf(ownerId);
  cache.set(ownerId, { endpoints, expiresAt: Date.now() + ENDPOINTS_CACHE_MS });
  endpoints.catch(() => cache.delete(ownerId));
  return endpoints;
};

/** For tests: forget every cached endpoint list. */
export const forgetEndpoints = () => cache.clear();

const messageOf = (event: Pick<Event, 'id'>, endpointId: string): DeliveryMessage => ({
  eventId: event.id,
  endpointId,
  attempts: 0,
});

/**
 * The deliveries of an event (CONTRACT.md §14): one item per enabled endpoint of its owner whose
 * `enabledEvents` match, and one message each on the delivery queue. Single-item writes (issue 44:
 * a transaction costs each item twice): first the event's `endpointIds`, on condition that it has
 * none yet, which decides once and for all whom the event goes to; then each delivery's Put (on
 * condition that there is none); then the messages. Called again for the same event (a redelivered
 * stream write, the call before having died anywhere on the way) the event's condition fails, and
 * the endpoints it names get their deliveries (those missing) and their messages again, which a
 * delivery already tried ignores. An owner without a matching endpoint costs one read (or none,
 * cached) and no write.
 */
export const scheduleDeliveries = async (event: Event): Promise<void> => {
  const receivers = (await cachedEndpointsOf(event.ownerId)).filter((endpoint) => takesEvent(endpoint, event.type));
  if (receivers.length === 0) return;
  const endpointIds = receivers.map((endpoint) => endpoint.id);
  if (!(await setEventEndpoints(event, endpointIds))) return resendScheduled(event);
  await putDeliveries(event, endpointIds);
};

/** Each delivery's Put (one already there stays as it is), then their messages. */
const putDeliveries = async (event: Pick<Event, 'id' | 'ownerId' | 'createdAt'>, endpointIds: string[]) => {
  await Promise.all(endpointIds.map((endpointId) => putNewDelivery(newDelivery(event, endpointId))));
  await sendDeliveries(endpointIds.map((endpointId) => messageOf(event, endpointId)));
};

/**
 * Scheduled before (or the event is gone): the endpoints the event names get their deliveries, in
 * case the call that set them died before writing them all, and their messages again, in case it
 * died before sending; the worker drops a message of a delivery that moved.
 */
const resendScheduled = async (event: Event) => {
  const stored = await storedEvent(event);
  if (!stored?.endpointIds.length) return;
  await putDeliveries(stored, stored.endpointIds);
};
