import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqs, sqsDelay } from '../aws/sqs.js';

/** Batches of ten in flight at once: an order for a hundred source stores is enqueued in one round trip. */
const BATCHES_IN_FLIGHT = 10;

/** SendMessageBatch takes ten at a time. */
const BATCH_SIZE = 10;

const sendChunk = async (queueUrl: string, chunk: unknown[], delay: number) => {
  if (chunk.length === 1) {
    await sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(chunk[0]), DelaySeconds: delay }),
    );
    return;
  }
  const entries = chunk.map((message, index) => ({
    Id: String(index),
    MessageBody: JSON.stringify(message),
    DelaySeconds: delay,
  }));
  const out = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
  if (out.Failed?.length) throw new Error(`${out.Failed.length} messages were not accepted`);
};

/**
 * One message per work item, on a work queue, delayed by `delaySeconds` (up to SQS's 15 minutes).
 * Throws if any was refused: the caller's own message then comes back and sends them again.
 */
export const sendWork = async (queueUrl: string, messages: unknown[], delaySeconds = 0) => {
  const delay = sqsDelay(delaySeconds);
  const chunks: unknown[][] = [];
  for (let i = 0; i < messages.length; i += BATCH_SIZE) chunks.push(messages.slice(i, i + BATCH_SIZE));
  for (let i = 0; i < chunks.length; i += BATCHES_IN_FLIGHT) {
    await Promise.all(chunks.slice(i, i + BATCHES_IN_FLIGHT).map((chunk) => sendChunk(queueUrl, chunk, delay)));
  }
};

/** Sets when a received message comes back (its visibility timeout, from now): the backoff after a failure. */
export const setVisibility = (queueUrl: string, receiptHandle: string, seconds: number) =>
  sqs.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: queueUrl,
      ReceiptHandle: receiptHandle,
      VisibilityTimeout: seconds,
    }),
  );
