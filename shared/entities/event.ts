import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { attributes } from '../dynamo/attributes.js';
import { eventKeys, eventLists, indexEntry, indexPartitionName, listSortKey } from '../dynamo/keys.js';
import { getItem, type Item, putAlone, TABLE, updateIf } from '../dynamo/table.js';

/**
 * The event entity (CONTRACT.md §14): what happened, with the object as its GET answered at that
 * moment. Written once, with the change it reports (shared/events/events.ts), and gone through the
 * table's TTL 30 days later. The only place that knows an event's attributes and writes them.
 */

export const EVENT_TYPES = [
  'sync_job.completed',
  'sync_job.failed',
  'sync_job.dead',
  'sync_job.cancelled',
  'sync_job.held',
  'sync_job.released',
  'sync_job.attention_required',
  'fulfillment.delivered',
  'fulfillment.dead',
  'order.unrouted',
  'store.disconnected',
  'store.webhooks_failing',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The part of a type before its dot (`sync_job`), which `type=sync_job.*` selects. */
export const EVENT_GROUPS = [...new Set(EVENT_TYPES.map((type) => type.split('.')[0]))];

export const EVENT_RETENTION_SECONDS = 30 * 86_400;

export interface Event {
  id: string;
  ownerId: string;
  type: EventType;
  /** ISO 8601 with milliseconds: the list's order. */
  createdAt: string;
  /** The object as its GET answered when the event happened; never personal data (§13). */
  object: Record<string, unknown>;
  /** The endpoints it is delivered to, each with a delivery item beside it. */
  endpointIds: string[];
  /** Endpoints whose delivery has failed and not succeeded since: the event is in the failing list. */
  failingEndpointIds: string[];
}

export const eventKey = (id: string) => eventKeys.event(id);

/** Epoch seconds when DynamoDB's TTL deletes an event (and its deliveries). */
export const eventExpiry = (createdAt: string) => Math.floor(Date.parse(createdAt) / 1000) + EVENT_RETENTION_SECONDS;

/**
 * Its entry in its type's list (GSI5), the only one the happy path pays for; the unfiltered list and
 * `type=<group>.*` merge the types' lists. The failing list (GSI6) is entered on a failed delivery
 * (`failingEventEntry`), off the happy path.
 */
export const eventIndexEntries = (event: Pick<Event, 'id' | 'ownerId' | 'type' | 'createdAt'>) =>
  indexEntry('stateLists', eventLists.ofType(event.ownerId, event.type), listSortKey(event.createdAt, event.id));

/** The entry of an event with a failed delivery, set beside the endpoint's id in `failingEndpointIds`. */
export const failingEventEntry = (ownerId: string) => indexEntry('storeStateLists', eventLists.failing(ownerId));
/** The attribute to remove when no delivery of the event is failing any more. */
export const failingEventAttribute = indexPartitionName('storeStateLists');

export const eventItem = (event: Event): Item => ({
  ...eventKey(event.id),
  ...eventIndexEntries(event),
  ...(event.failingEndpointIds.length ? failingEventEntry(event.ownerId) : {}),
  id: event.id,
  ownerId: event.ownerId,
  type: event.type,
  createdAt: event.createdAt,
  // Its JSON, deflated: a job's object is about 1.5 KB of JSON, half a kilobyte deflated, so the event
  // stays within the 1 KB of one write unit, for its Put and for each update of its deliveries' state.
  object: deflateRawSync(JSON.stringify(event.object)),
  ...(event.endpointIds.length ? { endpointIds: event.endpointIds } : {}),
  ...(event.failingEndpointIds.length ? { failingEndpointIds: new Set(event.failingEndpointIds) } : {}),
  expiresAt: eventExpiry(event.createdAt),
});

/** The stored object: deflated JSON (JSON text in items of the first version). */
const objectOf = (stored: unknown): Record<string, unknown> => {
  if (stored instanceof Uint8Array) return JSON.parse(inflateRawSync(stored).toString('utf8'));
  if (typeof stored === 'string') return JSON.parse(stored);
  throw new Error('event: its object is missing');
};

const stringList = (value: unknown) =>
  value instanceof Set ? [...value].map(String) : Array.isArray(value) ? value.map(String) : [];

export const eventFrom = (item: Item): Event => {
  const read = attributes(item, 'event');
  return {
    id: read.string('id'),
    ownerId: read.string('ownerId'),
    type: read.oneOf('type', EVENT_TYPES),
    createdAt: read.string('createdAt'),
    object: objectOf(item.object),
    endpointIds: stringList(item.endpointIds),
    failingEndpointIds: stringList(item.failingEndpointIds).sort(),
  };
};

/** The event's Put, as a transaction item: on condition that its id is new. */
export const eventPut = (event: Event) => ({
  Put: { TableName: TABLE(), Item: eventItem(event), ConditionExpression: 'attribute_not_exists(PK)' },
});

/**
 * Writes the event alone (the change stream's recorder: one PutItem), on condition that its id is new;
 * the event already there when it was not (a stream record handed over again).
 */
export const putEvent = async (event: Event): Promise<Event> => {
  const written = await putAlone(eventPut(event));
  if (written === true) return event;
  const met = written.met ? eventFrom(written.met) : await getItem(eventKey(event.id), eventFrom, true);
  if (!met) throw new Error(`event ${event.id} was refused and is not there`);
  return met;
};

/** Sets the endpoints an event is delivered to, as a transaction item: on condition that it has none yet. */
export const eventEndpointsSet = (eventId: string, endpointIds: string[]) => ({
  Update: {
    TableName: TABLE(),
    Key: eventKey(eventId),
    UpdateExpression: 'SET #ids = :ids',
    ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(#ids)',
    ExpressionAttributeNames: { '#ids': 'endpointIds' },
    ExpressionAttributeValues: { ':ids': endpointIds },
  },
});

/** An endpoint's delivery of the event failed: it is among the failing ones, the event in the failing list. */
export const eventFailingAdd = (delivery: { eventId: string; endpointId: string; ownerId: string }) => {
  const [[entryName, entryValue]] = Object.entries(failingEventEntry(delivery.ownerId));
  return {
    Update: {
      TableName: TABLE(),
      Key: eventKey(delivery.eventId),
      UpdateExpression: 'ADD #failing :endpoint SET #entry = :entry',
      ExpressionAttributeNames: { '#failing': 'failingEndpointIds', '#entry': entryName },
      ExpressionAttributeValues: { ':endpoint': new Set([delivery.endpointId]), ':entry': entryValue },
    },
  };
};

/** An endpoint's delivery of the event succeeded: it is no longer among the failing ones. */
export const eventFailingDelete = (delivery: { eventId: string; endpointId: string }) => ({
  Update: {
    TableName: TABLE(),
    Key: eventKey(delivery.eventId),
    UpdateExpression: 'DELETE #failing :endpoint',
    ExpressionAttributeNames: { '#failing': 'failingEndpointIds' },
    ExpressionAttributeValues: { ':endpoint': new Set([delivery.endpointId]) },
  },
});

/**
 * Takes the event out of the failing list when no delivery of it is failing: DynamoDB drops an
 * emptied set, so only then (a failure meanwhile keeps it).
 */
export const leaveFailingList = async (eventId: string) => {
  await updateIf({
    Key: eventKey(eventId),
    UpdateExpression: 'REMOVE #entry',
    ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(#failing)',
    ExpressionAttributeNames: { '#entry': failingEventAttribute, '#failing': 'failingEndpointIds' },
  });
};
