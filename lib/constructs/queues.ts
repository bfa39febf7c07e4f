import { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { DeployConfig } from '../config.js';
import { consumedQueue } from '../functions.js';
import { consumers, type QueueName } from '../routes.js';

/** Which queue is the dead-letter queue of which; typed as a full record so a new QueueName cannot be forgotten. */
const QUEUE_LAYOUT: Record<QueueName, { deadLetterFor?: QueueName }> = {
  syncDlq: { deadLetterFor: 'sync' },
  fulfillmentDlq: { deadLetterFor: 'fulfillment' },
  // A poll's message is never reported failed for a shop's failure; its DLQ only catches the service's own.
  pollDlq: { deadLetterFor: 'poll' },
  // Nothing drains it: a delivery's own failures never reach it (its worker sends each next try), only
  // the service's, which its backlog alarm reports.
  deliveryDlq: { deadLetterFor: 'delivery' },
  // An app webhook whose handler kept failing (a compliance request): its delivery is still kept in the
  // table; the backlog alarm reports it and a redrive runs it again.
  appDlq: { deadLetterFor: 'app' },
  app: {},
  sync: {},
  delivery: {},
  fulfillment: {},
  poll: {},
};

/** Every queue of the stack. */
export const QUEUE_NAMES = Object.keys(QUEUE_LAYOUT) as QueueName[];

/** The work queue whose dead letters `queue` holds; undefined for a work queue. */
export const deadLetterFor = (queue: QueueName) => QUEUE_LAYOUT[queue].deadLetterFor;

/** AWS's advice for an SQS event source: a visibility timeout of six times the function's timeout. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;
/**
 * SQS's longest retention, on every queue but the poll queue: a work queue's messages must outlast an
 * outage of a supplier or of the workers (SQS's default, 4 days, would silently drop accepted orders),
 * and a dead letter keeps its original enqueue time, so its DLQ must keep it at least as long.
 */
export const MESSAGE_RETENTION = Duration.days(14);

/**
 * A poll message is one store's "look for what changed" of one run: after an hour or two it is
 * obsolete (the next runs poll the store again from its watermark), and a backlog of them after an
 * outage would only poll every store many times over (`-c pollMessageRetentionSeconds`). Its DLQ keeps
 * the 14 days: what lands there is the service's own failure, kept to be looked at.
 */
const retentionOf = (queue: QueueName, config: Pick<DeployConfig, 'pollMessageRetentionSeconds'>) =>
  queue === 'poll' ? Duration.seconds(config.pollMessageRetentionSeconds) : MESSAGE_RETENTION;

/** Six times the timeout of the queue's consumer(s); SQS's default when nothing consumes it. */
export const visibilityTimeoutSeconds = (queue: QueueName): number | undefined => {
  const timeouts = consumers.filter((c) => consumedQueue(c) === queue).map((c) => c.timeoutSeconds);
  return timeouts.length ? VISIBILITY_TIMEOUT_FACTOR * Math.max(...timeouts) : undefined;
};

const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/** The construct id of a queue, which its logical id derives from: `SyncQueue`, `SyncDlq`. */
export const queueId = (queue: QueueName) => (deadLetterFor(queue) ? pascal(queue) : `${pascal(queue)}Queue`);

/** The work queues, each with its dead-letter queue after `maxReceiveCount` receives. */
export const addQueues = (scope: Construct, config: DeployConfig): Record<QueueName, sqs.Queue> => {
  const queues = {} as Record<QueueName, sqs.Queue>;
  const names = Object.keys(QUEUE_LAYOUT) as QueueName[];
  const visibility = (name: QueueName) => {
    const seconds = visibilityTimeoutSeconds(name);
    return seconds === undefined ? undefined : Duration.seconds(seconds);
  };
  // Dead-letter queues first: the work queues name them in their redrive policy.
  for (const name of names.filter(deadLetterFor)) {
    queues[name] = new sqs.Queue(scope, queueId(name), {
      // SQS-managed encryption: a KMS key would cost a KMS request per batch of messages, and the
      // messages carry ids, never secrets.
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: retentionOf(name, config),
      visibilityTimeout: visibility(name),
      removalPolicy: config.removalPolicy,
    });
  }
  for (const name of names.filter((n) => !deadLetterFor(n))) {
    const deadLetter = names.find((n) => deadLetterFor(n) === name);
    queues[name] = new sqs.Queue(scope, queueId(name), {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: retentionOf(name, config),
      visibilityTimeout: visibility(name),
      deadLetterQueue: deadLetter ? { queue: queues[deadLetter], maxReceiveCount: config.maxReceiveCount } : undefined,
      // Deleting a prod stack keeps what the queues hold (up to 14 days of accepted work), as it keeps the table.
      removalPolicy: config.removalPolicy,
    });
  }
  return queues;
};
