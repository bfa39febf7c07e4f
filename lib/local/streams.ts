import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import type { FunctionPool } from './environments.js';

/**
 * Lambda's DynamoDB Streams event source mapping, over DynamoDB Local's streams API (the JSON protocol
 * the SDK speaks; no SDK client for it is a dependency here). Each shard is read in order, parents
 * before children; a batch goes to the function, and the shard moves on only past the records it did
 * not report failed (ReportBatchItemFailures): a failed record and those after it are handed over
 * again a second later, a thrown or timed-out invocation the whole batch. The place reached in each
 * shard is kept in `checkpointFile` after every batch, so a restart (a SIGKILL) goes on from there,
 * handing over again at most the batch that was running: the consumer writes each event once anyway.
 */

interface Shard {
  ShardId: string;
  ParentShardId?: string;
}

/** Where each shard was left: the last sequence number handed over, or `done` (closed, read to its end). */
type Places = Record<string, string>;

export interface StreamPollerOptions {
  endpoint: string;
  tableName: string;
  pool: FunctionPool;
  batchSize: number;
  /** Where the places are kept across restarts; none: from each shard's oldest record (in memory). */
  checkpointFile?: string;
  /** How long an empty shard waits before it is read again (Lambda reads four times a second). */
  idleMs?: number;
  onInvoke?: (name: string, ms: number, batch?: number) => void;
}

const DONE = 'done';

export const startStreamPoller = (options: StreamPollerOptions) => {
  const call = async <T>(target: string, body: unknown): Promise<T> => {
    const res = await fetch(options.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `${target === 'DescribeTable' ? 'DynamoDB_20120810' : 'DynamoDBStreams_20120810'}.${target}`,
        // DynamoDB Local reads the access key of a SigV4 header and checks nothing else.
        authorization:
          'AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
      },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as T & { __type?: string; message?: string };
    if (!res.ok) throw new Error(`${target}: ${json.__type ?? res.status} ${json.message ?? ''}`);
    return json;
  };

  const places: Places =
    options.checkpointFile && existsSync(options.checkpointFile)
      ? JSON.parse(readFileSync(options.checkpointFile, 'utf8'))
      : {};
  const keep = () => {
    if (!options.checkpointFile) return;
    const temporary = `${options.checkpointFile}.tmp`;
    writeFileSync(temporary, JSON.stringify(places));
    renameSync(temporary, options.checkpointFile);
  };

  let stopped = false;
  const idleMs = options.idleMs ?? 250;
  const iterators = new Map<string, string>();

  const iteratorOf = async (streamArn: string, shardId: string) => {
    const known = iterators.get(shardId);
    if (known) return known;
    const place = places[shardId];
    const { ShardIterator } = await call<{ ShardIterator: string }>('GetShardIterator', {
      StreamArn: streamArn,
      ShardId: shardId,
      ...(place
        ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: place }
        : { ShardIteratorType: 'TRIM_HORIZON' }),
    });
    return ShardIterator;
  };

  /** One batch of a shard handed over; whether it had records (so the shard is read again at once). */
  const step = async (streamArn: string, shardId: string): Promise<boolean> => {
    const iterator = await iteratorOf(streamArn, shardId);
    const { Records = [], NextShardIterator } = await call<{ Records?: DynamoDBRecord[]; NextShardIterator?: string }>(
      'GetRecords',
      { ShardIterator: iterator, Limit: options.batchSize },
    );
    if (Records.length === 0) {
      if (NextShardIterator) iterators.set(shardId, NextShardIterator);
      else {
        places[shardId] = DONE;
        iterators.delete(shardId);
        keep();
      }
      return false;
    }
    const records = Records.map((record) => ({ ...record, eventSourceARN: streamArn }));
    let failedAt: string | undefined;
    try {
      const { result, ms } = await options.pool.invoke({ Records: records });
      options.onInvoke?.(options.pool.fn.name, ms, records.length);
      const failures = (result as DynamoDBBatchResponse | undefined)?.batchItemFailures ?? [];
      failedAt = failures
        .map((f) => f.itemIdentifier)
        .filter((id): id is string => Boolean(id))
        .sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1))[0];
    } catch {
      failedAt = records[0].dynamodb!.SequenceNumber;
    }
    const handed =
      failedAt === undefined ? records : records.filter((r) => BigInt(r.dynamodb!.SequenceNumber!) < BigInt(failedAt!));
    const last = handed.at(-1)?.dynamodb?.SequenceNumber;
    if (last) places[shardId] = last;
    keep();
    if (failedAt === undefined && NextShardIterator) iterators.set(shardId, NextShardIterator);
    else iterators.delete(shardId);
    if (failedAt !== undefined) await sleep(1000);
    return true;
  };

  const loop = async () => {
    while (!stopped) {
      try {
        const { Table } = await call<{ Table: { LatestStreamArn: string } }>('DescribeTable', {
          TableName: options.tableName,
        });
        const { StreamDescription } = await call<{ StreamDescription: { Shards: Shard[] } }>('DescribeStream', {
          StreamArn: Table.LatestStreamArn,
        });
        const listed = new Set(StreamDescription.Shards.map((s) => s.ShardId));
        // A shard is read once its parent is read to its end (or gone from the stream).
        const ready = StreamDescription.Shards.filter(
          (s) =>
            places[s.ShardId] !== DONE &&
            (!s.ParentShardId || !listed.has(s.ParentShardId) || places[s.ParentShardId] === DONE),
        );
        let busy = false;
        for (const shard of ready) {
          if (stopped) return;
          busy = (await step(Table.LatestStreamArn, shard.ShardId)) || busy;
        }
        if (!busy) await sleep(idleMs);
      } catch (error) {
        if (stopped) return;
        iterators.clear();
        console.error('local change stream poller:', (error as Error).message);
        await sleep(1000);
      }
    }
  };
  const running = loop();

  return {
    stop: async () => {
      stopped = true;
      await running;
    },
  };
};
