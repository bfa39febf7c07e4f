import type { DynamoDBRecord } from 'aws-lambda';
import { type BatchInfo, type FailedBatch, readStreamRange, replayFailed } from '../../bin/cli/replay-failed.js';

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

describe('readStreamRange', () => {
  it('reads from the first sequence number to the last, across pages, and no further', async () => {
    const calls: [string, any][] = [];
    const pages = [[record(10), record(11)], [], [record(12), record(13)]];
    const records = await readStreamRange(
      async <T>(target: string, body: unknown) => {
        calls.push([target, body]);
        if (target === 'GetShardIterator') return { ShardIterator: 'it-0' } as T;
        const n = Number(String((body as { ShardIterator: string }).ShardIterator).slice(3));
        return { Records: pages[n], NextShardIterator: `it-${n + 1}` } as T;
      },
      info(10, 12),
    );
    expect(records.map((r) => r.dynamodb!.SequenceNumber)).toEqual(['10', '11', '12']);
    expect(records.every((r) => r.eventSourceARN === info(10, 12).streamArn)).toBe(true);
    expect(calls[0]).toEqual([
      'GetShardIterator',
      expect.objectContaining({ ShardIteratorType: 'AT_SEQUENCE_NUMBER', SequenceNumber: '10' }),
    ]);
  });
});
