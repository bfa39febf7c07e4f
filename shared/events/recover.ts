import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { auditPut } from '../audit-log/audit-log.js';
import { ValidationError } from '../core/errors.js';
import { now } from '../core/ids.js';
import type { Owner } from '../domain/owner.js';
import { dynamo } from '../dynamo/client.js';
import { eventLists } from '../dynamo/keys.js';
import { type Item, isConditionFailure, keyOf, queryIndex, TABLE, updateSet } from '../dynamo/table.js';
import type { Actor } from '../entities/audit-entry.js';
import { EVENT_RETENTION_SECONDS } from '../entities/event.js';
import { eventDeliveryFrom, failedDeliveryAttribute } from '../entities/event-delivery.js';
import { type DeliveryMessage, sendDeliveries } from './delivery-queue.js';
import { findEndpoint } from './endpoints.js';

/**
 * `POST /v1/webhook_endpoints/{id}/recover` (CONTRACT.md §14): every delivery to the endpoint that
 * `failed`, of an event created since `since`, is `pending` again, due now, and its message is sent
 * to the delivery queue; it leaves the endpoint's failed list. Reads that list (GSI7) from `since`: the cost grows
 * with the failed deliveries recovered, never with the events delivered.
 */
export const recoverEndpoint = async (owner: Owner, id: string, since: string, actor: Actor) => {
  const endpoint = await findEndpoint(owner, id);
  const oldest = Date.now() - EVENT_RETENTION_SECONDS * 1000;
  if (Date.parse(since) < oldest || Date.parse(since) > Date.now())
    throw new ValidationError('Invalid since: must be within the last 30 days', 'since');
  let recovered = 0;
  let startKey: Item | undefined;
  do {
    const page = await queryIndex({
      index: 'resourceLists',
      partition: eventLists.endpointFailed(endpoint.id),
      atLeast: since,
      limit: 100,
      exclusiveStartKey: startKey,
    });
    const requeued = (await Promise.all(page.map((entry) => requeue(keyOf(entry))))).filter((m) => m !== undefined);
    // Their messages: the delivery pipeline sends each again, due now.
    await sendDeliveries(requeued);
    recovered += requeued.length;
    startKey = page.length === 100 ? page.at(-1) : undefined;
  } while (startKey);
  const entry = auditPut({
    action: 'webhook_endpoint.recovered',
    job: { id: endpoint.id, ownerId: owner.ownerId, resellerStoreId: null },
    resourceType: 'webhook_endpoint',
    actor,
    metadata: { since, deliveries: recovered },
  });
  await dynamo.send(new PutCommand(entry.Put));
  return { endpoint, since, deliveries: recovered };
};

/**
 * One failed delivery made pending again, unless it has moved meanwhile (a send that succeeded):
 * the message of its next try, or undefined.
 */
const requeue = async (key: { PK: string; SK: string }): Promise<DeliveryMessage | undefined> => {
  const update = updateSet({ status: 'pending', nextAttemptAt: now() }, [failedDeliveryAttribute]);
  try {
    const out = await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: key,
        ...update,
        ConditionExpression: '#st = :failed',
        ExpressionAttributeNames: { ...update.ExpressionAttributeNames, '#st': 'status' },
        ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':failed': 'failed' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const delivery = eventDeliveryFrom(out.Attributes!);
    return { eventId: delivery.eventId, endpointId: delivery.endpointId, attempts: delivery.attempts };
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
};
