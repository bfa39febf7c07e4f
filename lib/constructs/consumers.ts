import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { DeployConfig } from '../config.js';
import { consumers, type QueueName, scheduleMinutes } from '../routes.js';
import { deadLetterFor } from './queues.js';

/** How late a scheduled run may still start: a few minutes, never the 6 hours (24 for EventBridge) of the defaults. */
export const SCHEDULED_EVENT_MAX_AGE = Duration.minutes(5);

/** What invokes each consumer of lib/routes.ts: its queue's messages, or a schedule. */
export const addConsumerTriggers = (
  scope: Construct,
  functions: Map<string, lambda.Function>,
  queues: Record<QueueName, sqs.Queue>,
  config: Pick<DeployConfig, 'pollIntervalSeconds'>,
) => {
  for (const consumer of consumers) {
    const fn = functions.get(consumer.name)!;
    if ('queue' in consumer.trigger) {
      fn.addEventSource(
        new SqsEventSource(queues[consumer.trigger.queue], {
          batchSize: consumer.trigger.batchSize,
          maxConcurrency: consumer.trigger.maxConcurrency,
          reportBatchItemFailures: true,
          // A second lets a burst of orders share invocations; dead letters are not worth waiting for.
          maxBatchingWindow: deadLetterFor(consumer.trigger.queue) ? undefined : Duration.seconds(1),
        }),
      );
    } else {
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
