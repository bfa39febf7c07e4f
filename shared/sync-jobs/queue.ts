import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqs, sqsDelay } from '../aws/sqs.js';
import { config } from '../core/config.js';
import type { JobMessage } from './message.js';

/** Batches of ten in flight at once: an order with a hundred suppliers is enqueued in one round trip. */
const BATCHES_IN_FLIGHT = 10;

/** One message per job; SendMessageBatch takes ten at a time. Throws if any entry was refused. */
export const enqueueJobs = async (messages: JobMessage[], delaySeconds = 0) => {
  const delay = sqsDelay(delaySeconds);
  const send = async (chunk: JobMessage[]) => {
    if (chunk.length === 1) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: config.syncQueueUrl(),
          MessageBody: JSON.stringify(chunk[0]),
          DelaySeconds: delay,
        }),
      );
      return;
    }
    const out = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: config.syncQueueUrl(),
        Entries: chunk.map((message, index) => ({
          Id: String(index),
          MessageBody: JSON.stringify(message),
          DelaySeconds: delay,
        })),
      }),
    );
    if (out.Failed?.length) throw new Error(`${out.Failed.length} sync messages were not accepted`);
  };
  const chunks: JobMessage[][] = [];
  for (let i = 0; i < messages.length; i += 10) chunks.push(messages.slice(i, i + 10));
  for (let i = 0; i < chunks.length; i += BATCHES_IN_FLIGHT) {
    await Promise.all(chunks.slice(i, i + BATCHES_IN_FLIGHT).map(send));
  }
};

/** Sets when a received message comes back (its visibility timeout, from now): the backoff after a failure. */
export const setVisibility = (receiptHandle: string, seconds: number) =>
  sqs.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: config.syncQueueUrl(),
      ReceiptHandle: receiptHandle,
      VisibilityTimeout: seconds,
    }),
  );
