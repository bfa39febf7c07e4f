import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { SQSClient } from '@aws-sdk/client-sqs';
import type {
  Context,
  DynamoDBBatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  SQSBatchResponse,
  SQSEvent,
  SQSRecord,
} from 'aws-lambda';
import { BUSINESS_METRICS, countIfSystemic, countMetric } from '../core/telemetry.js';

// Queue URLs name their own host; the endpoint (AWS_ENDPOINT_URL_SQS locally) decides where calls go.
export const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });

/** SQS delays a message by at most 15 minutes. */
export const MAX_DELAY_SECONDS = 900;

/** A wanted delay as SQS takes it: whole seconds, 0 to 15 minutes. */
export const sqsDelay = (seconds: number) => Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil(seconds)));

/**
 * What became of one queue message, for both workers: `retry` leaves it to SQS to deliver again
 * (and, after `maxReceiveCount` receives, to the dead-letter queue).
 */
export type MessageOutcome = 'done' | 'retry';

/**
 * A batch's records, each handled on its own by `processor`: the failed ones answered back
 * (ReportBatchItemFailures) and counted (`QueueRecordsFailed`), never thrown.
 */
const eachReported = async (
  processor: BatchProcessor,
  event: SQSEvent | DynamoDBStreamEvent,
  handle: CallableFunction,
  context: Context,
) => {
  const response = await processPartialResponse(event, handle, processor, { context, throwOnFullBatchFailure: false });
  countMetric(BUSINESS_METRICS.queueRecordsFailed, response.batchItemFailures.length);
  return response;
};

/**
 * A queue consumer's batch (ReportBatchItemFailures): each message on its own, each failed message
 * reported back for SQS to deliver again, and counted (`QueueRecordsFailed`). A batch whose every
 * message failed is answered the same way, not thrown: at low traffic most batches hold one message,
 * and a transient supplier failure is no Lambda error, so the errors alarm keeps meaning a fault of
 * the function itself. A message that throws an error no retry mends (AccessDenied, a bug) is counted
 * as `SystemicErrors` too, which pages at the first (lib/constructs/alarms.ts).
 */
export const sqsBatchHandler = (handle: (received: SQSRecord, context?: Context) => Promise<unknown>) => {
  // One processor per environment: Lambda runs one invocation at a time in it.
  const processor = new BatchProcessor(EventType.SQS);
  const counted = async (received: SQSRecord, context?: Context) => {
    try {
      return await handle(received, context);
    } catch (error) {
      countIfSystemic(error);
      throw error;
    }
  };
  return (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
    eachReported(processor, event, counted, context);
};

/**
 * A work queue's consumer (shared/work/runner.ts): a received message whose outcome is `retry` is reported failed,
 * for SQS to deliver again (after the backoff the runner gave it, if any).
 */
export const workQueueHandler = (run: (received: SQSRecord, context?: Context) => Promise<MessageOutcome>) =>
  sqsBatchHandler(async (received, context) => {
    if ((await run(received, context)) === 'retry') throw new Error('work item failed; left for SQS to deliver again');
  });

/**
 * A change stream consumer's batch (ReportBatchItemFailures): the stream writes in order, each on its own; a
 * failed one is reported, and Lambda hands the batch over again from it (the stream keeps its place,
 * nothing after it is lost), bisecting a batch that keeps failing (lib/constructs/consumers.ts).
 */
export const streamBatchHandler = (handle: (written: DynamoDBRecord) => Promise<unknown>) => {
  const processor = new BatchProcessor(EventType.DynamoDBStreams);
  return (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> =>
    eachReported(processor, event, handle, context);
};
