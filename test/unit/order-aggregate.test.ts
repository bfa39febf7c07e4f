import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { seededJob } from '../../bench/seed.js';
import { orderCancellationItem, orderItemFrom, orderItemKindOf } from '../../shared/order-flow/order-items.js';
import { orderBodyPartItem, writeOrderRecord } from '../../shared/order-flow/order-repository.js';
import {
  ENTITY_TAG,
  syncJobItem,
  unroutedOrderItem,
  unroutedOrderMarkItem,
} from '../../shared/order-flow/order-sync-job.js';
import { dynamo } from './aws-mocks.js';

beforeEach(() => dynamo.reset());

const CREATED = '2026-11-20T10:00:00.000Z';
const job = seededJob({
  id: 'sj_1',
  ownerId: 'owner_a',
  resellerStoreId: 'rst_1',
  createdAt: CREATED,
  status: 'pending',
});
const unrouted = {
  firstJobId: 'sj_1',
  ownerId: 'owner_a',
  resellerStoreId: 'rst_1',
  externalOrderId: '1001',
  receivedAt: CREATED,
  receivedVia: 'webhook' as const,
  unroutedLines: [{ position: 0, reason: 'gift_card' as const }],
  cancelledAt: null,
  order: { body: new Uint8Array([1]) },
};
const cancellation = { firstJobId: 'sj_1', reason: null, cancelledAt: CREATED, expiresAt: 1 };

describe('the order aggregate: one union of the partition’s items', () => {
  it('tags every item kind it writes, and parses each back to its member of the union', () => {
    const items = {
      job: syncJobItem(job),
      unroutedOrder: unroutedOrderItem(unrouted),
      orderCancellation: orderCancellationItem(cancellation),
      bodyPart: orderBodyPartItem('sj_1', 2, Buffer.from('x')),
      unroutedMark: unroutedOrderMarkItem({ firstJobId: 'sj_1', resellerStoreId: 'rst_1', receivedAt: CREATED }),
    };
    for (const [kind, item] of Object.entries(items)) {
      expect(typeof item[ENTITY_TAG]).toBe('string');
      expect(orderItemFrom(item).kind).toBe(kind);
    }
    expect(orderItemFrom(items.bodyPart)).toMatchObject({ kind: 'bodyPart', firstJobId: 'sj_1', n: 2 });
  });

  it('infers the kind of an item written before the tag, as older code told them apart', () => {
    const untagged = (item: Record<string, unknown>) => {
      const { [ENTITY_TAG]: _tag, ...rest } = item;
      return rest;
    };
    expect(orderItemKindOf(untagged(syncJobItem(job)))).toBe('job');
    expect(orderItemKindOf(untagged(unroutedOrderItem(unrouted)))).toBe('unroutedOrder');
    expect(orderItemKindOf(untagged(orderCancellationItem(cancellation)))).toBe('orderCancellation');
    expect(orderItemKindOf({ PK: 'SJ#sj_1', SK: 'BODY#0', body: new Uint8Array() })).toBe('bodyPart');
    expect(orderItemKindOf({ PK: 'SJ#sj_1', SK: 'UNROUTED' })).toBe('unroutedMark');
  });
});

describe('the order aggregate: a failed write answers the item it met', () => {
  it('takes the record a failed put met, with no second read', async () => {
    const met = marshall(orderCancellationItem(cancellation));
    dynamo.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'met', $metadata: {}, Item: met }));
    const written = await writeOrderRecord(syncJobItem(job), []);
    expect(written).toEqual({ met: { kind: 'orderCancellation', cancellation } });
    expect(dynamo.commandCalls(PutCommand)[0].args[0].input).toMatchObject({
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(0);
  });

  it('takes the record a cancelled transaction met (its CancellationReasons), else reads it once', async () => {
    const met = marshall(syncJobItem({ ...job, orderJobIds: ['sj_1'] }), { removeUndefinedValues: true });
    dynamo.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({
        message: 'cancelled',
        $metadata: {},
        CancellationReasons: [{ Code: 'ConditionalCheckFailed', Item: met }, { Code: 'None' }],
      }),
    );
    const withPart = [orderBodyPartItem('sj_1', 0, Buffer.from('x'))];
    expect(await writeOrderRecord(syncJobItem(job), withPart)).toMatchObject({ met: { kind: 'job' } });
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(0);

    dynamo.reset();
    dynamo.on(TransactWriteCommand).rejects(new TransactionCanceledException({ message: 'cancelled', $metadata: {} }));
    dynamo.on(GetCommand).resolves({ Item: orderCancellationItem(cancellation) });
    expect(await writeOrderRecord(syncJobItem(job), withPart)).toMatchObject({ met: { kind: 'orderCancellation' } });
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(1);
  });
});
