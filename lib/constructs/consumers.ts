import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { DeployConfig } from '../config.js';
import { consumers, isScheduled, type QueueName, scheduleMinutes } from '../routes.js';
import { deadLetterFor } from './queues.js';

/** How late a scheduled run may still start: a few minutes, never the 6 hours (24 for EventBridge) of the defaults. */
export const SCHEDULED_EVENT_MAX_AGE = Duration.minutes(5);

/**
 * The items whose writes the event recorder reads (shared/events/changes.ts): an order's record, at its
 * first job's key (`SK` `SJ`), and the stores (`RST`, `SST`: a disconnection). Lambda drops the other
 * records before any invocation, so the writes that report nothing cost nothing. A new kind of event
 * from another item adds its key here.
 */
export const RECORDED_ITEMS = [
  lambda.FilterCriteria.filter({ dynamodb: { Keys: { SK: { S: lambda.FilterRule.or('SJ', 'RST', 'SST') } } } }),
];

/**
 * How many batches of one shard run at once: records of one item stay in order (Lambda keeps a key's
 * records on one of them), and a flash sale's writes are not queued behind one invocation at a time.
 */
export const STREAM_PARALLELIZATION = 5;

/**
 * Batching windows longer than the second of the order path, for queues whose work no one waits on by
 * the second: a tag and a fulfillment's tracking (FulfillmentWorker) wait for the reseller's platform
 * (1–1.5 s a call), once per invocation as a batch's records go side by side, so ten in one invocation
 * cost what one does. `bench:monthly`: at 1M orders a month (2.5 such messages an order, about one a
 * second), 10 s instead of 1 s saves about $10 of Lambda a month. The sync queue keeps 1 s (an order
 * reaches its supplier within seconds).
 */
export const BATCHING_WINDOW_SECONDS: Partial<Record<QueueName, number>> = { fulfillment: 10 };

/** What invokes each consumer of lib/routes.ts: its queue's messages, the table's change stream, or a schedule. */
export const addConsumerTriggers = (
  scope: Construct,
  functions: Map<string, lambda.Function>,
  queues: Record<QueueName, sqs.Queue>,
  table: dynamodb.ITable,
  config: Pick<DeployConfig, 'pollIntervalSeconds'>,
) => {
  for (const consumer of consumers) {
    const fn = functions.get(consumer.name)!;
    if ('stream' in consumer.trigger) {
      // Retried until it succeeds (the stream keeps records 24 hours; the IteratorAge alarm pages long before),
      // the failed records only, a batch that keeps failing halved until the record at fault is alone.
      fn.addEventSource(
        new DynamoEventSource(table, {
          startingPosition: lambda.StartingPosition.TRIM_HORIZON,
          batchSize: consumer.trigger.batchSize,
          maxBatchingWindow: Duration.seconds(1),
          parallelizationFactor: STREAM_PARALLELIZATION,
          bisectBatchOnError: true,
          reportBatchItemFailures: true,
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
