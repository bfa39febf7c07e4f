import { attributes } from '../dynamo/attributes.js';
import { eventKeys, eventLists, indexEntry, indexPartitionName, listSortKey } from '../dynamo/keys.js';
import type { Item } from '../dynamo/table.js';
import { type Event, eventExpiry } from './event.js';

/**
 * An event's delivery to one endpoint (CONTRACT.md §14), beside its event (`EVT#<id>`/`DLV#<endpoint>`),
 * written with it, a work item of the delivery pipeline. A `failed` delivery is in its endpoint's
 * list of failed deliveries (GSI7, sorted as its event), which `recover` reads from `since` on.
 */

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface EventDelivery {
  eventId: string;
  endpointId: string;
  ownerId: string;
  /** The event's, so the failed list sorts by event. */
  eventCreatedAt: string;
  status: DeliveryStatus;
  attempts: number;
  lastResponseStatus: number | null;
  nextAttemptAt: string | null;
}

export const eventDeliveryKey = (eventId: string, endpointId: string) => eventKeys.delivery(eventId, endpointId);

/** A new delivery of an event to an endpoint: pending, its first try due at once. */
export const newDelivery = (event: Pick<Event, 'id' | 'ownerId' | 'createdAt'>, endpointId: string): EventDelivery => ({
  eventId: event.id,
  endpointId,
  ownerId: event.ownerId,
  eventCreatedAt: event.createdAt,
  status: 'pending',
  attempts: 0,
  lastResponseStatus: null,
  nextAttemptAt: event.createdAt,
});

/** The entry of a failed delivery in its endpoint's failed list; a delivery in any other state has none. */
export const failedDeliveryEntry = (delivery: Pick<EventDelivery, 'endpointId' | 'eventId' | 'eventCreatedAt'>) =>
  indexEntry(
    'resourceLists',
    eventLists.endpointFailed(delivery.endpointId),
    listSortKey(delivery.eventCreatedAt, delivery.eventId),
  );
export const failedDeliveryAttribute = indexPartitionName('resourceLists');

export const eventDeliveryItem = (delivery: EventDelivery): Item => ({
  ...eventDeliveryKey(delivery.eventId, delivery.endpointId),
  ...(delivery.status === 'failed' ? failedDeliveryEntry(delivery) : {}),
  eventId: delivery.eventId,
  endpointId: delivery.endpointId,
  ownerId: delivery.ownerId,
  eventCreatedAt: delivery.eventCreatedAt,
  status: delivery.status,
  attempts: delivery.attempts,
  lastResponseStatus: delivery.lastResponseStatus,
  nextAttemptAt: delivery.nextAttemptAt,
  expiresAt: eventExpiry(delivery.eventCreatedAt),
});

export const eventDeliveryFrom = (item: Item): EventDelivery => {
  const read = attributes(item, 'event delivery');
  return {
    eventId: read.string('eventId'),
    endpointId: read.string('endpointId'),
    ownerId: read.string('ownerId'),
    eventCreatedAt: read.string('eventCreatedAt'),
    status: read.oneOf('status', DELIVERY_STATUSES),
    attempts: read.number('attempts'),
    lastResponseStatus: item.lastResponseStatus == null ? null : read.number('lastResponseStatus'),
    nextAttemptAt: read.stringOrNull('nextAttemptAt'),
  };
};
