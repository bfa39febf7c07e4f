import type { DynamoDBRecord } from 'aws-lambda';
import { logger } from '../core/telemetry.js';
import { imagesOf, type StreamImage } from '../dynamo/stream.js';
import { type Event, putEvent } from '../entities/event.js';
import { type Change, changesOf, type Subject } from './changes.js';
import { scheduleDeliveries } from './schedule-deliveries.js';

/**
 * The events of the table's change stream (CONTRACT.md §14; docs/design.md, "Events and webhook
 * endpoints"): each write of an item that reports a change becomes its event, then the event's
 * deliveries. The stream hands over only writes that happened, and hands each over until its batch
 * succeeds: no event without its change, none lost. A stream write handed over again writes nothing new
 * (the event's id follows from the write, its Put is conditional) and schedules what the first run
 * may not have reached.
 */

/** The object as its GET answers it (the handler's presenters: features do not import shared/http). */
export type Presenter = (subject: Subject) => Promise<Record<string, unknown>>;

/** One change as its event: written (or found, when written before), then its deliveries scheduled. */
export const recordChange = async (change: Change, present: Presenter): Promise<Event> => {
  const event = await putEvent({
    id: change.id,
    ownerId: change.ownerId,
    type: change.type,
    createdAt: change.createdAt,
    object: await present(change.subject),
    endpointIds: [],
    failingEndpointIds: [],
  });
  await scheduleDeliveries(event);
  return event;
};

/**
 * The changes of a write, or none when an image cannot be read as its item (a corrupt item): logged
 * and left, since a stream write that fails for ever would hold its shard's every later one (24 hours).
 */
const readableChanges = (before: StreamImage | undefined, after: StreamImage | undefined) => {
  try {
    return changesOf(before, after);
  } catch (error) {
    logger.error('stream write not readable; no event recorded for it', {
      key: { PK: after?.PK ?? before?.PK, SK: after?.SK ?? before?.SK },
      error: (error as Error).message,
    });
    return [];
  }
};

/** Every event one write reports (`before`/`after`: the item's images), recorded in turn. */
export const recordWrite = async (
  before: StreamImage | undefined,
  after: StreamImage | undefined,
  present: Presenter,
) => {
  const events: Event[] = [];
  for (const change of readableChanges(before, after)) events.push(await recordChange(change, present));
  return events;
};

/** A stream write's events (shared/dynamo/stream.ts reads its images). */
export const recordStreamWrite = (written: DynamoDBRecord, present: Presenter) => {
  const { before, after } = imagesOf(written);
  return recordWrite(before, after, present);
};
