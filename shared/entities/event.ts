import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { type IdPrefix, idSeed, placedId, placeOfId } from '../core/ids.js';
import {
  entrySortKey,
  eventKeys,
  eventLists,
  indexEntry,
  indexPartitionName,
  type Key,
  listSortKey,
} from '../dynamo/keys.js';
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
  updateIf,
} from '../dynamo/table.js';

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
  'sync_job.late',
  'fulfillment.delivered',
  'fulfillment.dead',
  'order.unrouted',
  'store.disconnected',
  'store.webhooks_failing',
  'sync_job.units_removed',
  'sync_job.return_opened',
  'sync_job.return_closed',
  'sync_job.return_failed',
  'sync_job.refunded_by_source',
  // CONTRACT.md §16.2: last, as ids spell a type by its place here.
  'fulfillment.unscanned',
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
  /** Stored at the key of the first layout (`EVT#<id>`/`EVT`, until its TTL): read, updated, never written anew. */
  legacy?: true;
}

const EVENT_PREFIX: IdPrefix = 'evt';

/**
 * A new event's id (shared/events/README.md, "Events and webhook endpoints"): it spells the event's time and
 * type, so the id and the caller's owner give the event's key (`eventKeyOfId`). Derived from `parts`
 * when given (the same change, the same id), random otherwise.
 */
export const eventId = (type: EventType, createdAt: string, ...parts: string[]) =>
  placedId(
    EVENT_PREFIX,
    Date.parse(createdAt),
    EVENT_TYPES.indexOf(type),
    parts.length ? idSeed(type, ...parts) : idSeed(),
  );

/** The time and type an event id spells; undefined for an id of the first layout (or not an event's). */
export const eventPlaceOf = (id: unknown): { type: EventType; createdAt: string } | undefined => {
  const place = placeOfId(EVENT_PREFIX, id);
  const type = place && EVENT_TYPES[place.kind];
  return type ? { type, createdAt: new Date(place.ms).toISOString() } : undefined;
};

/**
 * Where an event is: in its list, its type's shard of its owner's events at `<created>#<id>`
 * (shared/events/README.md, "Events and webhook endpoints"), or at the first layout's key when read from there.
 */
export const eventKey = (event: Pick<Event, 'id' | 'ownerId' | 'type' | 'createdAt' | 'legacy'>): Key =>
  event.legacy
    ? eventKeys.legacyEvent(event.id)
    : eventKeys.event(event.ownerId, event.type, event.createdAt, event.id);

/** The key an owner's event id names, from the id alone (no read); undefined for any other id. */
export const eventKeyOfId = (ownerId: string, id: string): Key | undefined => {
  const place = eventPlaceOf(id);
  return place && eventKey({ id, ownerId, ...place });
};

/** Epoch seconds when DynamoDB's TTL deletes an event (and its deliveries). */
export const eventExpiry = (createdAt: string) => Math.floor(Date.parse(createdAt) / 1000) + EVENT_RETENTION_SECONDS;

/**
 * The entry of an event with a failed delivery in the failing list (GSI6, sorted as every list),
 * set beside the endpoint's id in `failingEndpointIds`: the only index entry an event has, off the
 * happy path (its own key is its place in its type's list).
 */
export const failingEventEntry = (event: Pick<Event, 'id' | 'ownerId' | 'createdAt'>) =>
  indexEntry('storeStateLists', eventLists.failing(event.ownerId), listSortKey(event.createdAt, event.id));
/** The attribute to remove when no delivery of the event is failing any more. */
export const failingEventAttribute = indexPartitionName('storeStateLists');

/** What an event's item holds under the record's names, as they stand. */
const head = recordShape<Pick<Event, 'id' | 'ownerId' | 'type' | 'createdAt'>>()('event', {
  strings: ['id', 'ownerId', 'createdAt'],
  oneOf: { type: EVENT_TYPES },
});

/**
 * The event's item, at its key (`eventKey`): no index entry but the failing list's, so its Put is
 * one write unit (under 1 KB, the object deflated).
 */
