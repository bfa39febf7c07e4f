import { DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { InvokeCommand, type InvokeCommandOutput, LambdaClient } from '@aws-sdk/client-lambda';
import type { DynamoDBRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import {
  type BatchInfo,
  type FailedBatch,
  invokeRecorder,
  readStreamRange,
  replayFailed,
} from '../../bin/cli/replay-failed.js';

/**
 * The replay's decisions (bin/cli/replay-failed.ts); its run against the local runtime:
 * test/integration/event-recorder-failures.test.ts.
 */

const info = (start: number, end: number): BatchInfo => ({
  shardId: 'shardId-1',
  startSequenceNumber: String(start),
  endSequenceNumber: String(end),
  approximateArrivalOfFirstRecord: '2026-11-29T00:00:00.000Z',
  approximateArrivalOfLastRecord: '2026-11-29T00:00:00.000Z',
  batchSize: end - start + 1,
  streamArn: 'arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/1',
});
const record = (seq: number, sk = 'SJ'): DynamoDBRecord => ({
  eventName: 'MODIFY',
  dynamodb: { SequenceNumber: String(seq), Keys: { PK: { S: `SJ#${seq}` }, SK: { S: sk } } },
});

/** A queue of messages received once each, and which were deleted. */
const queue = (bodies: string[]) => {
  const removed: string[] = [];
  let pending = bodies.map((body) => ({ body, remove: async () => void removed.push(body) }) as FailedBatch);
  return {
    removed,
    receive: async () => {
      const batch = pending.slice(0, 10);
      pending = pending.slice(10);
      return batch;
    },
  };
};

describe('replayFailed', () => {
  it('hands the recorded items of each range to the recorder, 100 at a time, deletes what it recorded', async () => {
    const body = JSON.stringify({ DDBStreamBatchInfo: info(1, 250) });
    const q = queue([body]);
    const handed: number[][] = [];
    const report = await replayFailed({
      receive: q.receive,
      readRange: async () => [...Array.from({ length: 250 }, (_, i) => record(i + 1)), record(300, 'SK_NOT_RECORDED')],
      record: async (records) => {
        handed.push(records.map((r) => Number(r.dynamodb!.SequenceNumber)));
        return [];
      },
    });
    expect(handed.map((h) => h.length)).toEqual([100, 100, 50]);
    expect(handed.flat()).not.toContain(300);
    expect(report).toEqual({ replayed: 1, records: 250, kept: [] });
    expect(q.removed).toEqual([body]);
  });

  it('keeps a batch the recorder failed, or whose records the stream no longer holds, with the reason', async () => {
    const failing = JSON.stringify({ DDBStreamBatchInfo: info(1, 2) });
    const trimmed = JSON.stringify({ DDBStreamBatchInfo: info(5, 6) });
    const q = queue([failing, trimmed]);
    const report = await replayFailed({
      receive: q.receive,
      readRange: async (i) => {
        if (i.startSequenceNumber === '5') throw new Error('GetShardIterator: TrimmedDataAccessException');
        return [record(1), record(2)];
      },
      record: async () => ['2'],
    });
    expect(q.removed).toEqual([]);
    expect(report).toEqual({
      replayed: 0,
      records: 2,
      kept: [
        { shardId: 'shardId-1', range: '1-2', reason: 'the recorder failed 1 of its 2 records' },
        {
          shardId: 'shardId-1',
          range: '5-6',
          reason: 'stream not read: GetShardIterator: TrimmedDataAccessException',
        },
      ],
    });
  });
});

describe('readStreamRange (the DynamoDB Streams client)', () => {
  const streams = mockClient(DynamoDBStreamsClient);
  beforeEach(() => streams.reset());

  it('reads from the first sequence number to the last, across pages, and no further', async () => {
    const pages = [[record(10), record(11)], [], [record(12), record(13)]];
    streams.on(GetShardIteratorCommand).resolves({ ShardIterator: 'it-0' });
    streams.on(GetRecordsCommand).callsFake(({ ShardIterator }) => {
      const n = Number(String(ShardIterator).slice(3));
      return { Records: pages[n], NextShardIterator: `it-${n + 1}` };
    });
    const records = await readStreamRange(new DynamoDBStreamsClient({ region: 'us-east-1' }), info(10, 12));
    expect(records.map((r) => r.dynamodb!.SequenceNumber)).toEqual(['10', '11', '12']);
    expect(records.every((r) => r.eventSourceARN === info(10, 12).streamArn)).toBe(true);
    expect(streams.commandCalls(GetShardIteratorCommand)[0].args[0].input).toEqual({
      StreamArn: info(10, 12).streamArn,
      ShardId: 'shardId-1',
      ShardIteratorType: 'AT_SEQUENCE_NUMBER',
      SequenceNumber: '10',
    });
    expect(streams.commandCalls(GetRecordsCommand).map((c) => c.args[0].input.ShardIterator)).toEqual([
      'it-0',
      'it-1',
      'it-2',
    ]);
  });

  it('hands the recorder the JSON Lambda hands it: epoch seconds, base64 bytes', async () => {
    streams.on(GetShardIteratorCommand).resolves({ ShardIterator: 'it-0' });
    streams.on(GetRecordsCommand).resolves({
      Records: [
        {
          eventName: 'INSERT',
          dynamodb: {
            SequenceNumber: '7',
            ApproximateCreationDateTime: new Date('2026-11-29T00:00:01.000Z'),
            Keys: { PK: { S: 'SJ#7' }, SK: { S: 'SJ' } },
            NewImage: { blob: { B: Uint8Array.from([1, 2, 3]) }, n: { N: '4' } },
          },
        },
      ],
    });
    const [read] = await readStreamRange(new DynamoDBStreamsClient({ region: 'us-east-1' }), info(7, 7));
    expect(read.dynamodb).toEqual({
      SequenceNumber: '7',
      ApproximateCreationDateTime: Date.parse('2026-11-29T00:00:01.000Z') / 1000,
      Keys: { PK: { S: 'SJ#7' }, SK: { S: 'SJ' } },
      NewImage: { blob: { B: 'AQID' }, n: { N: '4' } },
    });
  });

  it('throws what the stream answers (a range trimmed away): the batch is kept with the reason', async () => {
    streams
      .on(GetShardIteratorCommand)
      .rejects(Object.assign(new Error('trimmed'), { name: 'TrimmedDataAccessException' }));
    await expect(readStreamRange(new DynamoDBStreamsClient({ region: 'us-east-1' }), info(1, 2))).rejects.toThrow(
      'trimmed',
    );
  });
});

describe('invokeRecorder (the Lambda client)', () => {
  const lambda = mockClient(LambdaClient);
  beforeEach(() => lambda.reset());
  // The bytes of the answer (the SDK's own type is its blob adapter, a Uint8Array too).
  const payload = (value: unknown) => Buffer.from(JSON.stringify(value)) as unknown as InvokeCommandOutput['Payload'];

  it('invokes the recorder with the records as its mapping would, answers the failures it reports', async () => {
    lambda
      .on(InvokeCommand)
      .resolves({ StatusCode: 200, Payload: payload({ batchItemFailures: [{ itemIdentifier: '2' }] }) });
    const failed = await invokeRecorder(
      new LambdaClient({ region: 'us-east-1' }),
      'stack-EventRecorder',
    )([record(1), record(2)]);
    expect(failed).toEqual(['2']);
    const input = lambda.commandCalls(InvokeCommand)[0].args[0].input;
    expect(input).toMatchObject({ FunctionName: 'stack-EventRecorder', InvocationType: 'RequestResponse' });
    expect(JSON.parse(Buffer.from(input.Payload as Uint8Array).toString('utf8'))).toEqual({
      Records: [record(1), record(2)],
    });
  });

  it('answers no failure for an empty or null answer, and throws when the invocation itself failed', async () => {
    const invoke = invokeRecorder(new LambdaClient({ region: 'us-east-1' }), 'rec');
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload(null) });
    expect(await invoke([record(1)])).toEqual([]);
    lambda.on(InvokeCommand).resolves({
      StatusCode: 200,
      FunctionError: 'Unhandled',
      Payload: payload({ errorMessage: 'boom' }),
    });
    await expect(invoke([record(1)])).rejects.toThrow('rec failed (Unhandled): {"errorMessage":"boom"}');
  });
});
