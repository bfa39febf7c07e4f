import { Duration, Stack } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { BUSINESS_METRICS } from '../../shared/core/telemetry.js';
import type { DeployConfig } from '../config.js';
import { consumers, isScheduled, type QueueName, scheduleMinutes } from '../routes.js';
import { WEBHOOK_ROUTE_KEYS, webhookResponseMetric } from './api.js';
import { businessMetric } from './dashboard.js';
import { deadLetterFor, QUEUE_NAMES, queueId } from './queues.js';

/** How long a dead-letter queue may hold a message before it alarms: its handler drains it in seconds. */
export const DLQ_ALARM_MINUTES = 15;

/** How far behind the change stream its consumer may fall (its records' age) before it pages. */
export const STREAM_AGE_ALARM_MINUTES = 5;

/** A consumer's failed share is only judged over this many receives or more (15 minutes). */
export const FAILED_RECORDS_MIN_RECEIVES = 10;

/** p95 of webhook → completed above this alarms: an hour (issue 32). */
export const LATENCY_ALARM_MS = 3_600_000;

/** A Lambda metric for the whole account and region: no dimension, so every function is in it. */
export const accountLambdaMetric = (metricName: 'Errors' | 'Throttles') =>
  new cloudwatch.Metric({
    namespace: 'AWS/Lambda',
    metricName,
    statistic: 'Sum',
    period: Duration.minutes(5),
  });

/** Whether a consumer receives from `queue` (a DLQ with a handler), so its messages may be in flight. */
const drained = (queue: QueueName) => consumers.some((c) => 'queue' in c.trigger && c.trigger.queue === queue);

/** A queue whose every receive pages: the fulfillment DLQ (its MessagesAlarm). */
const everyReceivePages = (queue: QueueName) => deadLetterFor(queue) === 'fulfillment';

/**
 * What a queue holds, each minute (Maximum): visible and in flight when a consumer receives from it;
 * visible alone when nothing does (nothing can be in flight).
 */
const queueHolds = (queue: sqs.IQueue, label: string, inFlightToo: boolean): cloudwatch.IMetric => {
  const minute = Duration.minutes(1);
  const visible = queue.metricApproximateNumberOfMessagesVisible({ period: minute, statistic: 'Maximum' });
  // No label: one metric with a label is written as a metric-math query, and read as one metric either way.
  if (!inFlightToo) return visible;
  return new cloudwatch.MathExpression({
    expression: 'visible + inFlight',
    label,
    period: minute,
    usingMetrics: {
      visible,
      inFlight: queue.metricApproximateNumberOfMessagesNotVisible({ period: minute, statistic: 'Maximum' }),
    },
  });
};

/**
 * What issue 44's alarm levers took away, in alarms and in the metrics they read (a metric-math alarm pays
 * each), from the same rules `addAlarms` follows: `bench:monthly` prints each one's saving.
 */
export const alarmLevers = (config: DeployConfig) => {
  const webhookAlarms = 1 + (config.webhook5xxThreshold < config.api5xxThreshold ? 1 : 0);
  const perRoute = 2 * WEBHOOK_ROUTE_KEYS.length - webhookAlarms;
  const undrained = QUEUE_NAMES.filter((q) => deadLetterFor(q) && !drained(q)).length + 1; // + the stream's
  const receivePaged = consumers.filter((c) => 'queue' in c.trigger && everyReceivePages(c.trigger.queue)).length;
  return [
    {
      lever: `a 429 and a 5xx alarm per webhook route (${WEBHOOK_ROUTE_KEYS.length}), not one over all of them`,
      alarms: perRoute,
      metrics: perRoute,
    },
    {
      lever: `visible + in flight on the ${undrained} queues nothing receives from (visible alone)`,
      alarms: 0,
      metrics: undrained,
    },
    {
      lever: "a failed-records alarm for the fulfillment DLQ's handler (its every receive pages)",
      alarms: receivePaged,
      metrics: 2 * receivePaged,
    },
  ];
};

