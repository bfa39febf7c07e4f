import { setTimeout as sleep } from 'node:timers/promises';
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type Message,
  ReceiveMessageCommand,
  SetQueueAttributesCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { startFauxqs } from 'fauxqs';
import { type FunctionPool, InvocationError } from './environments.js';

export interface LocalQueue {
  url: string;
  arn: string;
}

const arnOf = async (client: SQSClient, url: string) => {
  const out = await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  return out.Attributes!.QueueArn!;
};

/**
 * Creates a queue, or finds the one a persistent data directory kept and gives it today's
 * attributes (SQS refuses a CreateQueue whose attributes differ from the existing queue's).
 */
const ensureQueue = async (client: SQSClient, name: string, attributes: Record<string, string> = {}) => {
  try {
    return (await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl!;
  } catch (error) {
    if ((error as Error).name !== 'QueueNameExists') throw error;
    const url = (await client.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl!;
    await client.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: attributes }));
    return url;
  }
};

/**
 * Every message left in a queue, received once and hidden for the rest of the run (so each is read
 * once): what a stopping runtime's DLQs still hold.
 */
const drainQueue = async (client: SQSClient, url: string) => {
  const bodies: string[] = [];
  for (;;) {
    const out = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 3600,
      }),
    );
    if (!out.Messages?.length) return bodies;
    bodies.push(...out.Messages.map((m) => m.Body ?? ''));
  }
};

/**
 * The fauxqs SQS emulator, in this process. With `dataDir` it writes every queue and message
 * through to SQLite there and restores them (in-flight ones with their visibility deadlines) on
 * the next start; without, everything is in memory.
 */
export const startSqs = async (dataDir?: string) => {
  const server = await startFauxqs({ port: 0, logger: false, ...(dataDir ? { dataDir } : {}) });
  const endpoint = `http://127.0.0.1:${server.port}`;
  const client = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    useQueueUrlAsEndpoint: false,
  });

  /** A work queue and its DLQ, wired as the CDK stack wires them. */
  const createQueuePair = async (
    name: string,
    options: { visibilityTimeoutSeconds: number; maxReceiveCount: number },
  ) => {
    const dlqUrl = await ensureQueue(client, `${name}-dlq`);
    const dlq = { url: dlqUrl, arn: await arnOf(client, dlqUrl) };
    const url = await ensureQueue(client, name, {
      VisibilityTimeout: String(options.visibilityTimeoutSeconds),
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: options.maxReceiveCount }),
    });
    return { queue: { url, arn: await arnOf(client, url) }, dlq };
  };

  return {
    endpoint,
    client,
    createQueuePair,
    /** A queue of its own (no DLQ): the change stream's on-failure destination. */
    createQueue: async (name: string): Promise<LocalQueue> => {
      const url = await ensureQueue(client, name);
      return { url, arn: await arnOf(client, url) };
    },
    drain: (url: string) => drainQueue(client, url),
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

/** Lambda's limit on a cold start: a batch's messages stay hidden for it on top of the timeout. */
export const INIT_ALLOWANCE_SECONDS = 10;

interface PollerOptions {
  client: SQSClient;
  queue: LocalQueue;
  pool: FunctionPool;
  batchSize: number;
  maxConcurrency: number;
  visibilityTimeoutSeconds: number;
  onInvoke?: (name: string, ms: number, batch: number) => void;
  /** Called with each batch received, before its invocation (tests search the messages). */
  onReceive?: (messages: Message[]) => void;
}

/** The ids of the messages that did not succeed, and the receipt handles the function gave a visibility. */
const invokeBatch = async (
  { pool, queue, holdSeconds, onInvoke }: Pick<PollerOptions, 'pool' | 'queue' | 'onInvoke'> & { holdSeconds: number },
  messages: Message[],
  receivedAt: number,
) => {
  const name = pool.fn.name;
  const started = performance.now();
  try {
    const { result, ms, visibilitySet } = await pool.invoke(
      { Records: messages.map((m) => toRecord(m, queue)) } satisfies SQSEvent,
      {
        // The batch is hidden until then; one second is left for the delete.
        deadline: receivedAt + (holdSeconds - 1) * 1000,
      },
    );
    onInvoke?.(name, ms, messages.length);
    const failures = (result as SQSBatchResponse | undefined)?.batchItemFailures ?? [];
    return { failed: new Set(failures.map((f) => f.itemIdentifier)), visibilitySet: new Set(visibilitySet) };
  } catch (error) {
    onInvoke?.(name, performance.now() - started, messages.length);
    const kind = error instanceof InvocationError ? error.kind : 'handler';
    const reason = error instanceof InvocationError ? error.detail.message : (error as Error).message;
    // The consumers report failed records in their answer (shared/aws/batch.ts): what is thrown here
    // is a fault of the function or of its environment.
    if (kind === 'timeout') console.error(`local ${name}: ${reason}; the batch will come back`);
    else if (kind === 'crash')
      console.error(`local ${name}: the environment died (${reason}); the batch will come back`);
    else console.error(`local ${name}: invocation failed, the batch will come back`, error);
    const visibilitySet = error instanceof InvocationError ? error.visibilitySet : [];
    return { failed: new Set(messages.map((m) => m.MessageId!)), visibilitySet: new Set(visibilitySet) };
  }
};

/** Deletes a batch's messages that succeeded and gives the others back on the queue's own schedule. */
const settleBatch = async (
  { client, queue, visibilityTimeoutSeconds }: PollerOptions,
  messages: Message[],
  { failed, visibilitySet }: { failed: Set<string>; visibilitySet: Set<string> },
  receivedAt: number,
) => {
  const done = messages.filter((m) => !failed.has(m.MessageId!));
  // What the function gave a visibility itself (its backoff) comes back when it said.
  const retry = messages.filter((m) => failed.has(m.MessageId!) && !visibilitySet.has(m.ReceiptHandle!));
  if (done.length) {
    await client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
      }),
    );
  }
  if (retry.length) {
    const left = visibilityTimeoutSeconds - (Date.now() - receivedAt) / 1000;
    await client.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queue.url,
        Entries: retry.map((m, i) => ({
          Id: String(i),
          ReceiptHandle: m.ReceiptHandle!,
          // Not 0: fauxqs 2.4.1 loses a message made visible at once when it persists the queue.
          VisibilityTimeout: Math.max(1, Math.round(left)),
        })),
      }),
    );
  }
};

