import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { BatchGetCommand, DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { syncJobKey } from '../../shared/order/sync-job.js';
import { reconcile } from '../../shared/sync-jobs/reconciler.js';

const dynamo = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
const deps = { cipher: { encrypt: jest.fn(), decrypt: jest.fn() }, platforms: jest.fn() } as never;

/** A pending job that has not moved for an hour: past any lease, its message presumed lost. */
const stalled = (id: string) => ({
  ...syncJobKey(id),
  id,
  ownerId: 'owner_a',
  resellerStoreId: 'rst_1',
  sourceStoreId: 'sst_1',
  status: 'pending',
  attempts: 0,
  generation: 1,
  externalOrderId: '5551234',
  createdAt: new Date(Date.now() - 3_600_000).toISOString(),
  updatedAt: new Date(Date.now() - 3_600_000).toISOString(),
});

describe('the reconciler', () => {
  beforeEach(() => {
    dynamo.reset();
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({});
  });

  it('goes on with a shard’s later pages when one job fails, then fails so the error alarm tells', async () => {
    const [broken, fine] = [stalled('sj_broken'), stalled('sj_fine')];
    const key = ({ PK, SK }: { PK: string; SK: string }) => ({ PK, SK });
    dynamo
      .on(QueryCommand)
      .resolves({ Items: [] })
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'OPEN#0' } })
      .resolvesOnce({ Items: [key(broken)], LastEvaluatedKey: key(broken) })
      .resolvesOnce({ Items: [key(fine)] });
    dynamo.on(BatchGetCommand).callsFake((input) => {
      const [table] = Object.keys(input.RequestItems);
      const wanted = input.RequestItems[table].Keys.map((k: { PK: string }) => k.PK);
      return { Responses: { [table]: [broken, fine].filter((job) => wanted.includes(job.PK)) } };
    });
    dynamo
      .on(UpdateCommand)
      .callsFake((input) => ({ Attributes: { ...fine, generation: 2, resends: 1, ...input.Key } }))
      .on(UpdateCommand, { Key: { PK: 'SJ#sj_broken' } })
      .rejects(Object.assign(new Error('throughput exceeded'), { name: 'ProvisionedThroughputExceededException' }));

    await expect(reconcile(deps, 60)).rejects.toThrow('the reconciler could not handle 1 job(s)');

    const sent = sqs.commandCalls(SendMessageCommand).map((call) => JSON.parse(call.args[0].input.MessageBody!));
    expect(sent).toEqual([expect.objectContaining({ jobId: 'sj_fine', generation: 2, trigger: 'reconciler' })]);
  });

  it('answers its report when every job ended', async () => {
    dynamo.on(QueryCommand).resolves({ Items: [] });

    await expect(reconcile(deps, 60)).resolves.toMatchObject({ inFlight: 0, resent: 0, errors: 0 });
  });
});