/** What the alarms watch. */
export interface Watched {
  queues: Record<QueueName, sqs.Queue>;
  functions: Map<string, lambda.Function>;
  api: apigw.HttpApi;
  /** The change stream mapping's on-failure destination (lib/constructs/consumers.ts). */
  streamFailures?: sqs.IQueue;
  /** The stack's key (the secrets key), which encrypts the alarm topic too. */
  key: kms.IKey;
}

const topicArnPrefix = (stack: Stack) => `arn:${stack.partition}:sns:${stack.region}:${stack.account}:`;

/** The secrets key's one statement beyond the functions': CloudWatch's, for this stack's alarm topics' messages. */
export const alarmTopicKeyStatement = (stack: Stack) =>
  new iam.PolicyStatement({
    sid: 'CloudWatchAlarmTopicMessages',
    principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
    actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
    resources: ['*'],
    conditions: {
      StringEquals: { 'aws:SourceAccount': stack.account },
      // The topic is named after the stack by CloudFormation (`<stack>-AlarmTopic…`); its exact ARN would be
      // a cycle (the topic needs the key first).
      StringLike: {
        'kms:EncryptionContext:aws:sns:topicArn': `${topicArnPrefix(stack)}${stack.stackName}-*`,
      },
      'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['aws:sns:topicArn'] },
    },
  });

/**
 * The topic every alarm notifies: an existing one, or one of its own mailing `alarmEmail`; none by
 * default (in dev: prod needs one, lib/config.ts).
 */
const addAlarmTopic = (
  scope: Construct,
  config: DeployConfig,
  alarms: cloudwatch.Alarm[],
  key: kms.IKey,
): sns.ITopic | undefined => {
  // An existing topic's policy is its owner's: it must let CloudWatch publish (README, Deploy).
  if (config.alarmTopicArn) return sns.Topic.fromTopicArn(scope, 'AlarmTopic', config.alarmTopicArn);
  if (!config.alarmEmail) return undefined;
  // The deployment's own stack, named as the operator knows it, when the alarms are in a nested stack of it.
  const stack = Stack.of(scope).nestedStackParent ?? Stack.of(scope);
  // The stack's one key (issue 44: a second key cost $1 a month): CloudWatch may use it only under the
  // encryption context SNS sends for a topic of this stack (`aws:sns:topicArn`, and no other key), which
  // no secret's ciphertext has (its context is `field` and `storeId`, lib/access.ts): it can decrypt no
  // secret, and no function's grant (which requires `field` and `storeId`) matches a topic's message.
  key.addToResourcePolicy(alarmTopicKeyStatement(stack));
  const topic = new sns.Topic(scope, 'AlarmTopic', {
    masterKey: key,
    enforceSSL: true,
    displayName: `${stack.stackName} alarms`,
  });
  // `enforceSSL` gives the topic a policy of its own (deny without TLS), which replaces SNS's default
  // policy: without this statement CloudWatch may not publish, and no alarm would ever be mailed.
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: {
        StringEquals: { 'aws:SourceAccount': stack.account },
        ArnEquals: { 'aws:SourceArn': alarms.map((a) => a.alarmArn) },
      },
    }),
  );
  topic.addSubscription(new EmailSubscription(config.alarmEmail));
  return topic;
};

/** The alarms `addAlarms` makes, and how each part adds one: at or above `threshold` in one period. */
interface AlarmSet {
  scope: Construct;
  config: DeployConfig;
  watched: Watched;
  alarms: cloudwatch.Alarm[];
  alarm: (id: string, description: string, metric: cloudwatch.IMetric, threshold: number) => void;
}

const minute = Duration.minutes(1);
const fiveMinutes = Duration.minutes(5);
const fifteenMinutes = Duration.minutes(15);

