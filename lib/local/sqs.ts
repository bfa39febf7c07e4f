import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { startFauxqs } from 'fauxqs';
import { lambdaContext, type LambdaHandler } from './lambda.js';

export interface LocalQueue {
  url: string;
  arn: string;
}

export const startSqs = async () => {
  const server = await startFauxqs({ port: 0, logger: false });
  const endpoint = `http://127.0.0.1:${server.port}`;
  const client = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    useQueueUrlAsEndpoint: false,
  });

  const arnOf = async (url: string) => {
    const out = await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
    return out.Attributes!.QueueArn!;
  };

  /** A work queue and its DLQ, wired as the CDK stack wires them. */
  const createQueuePair = async (
    name: string,
    options: { visibilityTimeoutSeconds: number; maxReceiveCount: number },
  ) => {
    const dlqUrl = (await client.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }))).QueueUrl!;
    const dlq = { url: dlqUrl, arn: await arnOf(dlqUrl) };
    const url = (
      await client.send(
        new CreateQueueCommand({
          QueueName: name,
          Attributes: {
            VisibilityTimeout: String(options.visibilityTimeoutSeconds),
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: options.maxReceiveCount }),
          },
        }),
      )
    ).QueueUrl!;
    return { queue: { url, arn: await arnOf(url) }, dlq };
  };

  return {
    endpoint,
    client,
    createQueuePair,
    stop: async () => {
      client.destroy();
      await server.stop();
    },
  };
};

const toRecord = (message: Message, queue: LocalQueue): SQSEvent['Records'][number] => ({
  messageId: message.MessageId!,
  receiptHandle: message.ReceiptHandle!,
  body: message.Body ?? '',
  attributes: {
    ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? '1',
    SentTimestamp: message.Attributes?.SentTimestamp ?? String(Date.now()),
    SenderId: 'local',
    ApproximateFirstReceiveTimestamp: message.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
  },
  messageAttributes: {},
  md5OfBody: message.MD5OfBody ?? '',
  eventSource: 'aws:sqs',
  eventSourceARN: queue.arn,
  awsRegion: 'us-east-1',
});

/**
 * What Lambda's SQS event source mapping does: long-polls the queue with up to `maxConcurrency`
 * pollers, invokes the handler with a batch, deletes the messages that succeeded and leaves the
 * ones named in `batchItemFailures` (or the whole batch, if the handler throws) to come back
 * after the visibility timeout, and so to the DLQ after `maxReceiveCount` receives.
 */
export const startPoller = (options: {
  client: SQSClient;
  queue: LocalQueue;
  name: string;
  handler: LambdaHandler;
  batchSize: number;
  maxConcurrency?: number;
  timeoutSeconds: number;
  onInvoke?: (name: string, ms: number, batch: number) => void;
}) => {
  let running = true;
  const controller = new AbortController();

  const pollOnce = async () => {
    const out = await options.client.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queue.url,
        MaxNumberOfMessages: options.batchSize,
        WaitTimeSeconds: 1,
        MessageSystemAttributeNames: ['All'],
      }),
      { abortSignal: controller.signal },
    );
    const messages = out.Messages ?? [];
    if (!messages.length || !running) return;
    let failed = new Set(messages.map((m) => m.MessageId!));
    const started = performance.now();
    try {
      const result = (await options.handler(
        { Records: messages.map((m) => toRecord(m, options.queue)) } satisfies SQSEvent,
        lambdaContext(options.name, options.timeoutSeconds),
      )) as SQSBatchResponse | undefined;
      failed = new Set((result?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (error) {
      // Powertools answers a batch whose every record failed by throwing, as Lambda expects; the
      // records' own failures are already logged by the handler.
      if ((error as Error)?.name === 'FullBatchFailureError')
        console.warn(`local ${options.name}: every record of the batch failed; SQS will deliver them again`);
      else console.error(`local ${options.name}: invocation failed, the batch will be retried`, error);
    }
    options.onInvoke?.(options.name, performance.now() - started, messages.length);
    const done = messages.filter((m) => !failed.has(m.MessageId!));
    if (done.length) {
      await options.client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queue.url,
          Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
    }
  };

  const loop = async () => {
    while (running) {
      try {
        await pollOnce();
      } catch (error) {
        if (!running) break;
        console.error(`local ${options.name}: poll failed`, (error as Error).message);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };

  const loops = Array.from({ length: options.maxConcurrency ?? 2 }, loop);
  return {
    stop: async () => {
      running = false;
      controller.abort();
      await Promise.allSettled(loops);
    },
  };
};
