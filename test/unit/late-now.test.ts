import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { seededJob } from '../../bench/seed.js';
import { scorecardDayKey } from '../../shared/dynamo/keys.js';
import { countLateCancellation, settleLateShipment } from '../../shared/order-flow/order-entries.js';
import { type SyncJob, syncJobItem } from '../../shared/order-flow/order-sync-job.js';
import { dynamo } from './aws-mocks.js';

/**
 * `lateNow` (CONTRACT.md §16.3): a late job leaves its day's count once, by a write conditional on its
 * `ln` mark, in one transaction with the day's −1 (shared/order-flow/order-entries.ts).
 */

const AT = '2026-11-09T10:00:00.000Z';
const lateJob = (over: Partial<SyncJob> = {}): SyncJob => ({
  ...seededJob({ id: 'sj_1', ownerId: 'owner_a', resellerStoreId: 'rst_1', createdAt: AT, status: 'completed' }),
  dueAt: '2026-11-10T04:59:59.000Z',
  lateAt: '2026-11-10T07:00:00.000Z',
  lateNowDay: '2026-11-09',
  ...over,
});

beforeEach(() => {
  dynamo.reset();
  dynamo.on(TransactWriteCommand).resolves({});
});

describe('late now', () => {
  it("takes a cancelled late job off its day's lateNow once: conditional on its mark, with the day's -1", async () => {
    const job = lateJob();
    await countLateCancellation(job);
    const [call] = dynamo.commandCalls(TransactWriteCommand);
    const [update, day] = call?.args[0].input.TransactItems ?? [];
    expect(update?.Update).toMatchObject({
      Key: { PK: 'SJ#sj_1', SK: 'SJ' },
      ConditionExpression: '#ln = :day',
      ExpressionAttributeValues: { ':day': '2026-11-09' },
    });
    expect(update?.Update?.UpdateExpression).toMatch(/REMOVE #ln/);
    expect(day?.Update).toMatchObject({
      Key: scorecardDayKey(job.sourceStoreId, '2026-11-09'),
      UpdateExpression: 'ADD #lateNow :lateNow',
      ExpressionAttributeValues: { ':lateNow': -1 },
    });
    // A job not counted late now (never late, or left already) writes nothing.
    dynamo.resetHistory();
    await countLateCancellation(lateJob({ lateNowDay: null }));
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  it('leaves a late job that has not shipped (nothing with tracking) late now', async () => {
    dynamo.on(GetCommand).resolves({ Item: syncJobItem(lateJob()) });
    await settleLateShipment('sj_1');
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });
});
