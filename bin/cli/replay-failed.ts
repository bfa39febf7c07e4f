import {
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord } from 'aws-lambda';
import { isRecordedItem, type StreamFailure } from '../../lib/stream-mapping.js';

/**
 * `npm run events -- replay-failed`: the change stream batches the event recorder gave up on, recorded.
 * Lambda's on-failure destination of a stream mapping receives where a batch was (its shard and first
 * and last sequence numbers), never its records; so each message's records are read again from the
 * stream, while it keeps them (24 hours from each write), filtered as the mapping filters them, and
 * handed to the event recorder itself, as its mapping would hand them. The recorder writes an event at
 * most once (its id follows from the write, its Put is conditional; its deliveries are written once),
 * so a batch replayed twice, or replayed after the mapping got through after all, records nothing more.
 * A message is deleted once every record of its range is recorded; one that is not stays, with its alarm.
 */

export type BatchInfo = StreamFailure['DDBStreamBatchInfo'];

export interface FailedBatch {
  /** The message's body, as Lambda wrote it (or anything else that landed there). */
  body: string;
  /** Deletes the message: its batch is recorded. */
  remove(): Promise<void>;
}

export interface ReplayPorts {
  /** The next messages of the on-failure destination, each received once per run; none when it is empty. */
  receive(): Promise<FailedBatch[]>;
  /** The records of `info`'s shard from its first to its last sequence number, while the stream keeps them. */
  readRange(info: BatchInfo): Promise<DynamoDBRecord[]>;
  /** Hands records to the event recorder; answers the sequence numbers of those it failed. */
  record(records: DynamoDBRecord[]): Promise<string[]>;
}

export interface ReplayReport {
  /** Batches whose every record is recorded (their messages deleted). */
  replayed: number;
  /** Records handed to the recorder. */
  records: number;
  /** Batches left in the queue, and why. */
  kept: { shardId?: string; range?: string; reason: string }[];
}

/** At most this many records an invocation, the mapping's batch size (lib/routes.ts, EventRecorder). */
const INVOCATION_RECORDS = 100;

export const replayFailed = async (ports: ReplayPorts): Promise<ReplayReport> => {
  const report: ReplayReport = { replayed: 0, records: 0, kept: [] };
  for (let messages = await ports.receive(); messages.length; messages = await ports.receive()) {
    for (const message of messages) {
      let info: BatchInfo | undefined;
      try {
        info = (JSON.parse(message.body) as StreamFailure).DDBStreamBatchInfo;
      } catch {
        // Not Lambda's message: left for a person to look at.
      }
      if (!info?.shardId || !info.startSequenceNumber || !info.endSequenceNumber) {
        report.kept.push({ reason: 'not a change stream batch (no DDBStreamBatchInfo)' });
        continue;
      }
      const where = { shardId: info.shardId, range: `${info.startSequenceNumber}-${info.endSequenceNumber}` };
      let records: DynamoDBRecord[];
      try {
        records = (await ports.readRange(info)).filter(isRecordedItem);
      } catch (error) {
        report.kept.push({ ...where, reason: `stream not read: ${(error as Error).message}` });
        continue;
      }
      const failed: string[] = [];
      for (let i = 0; i < records.length; i += INVOCATION_RECORDS) {
        const chunk = records.slice(i, i + INVOCATION_RECORDS);
        report.records += chunk.length;
        failed.push(...(await ports.record(chunk)));
      }
      if (failed.length) {
        report.kept.push({ ...where, reason: `the recorder failed ${failed.length} of its ${records.length} records` });
        continue;
      }
      await message.remove();
      report.replayed += 1;
    }
  }
  return report;
};

/**
 * The on-failure queue's messages, ten at a time, each hidden for the rest of the run once received
 * (a message kept is received again by the next run, not by this one).
 */
export const receiveFrom = (sqs: SQSClient, queueUrl: string) => async (): Promise<FailedBatch[]> => {
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 0,
      VisibilityTimeout: 900,
    }),
  );
  return Messages.map((m) => ({
    body: m.Body ?? '',
    remove: async () => {
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
    },
  }));
};

/** How many empty answers in a row end a read of an open shard whose range is behind the reader. */
const EMPTY_PAGES = 5;

/**
 * A stream record as Lambda hands it to a function: the SDK's client reads binary attributes as
 * bytes and the creation time as a Date, where the event's JSON has base64 text and epoch seconds.
 */
const asLambdaJson = (value: unknown): unknown => {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (value instanceof Date) return value.getTime() / 1000;
  if (Array.isArray(value)) return value.map(asLambdaJson);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, asLambdaJson(inner)]));
  return value;
};

/** The records of a batch's range, read from the stream (AT_SEQUENCE_NUMBER its first, to its last). */
export const readStreamRange = async (streams: DynamoDBStreamsClient, info: BatchInfo): Promise<DynamoDBRecord[]> => {
  const end = BigInt(info.endSequenceNumber);
  let { ShardIterator: iterator } = await streams.send(
    new GetShardIteratorCommand({
      StreamArn: info.streamArn,
      ShardId: info.shardId,
      ShardIteratorType: 'AT_SEQUENCE_NUMBER',
      SequenceNumber: info.startSequenceNumber,
    }),
  );
  const records: DynamoDBRecord[] = [];
  let empty = 0;
  while (iterator && empty < EMPTY_PAGES) {
    const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
    const read = (page.Records ?? []).map((record) => asLambdaJson(record) as DynamoDBRecord);
    empty = read.length ? 0 : empty + 1;
    for (const record of read) {
      if (BigInt(record.dynamodb!.SequenceNumber!) > end) return records;
      records.push({ ...record, eventSourceARN: info.streamArn });
    }
    if (read.length && BigInt(read.at(-1)!.dynamodb!.SequenceNumber!) === end) return records;
    iterator = page.NextShardIterator;
  }
  return records;
};

/**
 * The event recorder invoked as its mapping invokes it (RequestResponse), by Lambda's Invoke API (a
 * region's, or the local runtime's); answers the sequence numbers it reported failed, and throws when
 * the invocation itself failed.
 */
export const invokeRecorder =
  (lambda: LambdaClient, functionName: string) =>
  async (records: DynamoDBRecord[]): Promise<string[]> => {
    const answer = await lambda.send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: 'RequestResponse',
        Payload: Buffer.from(JSON.stringify({ Records: records })),
      }),
    );
    const text = answer.Payload ? Buffer.from(answer.Payload).toString('utf8') : '';
    if (answer.FunctionError)
      throw new Error(`${functionName} failed (${answer.FunctionError}): ${text.slice(0, 300)}`);
    const result = text ? (JSON.parse(text) as { batchItemFailures?: { itemIdentifier: string }[] } | null) : null;
    return (result?.batchItemFailures ?? []).map((f) => f.itemIdentifier);
  };
