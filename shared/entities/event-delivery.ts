import { eventKeys, eventLists, indexEntry, indexPartitionName, listSortKey } from '../dynamo/keys.js';
import {
  batchGet,
  ConditionFailed,
  getItem,
  type Item,
  keyOf,
  putAlone,
  queryIndex,
  recordShape,
  TABLE,
  transactIf,
  updateIf,
  updateSet,
} from '../dynamo/table.js';
import { type Event, eventExpiry } from './event.js';

/**
 * An event's delivery to one endpoint (CONTRACT.md §14), beside its event (`EVT#<id>`/`DLV#<endpoint>`),
 * written with it, a work item of the delivery pipeline. A `failed` delivery is in its endpoint's
 * list of failed deliveries (GSI7, sorted as its event), which `recover` reads from `since` on. The
 * only place that knows a delivery's attributes and writes them.
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

const shape = recordShape<EventDelivery>()('event delivery', {
  strings: ['eventId', 'endpointId', 'ownerId', 'eventCreatedAt'],
  oneOf: { status: DELIVERY_STATUSES },
  numbers: ['attempts'],
  nullableNumbers: ['lastResponseStatus'],
  nullableStrings: ['nextAttemptAt'],
});

export const eventDeliveryItem = (delivery: EventDelivery): Item => ({
  ...eventDeliveryKey(delivery.eventId, delivery.endpointId),
  ...(delivery.status === 'failed' ? failedDeliveryEntry(delivery) : {}),
  ...shape.fields(delivery),
  expiresAt: eventExpiry(delivery.eventCreatedAt),
});

export const eventDeliveryFrom = shape.from;

/** A new delivery's Put, as a transaction item: on condition that there is none yet. */
export const eventDeliveryPut = (delivery: EventDelivery) => ({
  Put: { TableName: TABLE(), Item: eventDeliveryItem(delivery), ConditionExpression: 'attribute_not_exists(PK)' },
});

/** An event's deliveries, one per endpoint it is delivered to (one BatchGet): those there, in that order. */
export const eventDeliveriesOf = (event: Pick<Event, 'id' | 'endpointIds'>) =>
  batchGet(
    event.endpointIds.map((endpointId) => eventDeliveryKey(event.id, endpointId)),
    eventDeliveryFrom,
  );

/** Where a page of an endpoint's failed list ends: the next one starts after it. */
export type FailedListPlace = Item;

/**
 * A page of an endpoint's failed list (GSI7) of events created from `since`, newest first: the
 * deliveries still `failed` when read (one Query, one BatchGet), and where the next page starts.
 */
export const failedDeliveriesPage = async (
  endpointId: string,
  since: string,
  limit: number,
  after?: FailedListPlace,
): Promise<{ failed: EventDelivery[]; next: FailedListPlace | undefined }> => {
  const entries = await queryIndex({
    index: 'resourceLists',
    partition: eventLists.endpointFailed(endpointId),
    atLeast: since,
    limit,
    exclusiveStartKey: after,
  });
  const deliveries = await batchGet(entries.map(keyOf), eventDeliveryFrom);
  return {
    failed: deliveries.filter((delivery) => delivery.status === 'failed'),
    next: entries.length === limit ? entries.at(-1) : undefined,
  };
};

/** A new delivery, alone (no transaction: issue 44); one already there stays as it is. */
export const putNewDelivery = (delivery: EventDelivery) => putAlone(eventDeliveryPut(delivery));

/** The delivery of an event to an endpoint, read consistently; undefined when there is none. */
export const findDelivery = (eventId: string, endpointId: string) =>
  getItem(eventDeliveryKey(eventId, endpointId), eventDeliveryFrom, true);

/** The delivery a try was made of: which, and how many tries it had then. */
export type DeliveryRef = Pick<EventDelivery, 'eventId' | 'endpointId' | 'ownerId' | 'eventCreatedAt' | 'attempts'>;

