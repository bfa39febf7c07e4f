import { InvalidCursorError, ResourceMissingError } from '../core/errors.js';
import { isId, newId, now } from '../core/ids.js';
import type { Owner } from '../domain/owner.js';
import { entrySortKey, eventLists, listSortKey } from '../dynamo/keys.js';
import type { Page } from '../dynamo/pagination.js';
import { batchGet, getItem, keyOf, queryIndex } from '../dynamo/table.js';
import { EVENT_TYPES, type Event, type EventType, eventFrom, eventKey, eventPut } from '../entities/event.js';
import { eventDeliveryFrom, eventDeliveryKey, eventDeliveryPut, newDelivery } from '../entities/event-delivery.js';
import { takesEvent, type WebhookEndpoint } from '../entities/webhook-endpoint.js';

export type { Event, EventType };

/** What happened, as the change that reports it knows it. */
export interface NewEvent {
  ownerId: string;
  type: EventType;
  /** The object as its GET answers it after the change (presented, without personal data). */
  object: Record<string, unknown>;
  /**
   * The event's id when it follows from the change (`derivedId('evt', …)`): a change written again
   * (a redelivered message) writes its event at most once. A new one otherwise.
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
  const id = input.id ?? newId('evt');
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
 * The partitions a filtered list reads (docs/design.md, "Events"): each type's list (GSI5), merged
 * when the filter takes several types; or the owner's failing events (GSI6), few, kept when of the
 * types asked for.
 */
export const eventSources = (ownerId: string, filters: EventFilters) =>
  filters.failing
    ? { index: 'storeStateLists' as const, partitions: [eventLists.failing(ownerId)] }
    : { index: 'stateLists' as const, partitions: typesOf(filters.type).map((t) => eventLists.ofType(ownerId, t)) };

const matcher = (filters: EventFilters) => {
  const types = typesOf(filters.type);
  return (event: Event) => types.includes(event.type) && (!filters.failing || event.failingEndpointIds.length > 0);
};

/** The page's upper bound: the cursor's place or `created_lt`, whichever is lower. */
const upperBound = async (owner: Owner, startingAfter: string | undefined, filters: EventFilters) => {
  const lt = filters.createdLt;
  if (startingAfter === undefined) return lt;
  const cursor = isId('evt', startingAfter) ? await getItem(eventKey(startingAfter), eventFrom) : undefined;
  if (cursor?.ownerId !== owner.ownerId || !typesOf(filters.type).includes(cursor.type)) throw new InvalidCursorError();
  const place = listSortKey(cursor.createdAt, cursor.id);
  return lt !== undefined && lt < place ? lt : place;
};

/**
 * A page of the owner's events, newest first (CONTRACT.md §8, §14): one Query per partition the
 * filters read (in parallel, at most 12, one per type), merged by sort key, then one BatchGet of the
 * page, so a page costs the same at 1k or 100k events. Items sharing a timestamp sort by id.
 */
export const listEvents = async (
  owner: Owner,
  limit: number,
  startingAfter: string | undefined,
  filters: EventFilters,
): Promise<Page<Event>> => {
  const { index, partitions } = eventSources(owner.ownerId, filters);
  const matches = matcher(filters);
  const atLeast = filters.createdGte;
  let before = await upperBound(owner, startingAfter, filters);
  const data: Event[] = [];
  for (;;) {
    if (before !== undefined && atLeast !== undefined && before <= atLeast) return { data, hasMore: false };
    const queries = partitions.map((partition) => queryIndex({ index, partition, before, atLeast, limit: limit + 1 }));
    const entries = (await Promise.all(queries))
      .flat()
      .sort((a, b) => (entrySortKey(index, a) < entrySortKey(index, b) ? 1 : -1))
      .slice(0, limit + 1);
    const loaded = entries.slice(0, limit);
    // Only the failing list with a type filter drops loaded items; an empty page reads on.
    data.push(...(await batchGet(loaded.map(keyOf), eventFrom)).filter(matches));
    const more = entries.length > limit;
    const last = loaded.at(-1);
    if (data.length > 0 || !more || !last) return { data, hasMore: more };
    before = entrySortKey(index, last);
  }
};

/** An event of the owner's with its deliveries, or 404 (another owner's event is missing too). */
export const findEvent = async ({ ownerId }: Owner, id: string) => {
  const event = isId('evt', id) ? await getItem(eventKey(id), eventFrom) : undefined;
  if (event?.ownerId !== ownerId) throw new ResourceMissingError('event', id);
  const deliveries = await batchGet(
    event.endpointIds.map((endpointId) => eventDeliveryKey(event.id, endpointId)),
    eventDeliveryFrom,
  );
  return { event, deliveries };
};
