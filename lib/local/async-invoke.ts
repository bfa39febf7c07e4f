import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { type FunctionPool, InvocationError } from './environments.js';
import type { LocalQueue } from './sqs.js';
import { INIT_ALLOWANCE_SECONDS, pollElastically } from './sqs.js';

/**
 * Lambda's asynchronous invocation (InvocationType `Event`), locally: what Lambda keeps in its own
 * internal queue is kept on a fauxqs queue of the function's (`queue`, persisted with the data
 * directory, so an accepted event outlives a SIGKILL of the runtime). Its events run in the function's
 * environments, at most its concurrency at once (a reserved concurrency: more wait on the queue, as a
 * throttled event waits in Lambda's); an invocation that threw, timed out or crashed is run again after
 * `retryDelaySeconds` (Lambda: about 1 and 2 minutes), `retryAttempts` more times at most, and then, or
 * once older than `maxEventAgeSeconds`, its invocation record goes to `onFailure`, as Lambda sends it.
 */
export interface AsyncInvokeOptions {
  client: SQSClient;
  pool: FunctionPool;
  queue: LocalQueue;
  retryAttempts: number;
  maxEventAgeSeconds: number;
  retryDelaySeconds: number;
  onFailure: LocalQueue;
  onInvoke?: (name: string, ms: number) => void;
}

/** Accepts one event for the function: Lambda's 202, once it is on its queue. */
export const enqueueEvent = (client: SQSClient, queue: LocalQueue, payload: string) =>
  client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: payload }));

/** What Lambda sends an on-failure destination (its "invocation record"): ids of the event, its payload, why. */
const invocationRecord = (
  name: string,
  message: Message,
  condition: 'RetriesExhausted' | 'EventAgeExceeded',
  error?: unknown,
) => {
  const detail = error instanceof InvocationError ? error.detail : undefined;
  let requestPayload: unknown = message.Body;
  try {
    requestPayload = JSON.parse(message.Body ?? 'null');
  } catch {
    // Lambda keeps a payload that is not JSON as it came.
  }
  return {
    version: '1.0',
    timestamp: new Date().toISOString(),
    requestContext: {
      requestId: message.MessageId,
      functionArn: `arn:aws:lambda:us-east-1:000000000000:function:${name}:$LATEST`,
      condition,
      approximateInvokeCount: Number(message.Attributes?.ApproximateReceiveCount ?? 1),
    },
    requestPayload,
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
    responsePayload: detail ? { errorType: detail.name, errorMessage: detail.message } : null,
  };
};

/** One event's run: deleted once it succeeded; else retried, or given up on to `onFailure`. */
const eventRunner = (options: AsyncInvokeOptions) => {
  const { client, pool, queue } = options;
  const name = pool.fn.name;
  const giveUp = async (message: Message, condition: 'RetriesExhausted' | 'EventAgeExceeded', error?: unknown) => {
    const record = invocationRecord(name, message, condition, error);
    await client.send(new SendMessageCommand({ QueueUrl: options.onFailure.url, MessageBody: JSON.stringify(record) }));
    await client.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.ReceiptHandle! }));
    console.error(`local ${name}: an asynchronous event went to its on-failure destination (${condition})`);
  };
  const holdSeconds = pool.fn.timeoutSeconds + INIT_ALLOWANCE_SECONDS;
  return async (message: Message, receivedAt: number) => {
    const sentAt = Number(message.Attributes?.SentTimestamp ?? Date.now());
    if (Date.now() - sentAt > options.maxEventAgeSeconds * 1000) return giveUp(message, 'EventAgeExceeded');
    const started = performance.now();
    try {
      // Ended before the event is visible again (a wait for an environment counts here), so never run twice.
      const deadline = receivedAt + (holdSeconds - 1) * 1000;
      const { ms } = await pool.invoke(JSON.parse(message.Body ?? 'null'), { deadline });
      options.onInvoke?.(name, ms);
      await client.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.ReceiptHandle! }));
    } catch (error) {
      options.onInvoke?.(name, performance.now() - started);
      const invokes = Number(message.Attributes?.ApproximateReceiveCount ?? 1);
      if (invokes > options.retryAttempts) return giveUp(message, 'RetriesExhausted', error);
      console.error(`local ${name}: asynchronous invocation failed; Lambda tries it again`, (error as Error).message);
      await client.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queue.url,
          ReceiptHandle: message.ReceiptHandle!,
          VisibilityTimeout: Math.max(1, options.retryDelaySeconds),
        }),
      );
    }
  };
};

export const startAsyncInvokes = (options: AsyncInvokeOptions) => {
  const { client, pool, queue } = options;
  const holdSeconds = pool.fn.timeoutSeconds + INIT_ALLOWANCE_SECONDS;
  const run = eventRunner(options);
  const receive = async (abortSignal: AbortSignal) => {
    const command = new ReceiveMessageCommand({
      QueueUrl: queue.url,
      MaxNumberOfMessages: 1,
      WaitTimeSeconds: 1,
      VisibilityTimeout: holdSeconds,
      MessageSystemAttributeNames: ['All'],
    });
    return (await client.send(command, { abortSignal })).Messages ?? [];
  };
  return pollElastically(`${pool.fn.name}: asynchronous events`, pool.fn.maxConcurrency, {
    receive,
    handle: ([message], receivedAt) => run(message, receivedAt),
  });
};
