import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct, IConstruct } from 'constructs';
import type { DeployConfig } from '../config.js';
import { acknowledge } from '../nag.js';
import { consumers, type InvokedTrigger, isScheduled, type QueueName, scheduleMinutes } from '../routes.js';
import { STREAM_MAPPING } from '../stream-mapping.js';
import { deadLetterFor, MESSAGE_RETENTION } from './queues.js';

/** How late a scheduled run may still start: a few minutes, never the 6 hours (24 for EventBridge) of the defaults. */
export const SCHEDULED_EVENT_MAX_AGE = Duration.minutes(5);

/** The event recorder's filter: only the writes of the items that report changes (lib/stream-mapping.ts). */
export const RECORDED_ITEMS = [
  lambda.FilterCriteria.filter({
    dynamodb: { Keys: { SK: { S: lambda.FilterRule.or(...STREAM_MAPPING.recordedSortKeys) } } },
  }),
];

/** How many batches of one shard run at once (lib/stream-mapping.ts). */
export const STREAM_PARALLELIZATION = STREAM_MAPPING.parallelizationFactor;

/**
 * The change stream mapping's on-failure destination: where Lambda puts the place (shard, sequence
 * numbers) of a batch it gave up on, for `npm run events -- replay-failed` to record it. Kept 14 days
 * like every queue, though the stream keeps the records themselves 24 hours; its alarm pages at the first.
 */
export const addStreamFailureQueue = (scope: Construct, config: Pick<DeployConfig, 'removalPolicy'>) => {
  const queue = new sqs.Queue(scope, 'EventRecorderFailures', {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: MESSAGE_RETENTION,
    removalPolicy: config.removalPolicy,
  });
  acknowledge(
    queue.node.defaultChild as IConstruct,
    'AwsSolutions-SQS3',
    'It is itself a destination (the change stream mapping on-failure one), read by the replay command only.',
  );
  return queue;
};

/**
 * Batching windows longer than the second of the order path, for queues whose work no one waits on by
 * the second: a tag and a fulfillment's tracking (FulfillmentWorker) wait for the reseller's platform
 * (1–1.5 s a call), once per invocation as a batch's records go side by side, so ten in one invocation
 * cost what one does. `bench:monthly`: at 1M orders a month (2.5 such messages an order, about one a
 * second), 10 s instead of 1 s saves about $10 of Lambda a month. The sync queue keeps 1 s (an order
 * reaches its supplier within seconds).
 */
export const BATCHING_WINDOW_SECONDS: Partial<Record<QueueName, number>> = { fulfillment: 10 };

/**
 * Lambda's own queue of asynchronous events: no event source, no poller, no idle cost. A throw is tried
 * `retryAttempts` more times; what still fails, or waited past `maxEventAge` (throttled beyond its
 * reservation), goes to its on-failure queue (the delivery DLQ, whose alarm pages).
 */
const configureInvoked = (fn: lambda.Function, { invoked }: InvokedTrigger, queues: Record<QueueName, sqs.Queue>) =>
  fn.configureAsyncInvoke({
    retryAttempts: invoked.retryAttempts,
    maxEventAge: Duration.seconds(invoked.maxEventAgeSeconds),
    // Lambda sends it with the function's role, which declares sqs:SendMessage on it (lib/routes.ts): no
    // grant added here (SqsDestination's would add GetQueueAttributes and GetQueueUrl, unused).
    onFailure: { bind: () => ({ destination: queues[invoked.onFailure].queueArn }) },
  });

/** What invokes each consumer of lib/routes.ts: its queue's messages, the table's change stream, or a schedule. */
export const addConsumerTriggers = (
  scope: Construct,
  functions: Map<string, lambda.Function>,
  queues: Record<QueueName, sqs.Queue>,
  table: dynamodb.ITable,
  config: Pick<DeployConfig, 'pollIntervalSeconds'>,
  streamFailures: sqs.IQueue,
) => {
  for (const consumer of consumers) {
    const fn = functions.get(consumer.name)!;
    if ('stream' in consumer.trigger) {
      // The failed records only, a batch that keeps failing halved until the record at fault is alone, then
      // retried `retryAttempts` times and set aside in `streamFailures` (its place, for the replay command):
      // one record that keeps failing never holds the records behind it, and nothing is dropped unseen.
      fn.addEventSource(
        new DynamoEventSource(table, {
          startingPosition: lambda.StartingPosition.TRIM_HORIZON,
          batchSize: consumer.trigger.batchSize,
          maxBatchingWindow: Duration.seconds(STREAM_MAPPING.batchingWindowSeconds),
          parallelizationFactor: STREAM_PARALLELIZATION,
          bisectBatchOnError: true,
          reportBatchItemFailures: true,
          retryAttempts: STREAM_MAPPING.retryAttempts,
          maxRecordAge: Duration.seconds(STREAM_MAPPING.maxRecordAgeSeconds),
          onFailure: new SqsDlq(streamFailures),
          filters: RECORDED_ITEMS,
        }),
      );
    } else if ('queue' in consumer.trigger) {
      fn.addEventSource(
        new SqsEventSource(queues[consumer.trigger.queue], {
          batchSize: consumer.trigger.batchSize,
          maxConcurrency: consumer.trigger.maxConcurrency,
          reportBatchItemFailures: true,
          // A second lets a burst of orders share invocations; dead letters are not worth waiting for;
          // work nobody waits on gathers longer (BATCHING_WINDOW_SECONDS).
          maxBatchingWindow: deadLetterFor(consumer.trigger.queue)
            ? undefined
            : Duration.seconds(BATCHING_WINDOW_SECONDS[consumer.trigger.queue] ?? 1),
        }),
      );
    } else if ('invoked' in consumer.trigger) {
      configureInvoked(fn, consumer.trigger, queues);
    } else if (isScheduled(consumer.trigger)) {
      // A failed run is not retried by Lambda's asynchronous invoke either: the next run comes soon. A
      // run that could not start within SCHEDULED_EVENT_MAX_AGE (a throttled account) is dropped, not
      // played hours late next to the runs that followed it.
      fn.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: SCHEDULED_EVENT_MAX_AGE });
      const minutes = scheduleMinutes(consumer.trigger, config);
      new events.Rule(scope, `${consumer.name}Schedule`, {
        description: `Runs ${consumer.name} every ${minutes} minutes`,
        schedule: events.Schedule.rate(Duration.minutes(minutes)),
        // A missed run is made up by the next one a few minutes later.
        targets: [new targets.LambdaFunction(fn, { retryAttempts: 0, maxEventAge: SCHEDULED_EVENT_MAX_AGE })],
      });
    }
  }
};