/** The business metrics' alarms: jobs dead, cancelled by a supplier or late, stores and fulfillments failing. */
const addBusinessAlarms = ({ config, alarm }: AlarmSet) => {
  const hour = Duration.hours(1);
  // Every way a job dies counts (refused by the supplier, receives run out, given up by the
  // reconciler), which a dead-letter queue alone does not see: a refusal never reaches it.
  alarm(
    'JobsDeadAlarm',
    `Sync jobs went dead: at least ${config.deadJobsPerHour} within an hour`,
    businessMetric(config, BUSINESS_METRICS.jobsDead, { period: hour }),
    config.deadJobsPerHour,
  );
  // A supplier cancelled an order the service placed: the reseller's order is left to the merchant
  // (refund, or route it elsewhere), so someone must see it (CONTRACT.md §10.5).
  alarm(
    'JobsCancelledBySourceAlarm',
    'A supplier cancelled an order the service placed: the reseller order needs the merchant',
    businessMetric(config, BUSINESS_METRICS.jobsCancelledBySource, { period: hour }),
    1,
  );
  // A supplier missed its promise (CONTRACT.md §16.2): a late job needs a person to chase it.
  alarm(
    'JobsLateAlarm',
    'A sync job is past its due time and not shipped: chase the supplier',
    businessMetric(config, BUSINESS_METRICS.jobsLate, { period: hour }),
    1,
  );
  alarm(
    'StoresFailingToPollAlarm',
    'A store’s polls keep failing (four in a row or more): orders its webhooks miss are not found',
    businessMetric(config, BUSINESS_METRICS.storesFailingToPoll, { period: hour }),
    1,
  );
  // CONTRACT.md §12.1: a store whose subscriptions stay failing loses its webhooks (the poller still
  // finds its orders, late). Checked at every poll: three failed checks in an hour is a store that stays so.
  alarm(
    'SubscriptionsFailingAlarm',
    'A store’s webhook subscriptions cannot be kept: its webhooks may not arrive',
    businessMetric(config, BUSINESS_METRICS.subscriptionsFailing, { period: hour }),
    3,
  );
  // CONTRACT.md §12.2: work ended without a call because its store was uninstalled or refused its token.
  alarm(
    'DisconnectedStoreWorkAlarm',
    'A job or a fulfillment went dead: its store is uninstalled or needs reauthorization (store_disconnected)',
    businessMetric(config, BUSINESS_METRICS.disconnectedStoreWork, { period: hour }),
    1,
  );
  alarm(
    'FulfillmentsDeadAlarm',
    'Tracking could not be delivered to a reseller order: a fulfillment went dead',
    businessMetric(config, BUSINESS_METRICS.fulfillmentsDead, { period: hour }),
    1,
  );
};

/** The queues' alarms: a fulfillment's dead letter on arrival, a queue not drained, a dead-letter queue's backlog. */
const addQueueAlarms = ({ scope, config, watched, alarms, alarm }: AlarmSet) => {
  for (const [name, queue] of Object.entries(watched.queues) as [QueueName, sqs.Queue][]) {
    const workQueue = deadLetterFor(name);
    // A dead sync job is the alarm above; a fulfillment's dead letter is put back on its queue
    // while the reseller may recover, so its arrival is the early warning of a failing reseller.
    if (workQueue === 'fulfillment') {
      // What arrived, not what waits: the DLQ handler drains its queue within seconds, so a depth
      // alarm would never see a message.
      alarm(
        `${queueId(name)}MessagesAlarm`,
        `Messages of the ${workQueue} queue gave up after ${config.maxReceiveCount} receives and were put back`,
        queue.metricNumberOfMessagesReceived({ period: fiveMinutes, statistic: 'Sum' }),
        1,
      );
    } else if (!workQueue) {
      alarm(
        `${queueId(name)}AgeAlarm`,
        `The ${name} queue is not being drained`,
        queue.metricApproximateAgeOfOldestMessage({ period: minute, statistic: 'Maximum' }),
        config.queueAgeAlarmSeconds,
      );
    }
  }

  // Every dead-letter queue, whether a handler drains it or nothing does (the poll DLQ): messages in it
  // every minute for 15 minutes. A handler drains its DLQ within seconds, so this fires only when the
  // handler fails (records it reports failed are no Lambda error) or nothing consumes the queue, and one
  // dead job still pages once (JobsDeadAlarm). A drained DLQ counts what is visible or received and not
  // deleted; an undrained one holds its messages visible (nothing receives them), so it reads that one
  // metric (issue 44: $0.10 a month each). SQS stops publishing for a queue idle six hours; missing data
  // keeps the alarm as it was.
  for (const [name, queue] of Object.entries(watched.queues) as [QueueName, sqs.Queue][]) {
    if (!deadLetterFor(name)) continue;
    alarms.push(
      new cloudwatch.Alarm(scope, `${queueId(name)}BacklogAlarm`, {
        alarmDescription: `The ${name} queue has held messages for ${DLQ_ALARM_MINUTES} minutes: nothing drains it`,
        metric: queueHolds(queue, `${name} messages`, drained(name)),
        threshold: 1,
        evaluationPeriods: DLQ_ALARM_MINUTES,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.IGNORE,
      }),
    );
  }
};