/**
 * One long poll of the queue, of 20 s as Lambda's event source mapping polls: fauxqs answers it as soon
 * as a message is there (sent, delayed no more, or visible again), so a longer wait delays nothing, and
 * an idle queue costs one receive in 20 s, not one a second (19 pollers: a tenth of an idle runtime's
 * CPU, in every test's runtime too; issue 41). A batch is hidden for the function's timeout plus a cold start.
 */
const receiveBatch = ({ client, queue, batchSize }: PollerOptions, holdSeconds: number, abortSignal: AbortSignal) =>
  client.send(
    new ReceiveMessageCommand({
      QueueUrl: queue.url,
      MaxNumberOfMessages: batchSize,
      WaitTimeSeconds: 20,
      VisibilityTimeout: holdSeconds,
      MessageSystemAttributeNames: ['All'],
    }),
    { abortSignal },
  );

/**
 * What Lambda's SQS event source mapping does: long-polls the queue, invokes the function with a
 * batch in one of its execution environments, deletes the messages that succeeded and leaves the
 * ones named in `batchItemFailures` (or the whole batch, if the invocation failed, timed out or
 * crashed) to come back after the visibility timeout, and so to the DLQ after `maxReceiveCount`
 * receives. It polls with one loop and adds another whenever every loop is busy with a batch, up to
 * the function's maximum concurrency; an extra loop that finds the queue empty goes away, unless no
 * other loop is polling.
 *
 * On AWS the queue's visibility timeout is six times the function's, so a running invocation
 * always holds its messages. Locally the queue's is short (failed messages come back fast), so
 * each batch is received with a visibility of the function's timeout plus a cold start, and the
 * invocation is abandoned at its timeout: a message is never handed to a second invocation while
 * the first may still be working on it. Messages that did not succeed are then given back on the
 * queue's own schedule, `visibilityTimeoutSeconds` after their receive, unless the function set
 * their visibility itself (the sync worker's backoff).
 */
export const startPoller = (options: PollerOptions) => {
  const { queue, pool } = options;
  const holdSeconds = pool.fn.timeoutSeconds + INIT_ALLOWANCE_SECONDS;
  return pollElastically(pool.fn.name, options.maxConcurrency, {
    receive: async (signal) => (await receiveBatch(options, holdSeconds, signal)).Messages ?? [],
    handle: async (messages, receivedAt) => {
      options.onReceive?.(messages);
      const outcome = await invokeBatch({ pool, queue, holdSeconds, onInvoke: options.onInvoke }, messages, receivedAt);
      await settleBatch(options, messages, outcome, receivedAt);
    },
  });
};

/**
 * The polling loops of an event source: one loop, and another added whenever every loop is busy with
 * what it received, up to `maxConcurrency`; an extra loop that finds nothing goes away, unless no other
 * loop is polling. `receive` answers what came (nothing: idle); `handle` runs it.
 */
export const pollElastically = (
  name: string,
  maxConcurrency: number,
  {
    receive,
    handle,
  }: {
    receive: (signal: AbortSignal) => Promise<Message[]>;
    handle: (messages: Message[], receivedAt: number) => Promise<void>;
  },
) => {
  let running = true;
  const controller = new AbortController();
  const loops = new Set<Promise<void>>();
  let polling = 0;

  /** One receive and its handling; `idle` when nothing came. */
  const pollOnce = async (): Promise<'idle' | 'busy'> => {
    polling++;
    const messages = await receive(controller.signal).finally(() => polling--);
    const receivedAt = Date.now();
    if (!messages.length || !running) return 'idle';
    // Someone keeps polling while this is being handled, so a message arriving meanwhile
    // starts another invocation (in another environment) rather than waiting for this one.
    if (polling === 0) grow();
    await handle(messages, receivedAt);
    return 'busy';
  };

  const loop = async (first: boolean) => {
    while (running) {
      try {
        // An extra loop leaves when the queue is empty, but never while it is the only one polling:
        // the others may all be busy for a while, and a message arriving meanwhile needs a taker.
        if ((await pollOnce()) === 'idle' && !first && polling > 0) return;
      } catch (error) {
        if (!running) break;
        console.error(`local ${name}: poll failed`, (error as Error).message);
        await sleep(500).catch(() => undefined);
      }
    }
  };

  const grow = () => {
    if (!running || loops.size >= maxConcurrency) return;
    const added: Promise<void> = loop(loops.size === 0).finally(() => loops.delete(added));
    loops.add(added);
  };

  grow();
  return {
    /** Stops polling, and waits for the invocations under way to finish and settle their batches. */
    stop: async () => {
      running = false;
      controller.abort();
      await Promise.allSettled([...loops]);
    },
  };
};
