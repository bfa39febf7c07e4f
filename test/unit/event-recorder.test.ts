import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { seededJob } from '../../bench/seed.js';
import { eventFrom, eventItem, eventKeyOfId } from '../../shared/entities/event.js';
import { webhookEndpointItem } from '../../shared/entities/webhook-endpoint.js';
import type { Subject } from '../../shared/events/changes.js';
import { recordWrite } from '../../shared/events/recorder.js';
import { syncJobItem } from '../../shared/order-flow/order-sync-job.js';
import { dynamo, sqs } from './aws-mocks.js';
import { answerEveryWrite, seededEndpoint } from './event-fixtures.js';

/** The event recorder (shared/events/recorder.ts) over mocked clients: one write, its events, what they cost. */

process.env.DELIVERY_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/delivery';

const CREATED = '2026-11-20T10:00:00.000Z';
const LATER = '2026-11-20T10:00:05.000Z';
const job = (status: 'processing' | 'completed') =>
  syncJobItem({
    ...seededJob({ id: 'sj_1', ownerId: 'owner_a', resellerStoreId: 'rst_1', createdAt: CREATED, status }),
    updatedAt: status === 'completed' ? LATER : CREATED,
  });
const present = async (subject: Subject) =>
  subject.kind === 'syncJob' ? { id: subject.job.id, object: 'sync_job', status: subject.job.status } : {};
const endpoint = seededEndpoint('we_1', CREATED);

beforeEach(answerEveryWrite);

describe('recordWrite', () => {
  it('puts a completed job’s event once, on condition its id is new; nothing more without an endpoint', async () => {
    dynamo.on(QueryCommand).resolves({ Items: [] });
    const [event] = await recordWrite(job('processing'), job('completed'), present);

    const puts = dynamo.commandCalls(PutCommand).map((c) => c.args[0].input);
    expect(puts).toHaveLength(1);
    expect(puts[0].ConditionExpression).toBe('attribute_not_exists(PK)');
    expect(puts[0].Item).toMatchObject({ id: event.id, type: 'sync_job.completed', createdAt: LATER });
    // Its key is its place in its list (the shard of its type's list, `<created>#<id>`): no index entry,
    // one write unit (shared/events/README.md, "Events and webhook endpoints").
    expect(puts[0].Item).toMatchObject({ ...eventKeyOfId('owner_a', event.id), SK: `${LATER}#${event.id}` });
    expect(String(puts[0].Item!.PK)).toMatch(/^EVT#owner_a#sync_job\.completed(#\d+)?$/);
    expect(Object.keys(puts[0].Item!).filter((name) => name.startsWith('GSI'))).toEqual([]);
    expect(eventFrom(puts[0].Item!).object).toEqual({ id: 'sj_1', object: 'sync_job', status: 'completed' });
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(0);
    expect(sqs.calls()).toHaveLength(0);
  });

  it('skips an item it cannot read rather than hold the stream, writing nothing', async () => {
    const { status: _, ...broken } = job('completed');
    expect(await recordWrite(job('processing'), broken, present)).toEqual([]);
    expect(dynamo.calls()).toHaveLength(0);
  });

  it('writes nothing for a write that reports no change', async () => {
    expect(await recordWrite(job('completed'), job('completed'), present)).toEqual([]);
    expect(dynamo.calls()).toHaveLength(0);
  });

  it('writes no second event for a record handed over again, and sends the deliveries it has once more', async () => {
    dynamo.on(QueryCommand).resolves({ Items: [webhookEndpointItem(endpoint)] });
    const [first] = await recordWrite(job('processing'), job('completed'), present);
    // The event's endpoints set, then its delivery: single-item writes, no transaction.
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(1);
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(0);
    expect(sqs.calls().length).toBeGreaterThan(0);

    // Again: the Put meets the event the first run wrote, with its deliveries scheduled.
    sqs.resetHistory();
    dynamo.resetHistory();
    dynamo.on(PutCommand).rejects(
      new ConditionalCheckFailedException({
        message: 'exists',
        $metadata: {},
        Item: { ...eventItem({ ...first, endpointIds: ['we_1'] }) } as never,
      }),
    );
    dynamo
      .on(UpdateCommand)
      .rejects(new ConditionalCheckFailedException({ message: 'endpoints set before', $metadata: {} }));
    dynamo.on(GetCommand).resolves({ Item: eventItem({ ...first, endpointIds: ['we_1'] }) });
    const [again] = await recordWrite(job('processing'), job('completed'), present);
    expect(again.id).toBe(first.id);
    // One Put of the event (refused); the delivery's Put again, on condition that there is none.
    const puts = dynamo.commandCalls(PutCommand).map((c) => c.args[0].input);
    expect(puts.filter((put) => !String(put.Item!.SK).startsWith('DLV#'))).toHaveLength(1);
    expect(puts.filter((put) => String(put.Item!.SK).startsWith('DLV#'))).toEqual([
      expect.objectContaining({ ConditionExpression: 'attribute_not_exists(PK)' }),
    ]);
    const sent = [
      ...sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input.MessageBody!),
      ...sqs.commandCalls(SendMessageBatchCommand).flatMap((c) => c.args[0].input.Entries!.map((e) => e.MessageBody!)),
    ].map((body) => JSON.parse(body));
    expect(sent).toEqual([expect.objectContaining({ eventId: first.id, endpointId: 'we_1' })]);
  });
});
