import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../dynamo/client.js';
import { isConditionFailure, TABLE, transactWrite } from '../dynamo/table.js';
import { eventKey, failingEventAttribute, failingEventEntry } from '../entities/event.js';
import {
  type EventDelivery,
  eventDeliveryKey,
  failedDeliveryAttribute,
  failedDeliveryEntry,
} from '../entities/event-delivery.js';

/**
 * What a delivery try does to the items (CONTRACT.md §14), for the delivery pipeline: a failed try
 * counts, sets the next one (or `failed` after the last) and puts the event in the failing list; a
 * delivered one takes it out again once no delivery of the event is failing.
 */

type DeliveryRef = Pick<EventDelivery, 'eventId' | 'endpointId' | 'ownerId' | 'eventCreatedAt' | 'attempts'>;

/** Names and values of an UpdateItem's SET, each through a placeholder. */
const assignments = (set: Record<string, unknown>) => {
  const entries = Object.entries(set);
  return {
    expression: entries.map((_, i) => `#a${i} = :a${i}`).join(', '),
    names: Object.fromEntries(entries.map(([name], i) => [`#a${i}`, name])),
    values: Object.fromEntries(entries.map(([, value], i) => [`:a${i}`, value])),
  };
};

/** Whether a transaction was cancelled by its first item's condition: the delivery moved meanwhile. */
const movedMeanwhile = (error: unknown) =>
  error instanceof TransactionCanceledException && error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed';

/** Runs a delivery's transaction; false when the delivery had moved past the try (another message's). */
const ifStill = async (write: () => Promise<unknown>) => {
  try {
    await write();
    return true;
  } catch (error) {
    if (movedMeanwhile(error)) return false;
    throw error;
  }
};

/** The condition that the delivery is still at the try that was made: a duplicate message's write fails. */
const stillAt = (delivery: DeliveryRef) => ({
  ConditionExpression: '#attempts = :was',
  names: { '#attempts': 'attempts' },
  values: { ':was': delivery.attempts },
});

/**
 * A try that failed: `pending` with its next try, or `failed` when there is none (`nextAttemptAt` null).
 * False when the delivery had moved past this try.
 */
export const deliveryFailed = async (
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
  const failing = failingEventEntry(delivery.ownerId);
  const [[entryName, entryValue]] = Object.entries(failing);
  const at = stillAt(delivery);
  return ifStill(() =>
    transactWrite([
      {
        Update: {
          TableName: TABLE(),
          Key: eventDeliveryKey(delivery.eventId, delivery.endpointId),
          UpdateExpression: `SET ${set.expression}`,
          ConditionExpression: at.ConditionExpression,
          ExpressionAttributeNames: { ...set.names, ...at.names },
          ExpressionAttributeValues: { ...set.values, ...at.values },
        },
      },
      {
        Update: {
          TableName: TABLE(),
          Key: eventKey(delivery.eventId),
          UpdateExpression: 'ADD #failing :endpoint SET #entry = :entry',
          ExpressionAttributeNames: { '#failing': 'failingEndpointIds', '#entry': entryName },
          ExpressionAttributeValues: { ':endpoint': new Set([delivery.endpointId]), ':entry': entryValue },
        },
      },
    ]),
  );
};

/**
 * A try that a 2xx answered: `delivered`; the event leaves the failing list when no delivery of it fails.
 * False when the delivery had moved past this try.
 */
export const deliveryDelivered = async (delivery: DeliveryRef, responseStatus: number) => {
  const set = assignments({ status: 'delivered', attempts: delivery.attempts + 1, lastResponseStatus: responseStatus });
  const at = stillAt(delivery);
  const written = await ifStill(() =>
    transactWrite([
      {
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
      },
      {
        Update: {
          TableName: TABLE(),
          Key: eventKey(delivery.eventId),
          UpdateExpression: 'DELETE #failing :endpoint',
          ExpressionAttributeNames: { '#failing': 'failingEndpointIds' },
          ExpressionAttributeValues: { ':endpoint': new Set([delivery.endpointId]) },
        },
      },
    ]),
  );
  if (written && delivery.attempts > 0) await leaveFailingList(delivery.eventId);
  return written;
};

/** DynamoDB drops an emptied set: the event leaves the failing list only then (a failure meanwhile keeps it). */
const leaveFailingList = async (eventId: string) => {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: eventKey(eventId),
        UpdateExpression: 'REMOVE #entry',
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(#failing)',
        ExpressionAttributeNames: { '#entry': failingEventAttribute, '#failing': 'failingEndpointIds' },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
};
