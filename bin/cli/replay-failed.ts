import { createHash, createHmac } from 'node:crypto';
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

/** A JSON-protocol call of the DynamoDB Streams API (`target`: `GetRecords`…), answered as JSON. */
export type StreamsCall = <T>(target: string, body: unknown) => Promise<T>;

/** How many empty answers in a row end a read of an open shard whose range is behind the reader. */
const EMPTY_PAGES = 5;

/** The records of a batch's range, read from the stream (AT_SEQUENCE_NUMBER its first, to its last). */
export const readStreamRange = async (call: StreamsCall, info: BatchInfo): Promise<DynamoDBRecord[]> => {
  const end = BigInt(info.endSequenceNumber);
  let { ShardIterator: iterator } = await call<{ ShardIterator?: string }>('GetShardIterator', {
    StreamArn: info.streamArn,
    ShardId: info.shardId,
    ShardIteratorType: 'AT_SEQUENCE_NUMBER',
    SequenceNumber: info.startSequenceNumber,
  });
  const records: DynamoDBRecord[] = [];
  let empty = 0;
  while (iterator && empty < EMPTY_PAGES) {
    const page = await call<{ Records?: DynamoDBRecord[]; NextShardIterator?: string }>('GetRecords', {
      ShardIterator: iterator,
      Limit: 1000,
    });
    const read = page.Records ?? [];
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

/** SHA-256 (and its HMAC) for the request signer, from node:crypto. */
type SourceData = string | ArrayBuffer | ArrayBufferView;
const bytesOf = (data: SourceData) =>
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);
class Sha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret ? createHmac('sha256', bytesOf(secret)) : createHash('sha256');
  }
  update(data: SourceData) {
    this.hash.update(bytesOf(data));
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
}

/**
 * A request to an AWS API, signed with the usual credentials (environment, profile, SSO…) when
 * `region` is given, sent as it is to a local engine when not (DynamoDB Local, the local runtime).
 */
export const awsRequest = async (options: {
  url: string;
  service: string;
  region?: string;
  headers: Record<string, string>;
  body: string;
}): Promise<Response> => {
  const url = new URL(options.url);
  let headers: Record<string, string> = { ...options.headers, host: url.host };
  if (options.region) {
    const { SignatureV4 } = await import('@smithy/signature-v4');
    const { defaultProvider } = await import('@aws-sdk/credential-provider-node');
    const signer = new SignatureV4({
      service: options.service,
      region: options.region,
      credentials: defaultProvider(),
      sha256: Sha256,
    });
    const signed = await signer.sign({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      path: url.pathname,
      headers,
      body: options.body,
    });
    headers = signed.headers as Record<string, string>;
  } else {
    // DynamoDB Local reads the access key of a SigV4 header and checks nothing else.
    headers.authorization = `AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/${options.service}/aws4_request, SignedHeaders=host, Signature=0`;
  }
  const { host: _, ...sent } = headers;
  return fetch(url, { method: 'POST', headers: sent, body: options.body });
};

/** The DynamoDB Streams API of a region (signed), or of a DynamoDB Local endpoint. */
export const streamsApi =
  (target: { region: string } | { endpoint: string }): StreamsCall =>
  async <T>(operation: string, body: unknown): Promise<T> => {
    const res = await awsRequest({
      url: 'endpoint' in target ? target.endpoint : `https://streams.dynamodb.${target.region}.amazonaws.com/`,
      service: 'dynamodb',
      region: 'region' in target ? target.region : undefined,
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDBStreams_20120810.${operation}`,
      },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as T & { __type?: string; message?: string; Message?: string };
    if (!res.ok)
      throw new Error(
        `${operation}: ${String(json.__type ?? res.status)
          .split('#')
          .pop()} ${json.message ?? json.Message ?? ''}`,
      );
    return json;
  };

/**
 * The event recorder invoked as Lambda's Invoke API does it (RequestResponse), in a region (signed) or
 * at a local runtime's invoke endpoint; answers the sequence numbers it reported failed, or every one
 * when the invocation itself failed.
 */
export const invokeRecorder =
  (target: { region: string } | { endpoint: string }, functionName: string) =>
  async (records: DynamoDBRecord[]): Promise<string[]> => {
    const base = 'endpoint' in target ? target.endpoint : `https://lambda.${target.region}.amazonaws.com`;
    const res = await awsRequest({
      url: `${base.replace(/\/$/, '')}/2015-03-31/functions/${encodeURIComponent(functionName)}/invocations`,
      service: 'lambda',
      region: 'region' in target ? target.region : undefined,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Records: records }),
    });
    const text = await res.text();
    if (!res.ok || res.headers.get('x-amz-function-error'))
      throw new Error(`${functionName} failed (${res.status}): ${text.slice(0, 300)}`);
    const answer = text ? (JSON.parse(text) as { batchItemFailures?: { itemIdentifier: string }[] }) : {};
    return (answer.batchItemFailures ?? []).map((f) => f.itemIdentifier);
  };
