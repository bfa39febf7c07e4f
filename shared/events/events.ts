import { InvalidCursorError, ResourceMissingError } from '../core/errors.js';
import { isId, now } from '../core/ids.js';
import type { Owner } from '../domain/owner.js';
import {
  EVENT_TYPES,
  type Event,
  type EventListEntry,
  type EventSource,
  type EventType,
  eventId,
  eventListPlace,
  eventListSources,
  eventPut,
  eventsOfEntries,
  getEvent,
  readEventSource,
} from '../entities/event.js';
import { eventDeliveriesOf, eventDeliveryPut, newDelivery } from '../entities/event-delivery.js';
import { takesEvent, type WebhookEndpoint } from '../entities/webhook-endpoint.js';

export type { Event, EventType };

/** What happened, as the change that reports it knows it. */
export interface NewEvent {
  ownerId: string;
  type: EventType;
  /** The object as its GET answers it after the change (presented, without personal data). */
  object: Record<string, unknown>;
  /**
   * The event's id when it follows from the change (`eventId(type, createdAt, …parts)`): a change
   * written again (a redelivered message) writes its event at most once. A new one otherwise.
   */
  id?: string;
  createdAt?: string;
}

/**
 * An event and its deliveries, as the items of a TransactWriteItems (docs/design.md, "Events"):
 * the caller adds them to the transaction of the change they report, so neither is written without
 * the other. `endpoints` are the owner's (`endpointsOf`); a delivery is written for each enabled one
 * whose `enabledEvents` match. The event's Put is conditional on its id being new.
 */
export const eventWrites = (input: NewEvent, endpoints: WebhookEndpoint[]) => {
  const createdAt = input.createdAt ?? now();
  const id = input.id ?? eventId(input.type, createdAt);
  const receivers = endpoints.filter((endpoint) => takesEvent(endpoint, input.type)).map((endpoint) => endpoint.id);
  const event: Event = { ...input, id, createdAt, endpointIds: receivers, failingEndpointIds: [] };
  return [eventPut(event), ...receivers.map((endpointId) => eventDeliveryPut(newDelivery(event, endpointId)))];
};

export interface EventFilters {
  /** An exact type, or a group (`sync_job`) from `sync_job.*`. */
  type?: { exact: EventType } | { group: string };
  /** ISO 8601 bounds on `created`: at least `createdGte`, before `createdLt`. */
  createdGte?: string;
  createdLt?: string;
  /** `delivery_success=false`: events with a delivery that has failed and not succeeded since. */
  failing?: boolean;
}

const typesOf = (filter: EventFilters['type']): readonly EventType[] => {
  if (filter === undefined) return EVENT_TYPES;
  if ('exact' in filter) return [filter.exact];
  return EVENT_TYPES.filter((type) => type.startsWith(`${filter.group}.`));
};

/**
 * The partitions a filtered list reads (`eventListSources`): each shard of each type's list, merged
 * when there are several, with the list of the first layout; or the owner's failing events, few, kept
 * when of the types asked for.
 */
export const eventSources = (ownerId: string, filters: EventFilters): EventSource[] =>
  eventListSources(ownerId, typesOf(filters.type), filters.failing === true);

const matcher = (filters: EventFilters) => {
  const types = typesOf(filters.type);
  return (event: Event) => types.includes(event.type) && (!filters.failing || event.failingEndpointIds.length > 0);
};

/** The page's upper bound: the cursor's place or `created_lt`, whichever is lower. */
const upperBound = async (owner: Owner, startingAfter: string | undefined, filters: EventFilters) => {
  const lt = filters.createdLt;
  if (startingAfter === undefined) return lt;
  const cursor = isId('evt', startingAfter) ? await getEvent(owner.ownerId, startingAfter) : undefined;
  if (!cursor || !typesOf(filters.type).includes(cursor.type)) throw new InvalidCursorError();
  const place = eventListPlace(cursor);
  return lt !== undefined && lt < place ? lt : place;
};