/** Names and values of an UpdateItem's SET, each through a placeholder. */
const assignments = (set: Record<string, unknown>) => {
  const entries = Object.entries(set);
  return {
    expression: entries.map((_, i) => `#a${i} = :a${i}`).join(', '),
    names: Object.fromEntries(entries.map(([name], i) => [`#a${i}`, name])),
    values: Object.fromEntries(entries.map(([, value], i) => [`:a${i}`, value])),
  };
};

/** The condition that the delivery is still at the try that was made: a duplicate message's write fails. */
const stillAt = (delivery: DeliveryRef) => ({
  ConditionExpression: '#attempts = :was',
  names: { '#attempts': 'attempts' },
  values: { ':was': delivery.attempts },
});

/**
 * A try that failed, as a transaction item: `pending` with its next try, or `failed` (in its
 * endpoint's failed list) when there is none (`nextAttemptAt` null); on condition that the delivery
 * is still at this try.
 */
export const deliveryTryFailed = (
  delivery: DeliveryRef,
  responseStatus: number | null,
  nextAttemptAt: string | null,
) => {
  const failed = nextAttemptAt === null;
  const set = assignments({
    status: failed ? 'failed' : 'pending',
    attempts: delivery.attempts + 1,
    lastResponseStatus: responseStatus,
    nextAttemptAt,
    ...(failed ? failedDeliveryEntry(delivery) : {}),
  });
  const at = stillAt(delivery);
  return {
    Update: {
      TableName: TABLE(),
      Key: eventDeliveryKey(delivery.eventId, delivery.endpointId),
      UpdateExpression: `SET ${set.expression}`,
      ConditionExpression: at.ConditionExpression,
      ExpressionAttributeNames: { ...set.names, ...at.names },
      ExpressionAttributeValues: { ...set.values, ...at.values },
    },
  };
};

/** A try that a 2xx answered, as a transaction item: `delivered`, if the delivery is still at this try. */
export const deliveryTryDelivered = (delivery: DeliveryRef, responseStatus: number) => {
  const set = assignments({ status: 'delivered', attempts: delivery.attempts + 1, lastResponseStatus: responseStatus });
  const at = stillAt(delivery);
  return {
    Update: {
      TableName: TABLE(),
      Key: eventDeliveryKey(delivery.eventId, delivery.endpointId),
      UpdateExpression: `SET ${set.expression}, #next = :null REMOVE #failedEntry`,
      ConditionExpression: at.ConditionExpression,
      ExpressionAttributeNames: {
        ...set.names,
        ...at.names,
        '#next': 'nextAttemptAt',
        '#failedEntry': failedDeliveryAttribute,
      },
      ExpressionAttributeValues: { ...set.values, ...at.values, ':null': null },
    },
  };
};

/**
 * A delivery try's writes as one transaction (the delivery's write first, with its event's):
 * true, or which writes' conditions failed.
 */
export const saveDeliveryTry = (writes: Parameters<typeof transactIf>[0]) => transactIf(writes);

/** A try that a 2xx answered, written alone (`deliveryTryDelivered`): false when the delivery had moved past it. */
export const saveTryDelivered = async (delivery: DeliveryRef, responseStatus: number) => {
  const { TableName: _table, ...parts } = deliveryTryDelivered(delivery, responseStatus).Update;
  return !((await updateIf(parts)) instanceof ConditionFailed);
};

/**
 * A failed delivery made pending again, due at `at` and out of its endpoint's failed list; false
 * when it is no longer failed (it moved meanwhile: a send that succeeded).
 */
export const requeueFailedDelivery = async (delivery: Pick<EventDelivery, 'eventId' | 'endpointId'>, at: string) => {
  const update = updateSet({ status: 'pending', nextAttemptAt: at }, [failedDeliveryAttribute]);
  const written = await updateIf({
    Key: eventDeliveryKey(delivery.eventId, delivery.endpointId),
    ...update,
    ConditionExpression: '#st = :failed',
    ExpressionAttributeNames: { ...update.ExpressionAttributeNames, '#st': 'status' },
    ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':failed': 'failed' },
  });
  return !(written instanceof ConditionFailed);
};
