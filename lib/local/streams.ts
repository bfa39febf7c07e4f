import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import type { StreamFailure } from '../stream-mapping.js';
import type { FunctionPool } from './environments.js';

/**
 * Lambda's DynamoDB Streams event source mapping, over DynamoDB Local's streams API (the JSON protocol
 * the SDK speaks; no SDK client for it is a dependency here), with the deployed mapping's settings
 * (lib/stream-mapping.ts, lib/constructs/consumers.ts). Each shard is read in order, parents before
 * children. Only the records the filter passes are handed over, in batches of up to `batchSize`
 * gathered for up to `batchingWindowMs` after the first. A batch goes to the function, and the shard
 * moves on past the records it did not report failed (ReportBatchItemFailures); what failed (a
 * reported record and those after it, or a thrown or timed-out invocation's whole batch) is halved
 * while it is longer than one record (bisection, which is no retry), then tried again up to
 * `retryAttempts` times; then its place (shard, first and last sequence numbers, never the records)
 * goes to `onFailure`, as Lambda's on-failure destination gets it, and the shard moves on. A record
 * older than `maxRecordAgeMs` goes there without being handed over. The place reached in each shard
 * is kept in `checkpointFile` after every batch, so a restart (a SIGKILL) goes on from there, handing
 * over again at most the batch that was running: the consumer writes each event once anyway.
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
  /** How long a batch waits for more records once it has one (the mapping's MaximumBatchingWindow). */
  batchingWindowMs?: number;
  /** Which records are handed over (the mapping's filter); the others are passed over. Default: all. */
  filter?: (record: DynamoDBRecord) => boolean;
  /** Tries of a failing (single-record, or unbisected) batch after its first; default: for ever. */
  retryAttempts?: number;
  /** Whether a failing batch is halved before its retries count (BisectBatchOnFunctionError). */
  bisect?: boolean;
  /** A record older than this goes to `onFailure` unread. */
  maxRecordAgeMs?: number;
  /** The on-failure destination: where a batch given up on is put (Lambda's message). */
  onFailure?: (failure: StreamFailure) => Promise<void>;
  /** How long a failed batch waits before it is tried again. */
  retryDelayMs?: number;
  /** Where the places are kept across restarts; none: from each shard's oldest record (in memory). */
  checkpointFile?: string;
  /** How long an empty shard waits before it is read again (Lambda reads four times a second). */
  idleMs?: number;
  onInvoke?: (name: string, ms: number, batch?: number) => void;
}

const DONE = 'done';

const sequenceOf = (record: DynamoDBRecord) => record.dynamodb!.SequenceNumber!;
const bySequence = (a: string, b: string) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);
/** When a record was written (DynamoDB gives whole seconds since the epoch), in ms. */
const writtenAt = (record: DynamoDBRecord) => Number(record.dynamodb?.ApproximateCreationDateTime ?? 0) * 1000;

