/**
 * How Lambda reads the table's change stream for its consumer (the event recorder): the settings of
 * its event source mapping (lib/constructs/consumers.ts), which the local runtime's poller
 * (lib/local/streams.ts) applies the same way. No CDK import: the local runtime loads this.
 */
export const STREAM_MAPPING = {
  /** How long a batch waits for more records before it goes with fewer than its batch size. */
  batchingWindowSeconds: 1,
  /**
   * How many batches of one shard run at once: records of one item stay in order (Lambda keeps a key's
   * records on one of them), and a flash sale's writes are not queued behind one invocation at a time.
   */
  parallelizationFactor: 5,
  /**
   * Retries of a failing batch after its first try (a bisected half is no retry): then its records go
   * to the on-failure destination and the shard moves on, so one record that keeps failing holds its
   * shard for seconds, not until the stream drops it.
   */
  retryAttempts: 3,
  /**
   * A record older than this is not handed over but sent to the on-failure destination: a consumer so far
   * behind (IteratorAge pages after 5 minutes) leaves 18 of the stream's 24 hours to replay it.
   */
  maxRecordAgeSeconds: 6 * 3600,
  /**
   * The items whose writes the event recorder reads (shared/events/changes.ts): an order's record, at its
   * first job's key (`SK` `SJ`), and the stores (`RST`, `SST`: a disconnection). Lambda drops the other
   * records before any invocation, so the writes that report nothing cost nothing. A new kind of event
   * from another item adds its key here.
   */
  recordedSortKeys: ['SJ', 'RST', 'SST'],
} as const;

/** Whether a stream record passes the mapping's filter (`recordedSortKeys`), as Lambda's filter decides it. */
export const isRecordedItem = (record: { dynamodb?: { Keys?: Record<string, { S?: string } | undefined> } }) =>
  (STREAM_MAPPING.recordedSortKeys as readonly string[]).includes(record.dynamodb?.Keys?.SK?.S ?? '');

/**
 * What Lambda sends to a DynamoDB stream mapping's on-failure destination for a batch it gave up on:
 * where the records are, never the records themselves (so no item's data is in the message).
 */
export interface StreamFailure {
  requestContext: { requestId: string; functionArn: string; condition: string; approximateInvokeCount: number };
  responseContext?: { statusCode?: number; executedVersion?: string; functionError?: string };
  version: '1.0';
  timestamp: string;
  DDBStreamBatchInfo: {
    shardId: string;
    startSequenceNumber: string;
    endSequenceNumber: string;
    approximateArrivalOfFirstRecord: string;
    approximateArrivalOfLastRecord: string;
    batchSize: number;
    streamArn: string;
  };
}
