import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type Event, eventItem } from '../../shared/entities/event.js';
import { type WebhookEndpoint, webhookEndpointItem } from '../../shared/entities/webhook-endpoint.js';
import { scheduleDeliveries } from '../../shared/events/schedule-deliveries.js';
import { dynamo, sqs } from './aws-mocks.js';
import { answerEveryWrite, seededEndpoint } from './event-fixtures.js';

/** scheduleDeliveries (shared/events/schedule-deliveries.ts) over mocked clients: what it reads, writes and sends. */

process.env.DELIVERY_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/delivery';

const at = '2026-11-01T00:00:00.000Z';
const event: Event = {
  id: 'evt_1',
  ownerId: 'owner_a',
  type: 'sync_job.completed',
  createdAt: at,
  object: { id: 'sj_1', object: 'sync_job' },
  endpointIds: [],
  failingEndpointIds: [],
};
const endpoint = (id: string, changes: Partial<WebhookEndpoint> = {}) => seededEndpoint(id, at, changes);
const owning = (...endpoints: WebhookEndpoint[]) =>
  dynamo.on(QueryCommand).resolves({ Items: endpoints.map(webhookEndpointItem) });
const messages = () =>
  [
    ...sqs.commandCalls(SendMessageCommand).map((c) => [c.args[0].input.MessageBody!]),
    ...sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input.Entries!.map((e) => e.MessageBody!)),
  ]
    .flat()
    .map((body) => JSON.parse(body));

beforeEach(answerEveryWrite);

describe('scheduleDeliveries', () => {
  it('costs an owner without a matching endpoint one read and no write, and a burst one read', async () => {
    owning(endpoint('we_dead', { enabledEvents: ['sync_job.dead'] }), endpoint('we_off', { status: 'disabled' }));
    await scheduleDeliveries(event);
    await scheduleDeliveries({ ...event, id: 'evt_2' });
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(1);
    expect(dynamo.commandCalls(TransactWriteCommand)).toEqual([]);
    expect(dynamo.commandCalls(UpdateCommand)).toEqual([]);
    expect(dynamo.commandCalls(PutCommand)).toEqual([]);
    expect(messages()).toEqual([]);
  });

  it('sets endpointIds on condition, then puts each matching delivery on condition, then a message each', async () => {
    owning(
      endpoint('we_1'),
      endpoint('we_2', { enabledEvents: ['sync_job.completed'] }),
      endpoint('we_3', { enabledEvents: ['sync_job.dead'] }),
    );
    await scheduleDeliveries(event);
    // Single-item writes (issue 44): no transaction, the event's endpoints first.
    expect(dynamo.commandCalls(TransactWriteCommand)).toEqual([]);
    const order = dynamo.calls().map((c) => c.args[0].constructor.name);
    expect(order.slice(-3)).toEqual(['UpdateCommand', 'PutCommand', 'PutCommand']);
    const [update] = dynamo.commandCalls(UpdateCommand).map((c) => c.args[0].input);
    expect(update.ConditionExpression).toBe('attribute_exists(PK) AND attribute_not_exists(#ids)');
    expect(update.ExpressionAttributeValues?.[':ids'].sort()).toEqual(['we_1', 'we_2']);
    const puts = dynamo
      .commandCalls(PutCommand)
      .map((c) => c.args[0].input)
      .map((i) => [i.Item?.SK, i.Item?.status, i.ConditionExpression]);
    expect(puts.sort()).toEqual([
      ['DLV#we_1', 'pending', 'attribute_not_exists(PK)'],
      ['DLV#we_2', 'pending', 'attribute_not_exists(PK)'],
    ]);
    expect(messages().sort((a, b) => a.endpointId.localeCompare(b.endpointId))).toEqual([
      { eventId: 'evt_1', endpointId: 'we_1', attempts: 0 },
      { eventId: 'evt_1', endpointId: 'we_2', attempts: 0 },
    ]);
  });

  it('called again for the same event, puts the stored endpoints’ deliveries (on condition), sends again', async () => {
    owning(endpoint('we_1'), endpoint('we_2'));
    dynamo.on(UpdateCommand).rejects(new ConditionalCheckFailedException({ message: 'set before', $metadata: {} }));
    dynamo.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'there', $metadata: {} }));
    dynamo.on(GetCommand).resolves({ Item: eventItem({ ...event, endpointIds: ['we_1'] }) });
    await scheduleDeliveries(event);
    const puts = dynamo.commandCalls(PutCommand).map((c) => c.args[0].input);
    expect(puts.map((put) => [put.Item?.SK, put.ConditionExpression])).toEqual([
      ['DLV#we_1', 'attribute_not_exists(PK)'],
    ]);
    expect(messages()).toEqual([{ eventId: 'evt_1', endpointId: 'we_1', attempts: 0 }]);
  });
});