/** A call of DynamoDB Local's JSON protocol: `DescribeTable`, or one of the streams API. */
const callDynamo = async <T>(endpoint: string, target: string, body: unknown): Promise<T> => {
  const res = await fetch(endpoint, {
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

/** Lambda's on-failure message for records given up on (their place only). */
const failureOf = (
  functionName: string,
  { records, shardId, streamArn }: { records: DynamoDBRecord[]; shardId: string; streamArn: string },
  condition: string,
  tries: number,
): StreamFailure => ({
  requestContext: {
    requestId: randomUUID(),
    functionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    condition,
    approximateInvokeCount: tries,
  },
  responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
  version: '1.0',
  timestamp: new Date().toISOString(),
  DDBStreamBatchInfo: {
    shardId,
    startSequenceNumber: sequenceOf(records[0]),
    endSequenceNumber: sequenceOf(records.at(-1)!),
    approximateArrivalOfFirstRecord: new Date(writtenAt(records[0])).toISOString(),
    approximateArrivalOfLastRecord: new Date(writtenAt(records.at(-1)!)).toISOString(),
    batchSize: records.length,
    streamArn,
  },
});

/** One invocation: the index of the first record not done (undefined: all done). */
const invokeOnce = async (options: StreamPollerOptions, records: DynamoDBRecord[]): Promise<number | undefined> => {
  try {
    const { result, ms } = await options.pool.invoke({ Records: records });
    options.onInvoke?.(options.pool.fn.name, ms, records.length);
    const failed = ((result as DynamoDBBatchResponse | undefined)?.batchItemFailures ?? [])
      .map((f) => f.itemIdentifier)
      .filter((id): id is string => Boolean(id))
      .sort(bySequence)[0];
    if (failed === undefined) return undefined;
    const index = records.findIndex((r) => bySequence(sequenceOf(r), failed) >= 0);
    return index < 0 ? undefined : index;
  } catch {
    return 0;
  }
};

/** The shards to read: a shard is read once its parent is read to its end (or gone from the stream). */
const readyShards = (shards: Shard[], places: Places) => {
  const listed = new Set(shards.map((s) => s.ShardId));
  return shards.filter(
    (s) =>
      places[s.ShardId] !== DONE &&
      (!s.ParentShardId || !listed.has(s.ParentShardId) || places[s.ParentShardId] === DONE),
  );
};

class StreamPoller {
  private stopped = false;
  private readonly places: Places;
  private readonly iterators = new Map<string, string>();
  private streamArn: string | undefined;
  private readonly windowMs: number;
  readonly running: Promise<void>;

  constructor(private readonly options: StreamPollerOptions) {
    this.places =
      options.checkpointFile && existsSync(options.checkpointFile)
        ? JSON.parse(readFileSync(options.checkpointFile, 'utf8'))
        : {};
    this.windowMs = options.batchingWindowMs ?? 0;
    this.running = this.loop();
  }

  private call<T>(target: string, body: unknown) {
    return callDynamo<T>(this.options.endpoint, target, body);
  }

  private keep() {
    const file = this.options.checkpointFile;
    if (!file) return;
    const temporary = `${file}.tmp`;
    writeFileSync(temporary, JSON.stringify(this.places));
    renameSync(temporary, file);
  }

  private async iteratorOf(streamArn: string, shardId: string) {
    const known = this.iterators.get(shardId);
    if (known) return known;
    const place = this.places[shardId];
    const { ShardIterator } = await this.call<{ ShardIterator: string }>('GetShardIterator', {
      StreamArn: streamArn,
      ShardId: shardId,
      ...(place
        ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: place }
        : { ShardIteratorType: 'TRIM_HORIZON' }),
    });
    return ShardIterator;
  }

  /** One GetRecords of the shard; whether the shard has ended. */
  private async read(streamArn: string, shardId: string, limit: number) {
    const { Records = [], NextShardIterator } = await this.call<{
      Records?: DynamoDBRecord[];
      NextShardIterator?: string;
    }>('GetRecords', { ShardIterator: await this.iteratorOf(streamArn, shardId), Limit: limit });
    if (NextShardIterator) this.iterators.set(shardId, NextShardIterator);
    else this.iterators.delete(shardId);
    return { records: Records, closed: !NextShardIterator };
  }

  /**
   * The shard's next batch: the records the filter passes, up to the batch size, gathered until the
   * window closes after the first; `last` is the last record read (passed over or not), `closed` whether
   * the shard has ended.
   */
  private async gather(streamArn: string, shardId: string) {
    const { options } = this;
    const batch: DynamoDBRecord[] = [];
    let last: string | undefined;
    let closed = false;
    let full = false;
    let firstAt: number | undefined;
    while (!this.stopped) {
      const limit = options.batchSize - batch.length;
      const read = await this.read(streamArn, shardId, limit);
      closed = read.closed;
      full = read.records.length >= limit;
      for (const record of read.records) {
        last = sequenceOf(record);
        if (options.filter && !options.filter(record)) continue;
        batch.push({ ...record, eventSourceARN: streamArn });
      }
      if (batch.length > 0) firstAt ??= Date.now();
      if (closed || batch.length >= options.batchSize || firstAt === undefined) break;
      const left = firstAt + this.windowMs - Date.now();
      if (left <= 0) break;
      // A page not full: the next read waits a moment (AWS reads a shard up to 4-5 times a second). Read
      // again at once, DynamoDB Local was asked for the few records of each moment, ~5 ms of its CPU a call.
      if (!full) await sleep(Math.min(left, 100));
    }
    return { batch, last, closed, full };
  }

  private reached(shardId: string, records: DynamoDBRecord[]) {
    if (records.length) this.places[shardId] = sequenceOf(records.at(-1)!);
    this.keep();
  }

  private async giveUp(
    part: { records: DynamoDBRecord[]; shardId: string; streamArn: string },
    condition: string,
    tries: number,
  ) {
    if (!this.options.onFailure) throw new Error('no on-failure destination: the batch stays where it is');
    await this.options.onFailure(failureOf(this.options.pool.fn.name, part, condition, tries));
    this.reached(part.shardId, part.records);
  }

  /** How many of the records, from the first, are older than the mapping's maximum record age. */
  private expiredCount(records: DynamoDBRecord[]) {
    if (this.options.maxRecordAgeMs === undefined) return 0;
    const oldest = Date.now() - this.options.maxRecordAgeMs;
    return records.filter((r) => writtenAt(r) && writtenAt(r) < oldest).length;
  }

  /**
   * A batch handed over until each record is done or given up on (bisected, retried, sent to
   * `onFailure`), in order; the shard's place moves past each part as it ends.
   */
  private async deliver(streamArn: string, shardId: string, batch: DynamoDBRecord[]) {
    const { options } = this;
    const retryAttempts = options.retryAttempts ?? Number.POSITIVE_INFINITY;
    const pending: { records: DynamoDBRecord[]; retries: number }[] = [{ records: batch, retries: 0 }];
    while (pending.length && !this.stopped) {
      const { records, retries } = pending.shift()!;
      const expired = this.expiredCount(records);
      if (expired) {
        await this.giveUp({ records: records.slice(0, expired), shardId, streamArn }, 'RecordAgeExceeded', 0);
        if (expired < records.length) pending.unshift({ records: records.slice(expired), retries });
        continue;
      }
      const failedAt = await invokeOnce(options, records);
      if (failedAt === undefined) {
        this.reached(shardId, records);
        continue;
      }
      this.reached(shardId, records.slice(0, failedAt));
      const rest = records.slice(failedAt);
      if (options.bisect && rest.length > 1) {
        const half = Math.ceil(rest.length / 2);
        pending.unshift({ records: rest.slice(0, half), retries }, { records: rest.slice(half), retries });
      } else if (retries >= retryAttempts) {
        await this.giveUp({ records: rest, shardId, streamArn }, 'RetryAttemptsExhausted', retries + 1);
      } else {
        pending.unshift({ records: rest, retries: retries + 1 });
        await sleep(options.retryDelayMs ?? 250);
      }
    }
  }

  /**
   * One batch of a shard handed over: `full` when its last read filled its page (the shard is read again at
   * once), `read` when it had records (again after a moment), neither when it had none.
   */
  private async step(streamArn: string, shardId: string): Promise<{ read: boolean; full: boolean }> {
    const { batch, last, closed, full } = await this.gather(streamArn, shardId);
    if (batch.length) await this.deliver(streamArn, shardId, batch);
    if (this.stopped) return { read: false, full: false };
    // What the filter passed over is done too.
    if (last) this.places[shardId] = last;
    if (closed) this.places[shardId] = DONE;
    if (last || closed) this.keep();
    return { read: last !== undefined, full };
  }

  /**
   * The table's stream, described once (and again after an error): DynamoDB Local's DescribeTable costs
   * 12-40 ms of its CPU (4-15 data calls'), and read before every batch it was a local-only cost that
   * grew with the traffic; the shards are listed each round (DescribeStream, about 1 ms).
   */
  private async latestStreamArn() {
    this.streamArn ??= (
      await this.call<{ Table: { LatestStreamArn: string } }>('DescribeTable', { TableName: this.options.tableName })
    ).Table.LatestStreamArn;
    return this.streamArn;
  }

  /** One pass over the stream's ready shards: whether any had records, whether one filled its page. */
  private async pass(): Promise<{ read: boolean; full: boolean }> {
    const arn = await this.latestStreamArn();
    const { StreamDescription } = await this.call<{ StreamDescription: { Shards: Shard[] } }>('DescribeStream', {
      StreamArn: arn,
    });
    let read = false;
    let full = false;
    for (const shard of readyShards(StreamDescription.Shards, this.places)) {
      if (this.stopped) break;
      const round = await this.step(arn, shard.ShardId);
      read ||= round.read;
      full ||= round.full;
    }
    return { read, full };
  }

  private async loop() {
    while (!this.stopped) {
      try {
        const { read, full } = await this.pass();
        if (this.stopped) return;
        if (!full) await sleep(read ? 100 : (this.options.idleMs ?? 250));
      } catch (error) {
        if (this.stopped) return;
        this.iterators.clear();
        this.streamArn = undefined;
        console.error('local change stream poller:', (error as Error).message);
        await sleep(1000);
      }
    }
  }

  async stop() {
    this.stopped = true;
    await this.running;
  }
}

export const startStreamPoller = (options: StreamPollerOptions) => {
  const poller = new StreamPoller(options);
  return { stop: () => poller.stop() };
};