export const eventItem = (event: Event): Item => ({
  ...eventKey(event),
  ...(event.failingEndpointIds.length ? failingEventEntry(event) : {}),
  ...head.fields(event),
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

export const eventFrom = (item: Item): Event => ({
  ...head.from(item),
  object: objectOf(item.object),
  endpointIds: stringList(item.endpointIds),
  failingEndpointIds: stringList(item.failingEndpointIds).sort(),
  ...(item.SK === eventKeys.legacyEvent('').SK ? { legacy: true as const } : {}),
});

/**
 * The event's Put, as a transaction item: on condition that its id is new. Its id must spell its time
 * and type (`eventId`), or `GET /v1/events/{id}` would look for it elsewhere.
 */
export const eventPut = (event: Event) => {
  const place = eventPlaceOf(event.id);
  if (event.legacy || place?.type !== event.type || place.createdAt !== event.createdAt)
    throw new Error(`event ${event.id}: its id does not spell its type and time (eventId)`);
  return { Put: { TableName: TABLE(), Item: eventItem(event), ConditionExpression: 'attribute_not_exists(PK)' } };
};

/**
 * Writes the event alone (the change stream's recorder: one PutItem), on condition that its id is new;
 * the event already there when it was not (a stream write handed over again).
 */
export const putEvent = async (event: Event): Promise<Event> => {
  const written = await putAlone(eventPut(event));
  if (written === true) return event;
  const met = written.met ? eventFrom(written.met) : await getItem(eventKey(event), eventFrom, true);
  if (!met) throw new Error(`event ${event.id} was refused and is not there`);
  return met;
};

/** What names an event's item (`eventKey`): its id, owner, type and time, and its layout. */
export type EventRef = Pick<Event, 'id' | 'ownerId' | 'type' | 'createdAt' | 'legacy'>;

/** Sets the endpoints an event is delivered to, as a transaction item: on condition that it has none yet. */
export const eventEndpointsSet = (event: EventRef, endpointIds: string[]) => ({
  Update: {
    TableName: TABLE(),
    Key: eventKey(event),
    UpdateExpression: 'SET #ids = :ids',
    ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(#ids)',
    ExpressionAttributeNames: { '#ids': 'endpointIds' },
    ExpressionAttributeValues: { ':ids': endpointIds },
  },
});

/**
 * Decides whom the event goes to (`eventEndpointsSet` alone, no transaction: issue 44): false when it
 * was decided before (or the event is gone).
 */
export const setEventEndpoints = async (event: EventRef, endpointIds: string[]) => {
  const { TableName: _table, ...parts } = eventEndpointsSet(event, endpointIds).Update;
  return !((await updateIf(parts)) instanceof ConditionFailed);
};

/** The event as stored now (read consistently), at its key; undefined when it is gone. */
export const storedEvent = (event: EventRef) => getItem(eventKey(event), eventFrom, true);

/**
 * An endpoint's delivery of the event failed: it is among the failing ones, the event in the failing
 * list. On condition that the event is there: an update of a key that names no item would write one,
 * and in a list partition (the event's key) a list would read it.
 */
export const eventFailingAdd = (event: EventRef, endpointId: string) => {
  const entry = Object.entries(failingEventEntry(event));
  return {
    Update: {
      TableName: TABLE(),
      Key: eventKey(event),
      UpdateExpression: `ADD #failing :endpoint SET ${entry.map((_, i) => `#e${i} = :e${i}`).join(', ')}`,
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: {
        '#failing': 'failingEndpointIds',
        ...Object.fromEntries(entry.map(([name], i) => [`#e${i}`, name])),
      },
      ExpressionAttributeValues: {
        ':endpoint': new Set([endpointId]),
        ...Object.fromEntries(entry.map(([, value], i) => [`:e${i}`, value])),
      },
    },
  };
};

/** An endpoint's delivery of the event succeeded: it is no longer among the failing ones (if the event is there). */
export const eventFailingDelete = (event: EventRef, endpointId: string) => ({
  Update: {
    TableName: TABLE(),
    Key: eventKey(event),
    UpdateExpression: 'DELETE #failing :endpoint',
    ConditionExpression: 'attribute_exists(PK)',
    ExpressionAttributeNames: { '#failing': 'failingEndpointIds' },
    ExpressionAttributeValues: { ':endpoint': new Set([endpointId]) },
  },
});

/**
 * Takes the event out of the failing list when no delivery of it is failing: DynamoDB drops an
 * emptied set, so only then (a failure meanwhile keeps it).
 */
export const leaveFailingList = async (event: EventRef) => {
  await updateIf({
    Key: eventKey(event),
    UpdateExpression: 'REMOVE #entry',
    ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(#failing)',
    ExpressionAttributeNames: { '#entry': failingEventAttribute, '#failing': 'failingEndpointIds' },
  });
};

/**
 * An owner's event by id, with one GetItem: at the key its id spells; an id of the first layout (or
 * one spelling a key where nothing is) is read at the first layout's key too, until those expire
 * (shared/events/README.md, "Events and webhook endpoints"). Undefined when neither holds it.
 */
export const getEvent = async (ownerId: string, id: string, consistent = false): Promise<Event | undefined> => {
  const key = eventKeyOfId(ownerId, id);
  const placed = key && (await getItem(key, eventFrom, consistent));
  if (placed) return placed;
  const legacy = await getItem(eventKeys.legacyEvent(id), eventFrom, consistent);
  return legacy?.ownerId === ownerId ? legacy : undefined;
};

/** One partition an event list reads: of the table (the events themselves) or of an index (their keys). */
export interface EventSource {
  index: 'table' | 'stateLists' | 'storeStateLists';
  partition: string;
}

/**
 * The types that had events in the first layout (the types of 2026-11-27, afefa1b): only their GSI5
 * lists can hold one. A type added since never had such a list, and a page of it does not Query one
 * (issue 41: 7 of an unfiltered page's Queries).
 */
const FIRST_LAYOUT_TYPES: ReadonlySet<EventType> = new Set<EventType>([
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
]);

/**
 * The partitions a list of an owner's events of `types` reads (shared/events/README.md, "Events and
 * webhook endpoints"): each shard of each type's list, the events themselves (the table), with GSI5's
 * list of that type's events of the first layout until they expire (`FIRST_LAYOUT_TYPES`); or, for
 * the `failing` ones, the owner's failing list (GSI6).
 */
export const eventListSources = (ownerId: string, types: readonly EventType[], failing: boolean): EventSource[] =>
  failing
    ? [{ index: 'storeStateLists', partition: eventLists.failing(ownerId) }]
    : types.flatMap((type) => [
        ...eventLists
          .ofType(ownerId, type)
          .all()
          .map((partition) => ({ index: 'table' as const, partition })),
        ...(FIRST_LAYOUT_TYPES.has(type)
          ? [{ index: 'stateLists' as const, partition: eventLists.legacyOfType(ownerId, type) }]
          : []),
      ]);

/** Where an event sorts in every list it is in (`<created>#<id>`): the bound of a page after it. */
export const eventListPlace = (event: Pick<Event, 'createdAt' | 'id'>) => listSortKey(event.createdAt, event.id);

/** One entry a list read: an event (of the table) or the key of one (of an index), at its place. */
export interface EventListEntry {
  source: EventSource;
  item: Item;
  sortKey: string;
}

/** Up to `limit` entries of one source, newest first, below `before` and from `atLeast` (one Query). */
export const readEventSource = async (
  source: EventSource,
  range: { before: string | undefined; atLeast: string | undefined; limit: number },
): Promise<EventListEntry[]> =>
  (await queryIndex({ ...source, ...range })).map((item) => ({
    source,
    item,
    sortKey: entrySortKey(source.index, item),
  }));

/** The entries' events, in their order: those of the table as read, an index's loaded with one BatchGet. */
export const eventsOfEntries = async (entries: EventListEntry[]): Promise<Event[]> => {
  const keyed = entries.filter((entry) => entry.source.index !== 'table').map((entry) => keyOf(entry.item));
  const loaded = new Map((await batchGet(keyed, (item) => item)).map((item) => [`${item.PK}|${item.SK}`, item]));
  return entries.flatMap((entry) => {
    const item = entry.source.index === 'table' ? entry.item : loaded.get(`${entry.item.PK}|${entry.item.SK}`);
    return item ? [eventFrom(item)] : [];
  });
};