/** The consumers' failed records: each one's failed share, all of them together, and the systemic faults. */
const addConsumerAlarms = ({ scope, config, watched, alarms, alarm }: AlarmSet) => {
  // The share of each queue consumer's receives that failed: received and not deleted (a failed record
  // stays for SQS to deliver again; a done or deferred one is deleted). A consumer answers failed records
  // without throwing, so a systemic fault (AccessDenied, a bug) never shows as a Lambda error; it fails
  // every record, and this is how it is seen. Judged from `FAILED_RECORDS_MIN_RECEIVES` receives on.
  // Not for the fulfillment DLQ's handler: its queue's every receive pages (its MessagesAlarm, above), so
  // a failed share of ten receives or more is always paged already (issue 44: $0.20 a month).
  for (const consumer of consumers) {
    if (!('queue' in consumer.trigger) || everyReceivePages(consumer.trigger.queue)) continue;
    const queue = watched.queues[consumer.trigger.queue];
    alarms.push(
      new cloudwatch.Alarm(scope, `${consumer.name}FailedRecordsAlarm`, {
        alarmDescription:
          `${consumer.name} failed at least ${config.failedRecordsAlarmPercent}% of the records it received ` +
          'in 15 minutes: a supplier down, or a fault of its own (every record failing)',
        metric: new cloudwatch.MathExpression({
          expression: `IF(received >= ${FAILED_RECORDS_MIN_RECEIVES}, 100 * (received - deleted) / received, 0)`,
          label: `${consumer.name} failed records (%)`,
          period: fifteenMinutes,
          usingMetrics: {
            received: queue.metricNumberOfMessagesReceived({ period: fifteenMinutes, statistic: 'Sum' }),
            deleted: queue.metricNumberOfMessagesDeleted({ period: fifteenMinutes, statistic: 'Sum' }),
          },
        }),
        threshold: config.failedRecordsAlarmPercent,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }
  // Every consumer's failed records together, as the functions count them (QueueRecordsFailed).
  alarm(
    'QueueRecordsFailedAlarm',
    `Queue consumers reported at least ${20 * FAILED_RECORDS_MIN_RECEIVES} failed records within 15 minutes`,
    businessMetric(config, BUSINESS_METRICS.queueRecordsFailed, { period: fifteenMinutes }),
    20 * FAILED_RECORDS_MIN_RECEIVES,
  );

  // A systemic fault inside a batch (AccessDenied on the key or the table, a bug): the consumers report
  // the records failed without throwing, so no Lambda error shows it; they count it, and one pages.
  alarm(
    'SystemicErrorsAlarm',
    'A queue consumer failed a record on an error no retry mends (access denied, a missing key or queue, a bug)',
    businessMetric(config, BUSINESS_METRICS.systemicErrors, { period: fiveMinutes }),
    1,
  );
};

/** Orders slow to reach their suppliers, and platforms failing. */
const addLatencyAndPlatformAlarms = ({ scope, config, alarms }: AlarmSet) => {
  // Orders slow to reach their suppliers: most complete in seconds, and an hour is past every backoff.
  alarms.push(
    new cloudwatch.Alarm(scope, 'WebhookToCompletedLatencyAlarm', {
      alarmDescription: 'p95 of webhook → completed is above an hour, two quarter-hours running',
      metric: businessMetric(config, BUSINESS_METRICS.webhookToCompletedLatency, {
        statistic: 'p95',
        period: fifteenMinutes,
      }),
      threshold: LATENCY_ALARM_MS,
      evaluationPeriods: 2,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }),
  );

  // Suppliers' and resellers' platforms failing (5xx, or no answer): each failure is retried, so only a
  // run of them is news. A 4xx kills its job at once, which JobsDeadAlarm already sees.
  alarms.push(
    new cloudwatch.Alarm(scope, 'PlatformErrorsAlarm', {
      alarmDescription: `Platform calls failed (5xx, no answer) ${config.platformErrorsPer15Minutes} times in 15 min`,
      metric: new cloudwatch.MathExpression({
        expression: 'FILL(serverErrors, 0) + FILL(network, 0)',
        label: 'platform 5xx and network failures',
        period: fifteenMinutes,
        usingMetrics: {
          serverErrors: businessMetric(config, BUSINESS_METRICS.platformErrors, {
            statusClass: '5xx',
            period: fifteenMinutes,
          }),
          network: businessMetric(config, BUSINESS_METRICS.platformErrors, {
            statusClass: 'network',
            period: fifteenMinutes,
          }),
        },
      }),
      threshold: config.platformErrorsPer15Minutes,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }),
  );
};

/** The webhook routes' 429s and 5xx, and Lambda's errors and throttles over the account. */
const addWebhookAndLambdaAlarms = ({ config, watched, alarm }: AlarmSet) => {
  // A platform's delivery refused with 429 is retried a few times and then its subscription is deleted;
  // a 5xx likewise. Counted from the access log over every webhook route together (lib/constructs/api.ts):
  // any one route at the threshold is the sum at it, so one alarm pages whenever one per route did, for
  // $0.10 a month, not $0.10 a route (issue 44); the route is in the access log's lines.
  alarm(
    'WebhookThrottledAlarm',
    `A webhook route (${WEBHOOK_ROUTE_KEYS.join(', ')}) answered 429: deliveries beyond ` +
      '-c webhookThrottleRate / webhookThrottleBurst',
    webhookResponseMetric(watched.api, 'WebhookThrottled'),
    config.webhook429Threshold,
  );
  // A webhook's 5xx is one of the API's 5xx (Api5xxAlarm, below, same period): with its threshold at or
  // below the webhooks', that alarm pages whenever this one would, so this one is made only when the
  // webhooks' threshold is the lower.
  if (config.webhook5xxThreshold < config.api5xxThreshold)
    alarm(
      'WebhookServerErrorsAlarm',
      'A webhook route answered 5xx: deliveries the platform will retry, then give up on',
      webhookResponseMetric(watched.api, 'WebhookServerErrors'),
      config.webhook5xxThreshold,
    );

  // Consumers have no caller to notice their failures (a route's show as API 5xx too). One alarm on
  // Lambda's account-level Errors (no dimension: every function of the account and region, so each
  // consumer's and, beyond what paged before, each route's), where one per consumer cost $0.10 a month
  // each (issue 44). Which function failed is in the function's metrics and logs.
  alarm(
    'LambdaErrorsAlarm',
    'Lambda invocations failed (any function of the account: a consumer, a route, the authorizer)',
    accountLambdaMetric('Errors'),
    1,
  );
  // Throttles: one alarm on Lambda's account-level metric likewise, in place of one per consumer.
  alarm(
    'LambdaThrottlesAlarm',
    'Lambda invocations were throttled (any function of the account: a consumer, a route, the authorizer)',
    accountLambdaMetric('Throttles'),
    1,
  );
};

/** A heartbeat per scheduled consumer: its schedule stopped. Answers them: no run also pages. */
const addHeartbeatAlarms = ({ scope, config, watched, alarms }: AlarmSet) => {
  // A schedule that stops running (disabled, deleted, its target broken) leaves no error to alarm on:
  // its absence is the signal. Lambda publishes no Invocations for a period without a run, so missing
  // data is left missing: when none of the last three periods has a run the alarm goes to
  // INSUFFICIENT_DATA, which pages (its insufficient-data action, below). Treated as breaching, it
  // went to ALARM as soon as it was made, a day long for the daily retention sweep, until the first
  // run; a new alarm starts in INSUFFICIENT_DATA and actions fire on a change, so a deploy pages no one.
  const heartbeats: cloudwatch.Alarm[] = [];
  for (const consumer of consumers) {
    if (!isScheduled(consumer.trigger)) continue;
    const every = scheduleMinutes(consumer.trigger, config);
    const heartbeat = new cloudwatch.Alarm(scope, `${consumer.name}HeartbeatAlarm`, {
      alarmDescription:
        `${consumer.name} has not run for ${3 * every} minutes: its schedule stopped ` +
        '(the alarm shows INSUFFICIENT_DATA, and pages, when no period has a run)',
      metric: watched.functions.get(consumer.name)!.metricInvocations({
        period: Duration.minutes(every),
        statistic: 'Sum',
      }),
      threshold: 1,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.MISSING,
    });
    alarms.push(heartbeat);
    heartbeats.push(heartbeat);
  }

  return heartbeats;
};

/** The change stream's consumer falling behind, and the batches the event recorder gave up on. */
const addStreamAlarms = ({ scope, watched, alarms, alarm }: AlarmSet) => {
  // The change stream's consumer falling behind (a fault that fails its records, or too slow for the writes):
  // events and their deliveries wait, and the stream keeps a record 24 hours only.
  for (const consumer of consumers) {
    if (!('stream' in consumer.trigger)) continue;
    alarm(
      `${consumer.name}IteratorAgeAlarm`,
      `${consumer.name} is more than ${STREAM_AGE_ALARM_MINUTES} minutes behind the table's change stream`,
      watched.functions.get(consumer.name)!.metric('IteratorAge', { period: fiveMinutes, statistic: 'Maximum' }),
      STREAM_AGE_ALARM_MINUTES * 60_000,
    );
  }

  // A batch of the change stream the event recorder gave up on (its retries spent, or too old): events
  // not recorded until `npm run events -- replay-failed` replays them, while the stream still holds them.
  // Nothing else drains the queue: in ALARM from the first message until the replay has received them all
  // (its messages stay visible until then: one metric, not visible + in flight).
  if (watched.streamFailures)
    alarms.push(
      new cloudwatch.Alarm(scope, 'EventRecorderFailuresAlarm', {
        alarmDescription:
          'The event recorder gave up on change stream records: run `npm run events -- replay-failed` within 24 hours',
        metric: queueHolds(watched.streamFailures, 'batches given up on', false),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.IGNORE,
      }),
    );
};

/**
 * What on-call needs to hear about: jobs or fulfillments going dead, fulfillments giving up on a
 * reseller that keeps failing, a queue not drained, a consumer failing or throttled, the API
 * answering 5xx.
 */
export const addAlarms = (scope: Construct, config: DeployConfig, watched: Watched): cloudwatch.Alarm[] => {
  const alarms: cloudwatch.Alarm[] = [];
  const alarm = (id: string, description: string, metric: cloudwatch.IMetric, threshold: number) => {
    alarms.push(
      new cloudwatch.Alarm(scope, id, {
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  };
  const set: AlarmSet = { scope, config, watched, alarms, alarm };
  addBusinessAlarms(set);
  addQueueAlarms(set);
  addConsumerAlarms(set);
  addLatencyAndPlatformAlarms(set);
  addWebhookAndLambdaAlarms(set);
  const heartbeats = addHeartbeatAlarms(set);
  addStreamAlarms(set);
  alarm(
    'Api5xxAlarm',
    'The API answered 5xx',
    watched.api.metricServerError({ period: fiveMinutes, statistic: 'Sum' }),
    config.api5xxThreshold,
  );

  const topic = addAlarmTopic(scope, config, alarms, watched.key);
  if (topic) for (const a of alarms) a.addAlarmAction(new SnsAction(topic));
  if (topic) for (const a of heartbeats) a.addInsufficientDataAction(new SnsAction(topic));
  return alarms;
};