/** Where the merge stands in one source: what it has read, and below which sort key the rest is. */
interface Cursor {
  source: EventSource;
  entries: EventListEntry[];
  /** Its unread entries sort below this (the lowest read), or the page's bound before any read. */
  below: string | undefined;
  /** Its last Query answered all it asked for: there may be more. */
  more: boolean;
}

/**
 * How many entries a source's first Query asks for: three times its share of the page (an owner's
 * events spread evenly over the shards by id, so a page takes about `(limit + 1) / sources` from
 * each), at least 2. A source that may hold more of the page is read again (`mergedPage`).
 */
const firstAsk = (limit: number, sources: number) =>
  Math.min(limit + 1, Math.max(2, Math.ceil((3 * (limit + 1)) / sources) + 1));

/**
 * The `limit + 1` newest entries of the sources below `before` (and from `atLeast`), merged by sort
 * key. A first Query per source asks for its share; then each source that has more and whose lowest
 * read entry still sorts above the page's last is read again for `limit + 1`, at most once more: after
 * that, either it has no more or `limit + 1` of its own entries are above the rest of it. Each Query
 * answers a bounded number of items, whatever the number of events.
 */
const mergedPage = async (
  sources: EventSource[],
  limit: number,
  before: string | undefined,
  atLeast: string | undefined,
): Promise<EventListEntry[]> => {
  const cursors: Cursor[] = sources.map((source) => ({ source, entries: [], below: before, more: true }));
  const read = (cursor: Cursor, ask: number) =>
    readEventSource(cursor.source, { before: cursor.below, atLeast, limit: ask }).then((entries) => {
      cursor.entries.push(...entries);
      cursor.more = entries.length === ask;
      cursor.below = entries.at(-1)?.sortKey ?? cursor.below;
    });
  const top = () =>
    cursors
      .flatMap((cursor) => cursor.entries)
      .sort((a, b) => (a.sortKey < b.sortKey ? 1 : -1))
      .slice(0, limit + 1);
  await Promise.all(cursors.map((cursor) => read(cursor, firstAsk(limit, cursors.length))));
  for (;;) {
    const page = top();
    const last = page.length > limit ? page[limit].sortKey : undefined;
    const short = cursors.filter((c) => c.more && (last === undefined || (c.below !== undefined && c.below > last)));
    if (short.length === 0) return page;
    await Promise.all(short.map((cursor) => read(cursor, limit + 1)));
  }
};

/**
 * A page of the owner's events, newest first (CONTRACT.md §8, §14): the partitions the filters read
 * (the 16 shards of each type's list, and the list of the first layout) merged by sort key
 * (`mergedPage`); the events of the table come with their Query, those of an index with one
 * BatchGet. A page costs the same at 1k or 100k events. Items sharing a timestamp sort by id.
 */
export const listEvents = async (
  owner: Owner,
  limit: number,
  startingAfter: string | undefined,
  filters: EventFilters,
): Promise<{ data: Event[]; hasMore: boolean }> => {
  const sources = eventSources(owner.ownerId, filters);
  const matches = matcher(filters);
  const atLeast = filters.createdGte;
  let before = await upperBound(owner, startingAfter, filters);
  const data: Event[] = [];
  for (;;) {
    if (before !== undefined && atLeast !== undefined && before <= atLeast) return { data, hasMore: false };
    const entries = await mergedPage(sources, limit, before, atLeast);
    const loaded = entries.slice(0, limit);
    // Only the failing list with a type filter drops loaded items; an empty page reads on.
    data.push(...(await eventsOfEntries(loaded)).filter(matches));
    const more = entries.length > limit;
    const last = loaded.at(-1);
    if (data.length > 0 || !more || !last) return { data, hasMore: more };
    before = last.sortKey;
  }
};

/** An event of the owner's with its deliveries, or 404 (another owner's event is missing too). */
export const findEvent = async ({ ownerId }: Owner, id: string) => {
  const event = isId('evt', id) ? await getEvent(ownerId, id) : undefined;
  if (!event) throw new ResourceMissingError('event', id);
  return { event, deliveries: await eventDeliveriesOf(event) };
};
