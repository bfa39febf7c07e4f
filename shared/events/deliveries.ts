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

/** A try that failed: `pending` with its next try, or `failed` when there is none (`nextAttemptAt` null). */
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
  await transactWrite([
    {
      Update: {
        TableName: TABLE(),
        Key: eventDeliveryKey(delivery.eventId, delivery.endpointId),
        UpdateExpression: `SET ${set.expression}`,
        ExpressionAttributeNames: set.names,
        ExpressionAttributeValues: set.values,
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
  ]);
};

/** A try that a 2xx answered: `delivered`; the event leaves the failing list when no delivery of it fails. */
export const deliveryDelivered = async (delivery: DeliveryRef, responseStatus: number) => {
  const set = assignments({ status: 'delivered', attempts: delivery.attempts + 1, lastResponseStatus: responseStatus });
  await transactWrite([
    {
      Update: {
        TableName: TABLE(),
        Key: eventDeliveryKey(delivery.eventId, delivery.endpointId),
        UpdateExpression: `SET ${set.expression}, #next = :null REMOVE #failedEntry`,
        ExpressionAttributeNames: { ...set.names, '#next': 'nextAttemptAt', '#failedEntry': failedDeliveryAttribute },
        ExpressionAttributeValues: { ...set.values, ':null': null },
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
  ]);
  if (delivery.attempts > 0) await leaveFailingList(delivery.eventId);
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
