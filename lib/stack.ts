import { join } from 'node:path';
import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { TABLE_DEFINITION, type KeyAttribute } from '../shared/dynamo/table-definition.js';
import { grantsFor, type GrantTarget } from './access.js';
import type { DeployConfig } from './config.js';
import { functionEnvironment } from './environment.js';
import { allFunctions, consumedQueue, type FunctionSpec } from './functions.js';
import { acknowledge } from './nag.js';
import { authorizer, consumers, routes, type QueueName } from './routes.js';

/** Which queue is the dead-letter queue of which; typed as a full record so a new QueueName cannot be forgotten. */
const QUEUE_LAYOUT: Record<QueueName, { deadLetterFor?: QueueName }> = {
  syncDlq: { deadLetterFor: 'sync' },
  fulfillmentDlq: { deadLetterFor: 'fulfillment' },
  sync: {},
  fulfillment: {},
};

const ATTRIBUTE_TYPE = { S: dynamodb.AttributeType.STRING } as const;
const PROJECTION = { KEYS_ONLY: dynamodb.ProjectionType.KEYS_ONLY, INCLUDE: dynamodb.ProjectionType.INCLUDE } as const;
const BILLING = { PAY_PER_REQUEST: dynamodb.BillingMode.PAY_PER_REQUEST } as const;

/** AWS's advice for an SQS event source: a visibility timeout of six times the function's timeout. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;
export const DLQ_RETENTION = Duration.days(14);

/** What every function may do besides its `access`: write to its own log group. */
export const LOG_ACTIONS = ['logs:CreateLogStream', 'logs:PutLogEvents'];

/** Makes the bundled ESM output able to load CommonJS dependencies that call `require`. */
const ESM_REQUIRE_SHIM = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/** The visibility timeout of a queue: six times the timeout of its consumer(s); SQS's default when nothing consumes it. */
export const visibilityTimeoutSeconds = (queue: QueueName): number | undefined => {
  const timeouts = consumers.filter((c) => consumedQueue(c) === queue).map((c) => c.timeoutSeconds);
  return timeouts.length ? VISIBILITY_TIMEOUT_FACTOR * Math.max(...timeouts) : undefined;
};

export interface ResellerRoutingStackProps extends StackProps {
  config: DeployConfig;
  /** Directory holding package.json and package-lock.json; every `entry` of lib/routes.ts is relative to it. */
  projectRoot: string;
}

/**
 * The whole deployment: one table, the secrets key, the work queues and their DLQs, one Lambda
 * per entry of lib/routes.ts with a role derived from its `access`, the HTTP API, the schedule and
 * the alarms.
 */
export class ResellerRoutingStack extends Stack {
  readonly table: dynamodb.Table;
  readonly secretsKey: kms.Key;
  readonly queues: Record<QueueName, sqs.Queue>;
  readonly api: apigw.HttpApi;
  readonly apiStage: apigw.HttpStage;
  /** Every function by its name in lib/routes.ts. */
  readonly functions = new Map<string, NodejsFunction>();
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: ResellerRoutingStackProps) {
    super(scope, id, props);
    const { config, projectRoot } = props;

    // Encrypted with the AWS owned key (the default): a customer-managed key would add a KMS request
    // to every read and write, and the secrets in the items are encrypted with the CMK anyway.
    const definition = TABLE_DEFINITION;
    const key = (attribute: KeyAttribute) => ({ name: attribute.name, type: ATTRIBUTE_TYPE[attribute.type] });
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: key(definition.partitionKey),
      sortKey: key(definition.sortKey),
      billingMode: BILLING[definition.billingMode],
      encryption: dynamodb.TableEncryption.DEFAULT,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: config.deletionProtection,
      timeToLiveAttribute: definition.timeToLiveAttribute,
      removalPolicy: config.removalPolicy,
    });
    for (const index of definition.globalIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: key(index.partitionKey),
        sortKey: key(index.sortKey),
        projectionType: PROJECTION[index.projection.type],
        nonKeyAttributes: index.projection.type === 'INCLUDE' ? index.projection.nonKeyAttributes : undefined,
      });
    }

    // Encrypts the stores' access tokens and webhook secrets (shared/aws/kms-cipher.ts) and nothing else.
    this.secretsKey = new kms.Key(this, 'SecretsKey', {
      description: `${this.stackName}: store access tokens and webhook secrets`,
      alias: `alias/${this.stackName}-secrets`,
      enableKeyRotation: true,
      removalPolicy: config.removalPolicy,
      pendingWindow: config.isProd ? Duration.days(30) : Duration.days(7),
    });

    this.queues = this.createQueues(config);

    for (const spec of allFunctions()) this.functions.set(spec.name, this.createFunction(spec, config, projectRoot));

    for (const consumer of consumers) {
      const fn = this.functions.get(consumer.name)!;
      if ('queue' in consumer.trigger) {
        const isWorkQueue = !QUEUE_LAYOUT[consumer.trigger.queue].deadLetterFor;
        fn.addEventSource(
          new SqsEventSource(this.queues[consumer.trigger.queue], {
            batchSize: consumer.trigger.batchSize,
            maxConcurrency: consumer.trigger.maxConcurrency,
            reportBatchItemFailures: true,
            // A second lets a burst of orders share invocations; dead letters are not worth waiting for.
            maxBatchingWindow: isWorkQueue ? Duration.seconds(1) : undefined,
          }),
        );
      } else {
        new events.Rule(this, `${consumer.name}Schedule`, {
          description: `Runs ${consumer.name} every ${consumer.trigger.scheduleMinutes} minutes`,
          schedule: events.Schedule.rate(Duration.minutes(consumer.trigger.scheduleMinutes)),
          // A missed run is made up by the next one a few minutes later.
          targets: [new targets.LambdaFunction(fn, { retryAttempts: 0 })],
        });
      }
    }

    [this.api, this.apiStage] = this.createApi(config);
    this.createAlarms(config);

    new CfnOutput(this, 'ApiUrl', { value: this.apiStage.url, description: 'Base URL of the API' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'The single DynamoDB table' });
  }

  private createQueues(config: DeployConfig): Record<QueueName, sqs.Queue> {
    const queues = {} as Record<QueueName, sqs.Queue>;
    const names = Object.keys(QUEUE_LAYOUT) as QueueName[];
    const visibility = (name: QueueName) => {
      const seconds = visibilityTimeoutSeconds(name);
      return seconds === undefined ? undefined : Duration.seconds(seconds);
    };
    // Dead-letter queues first: the work queues name them in their redrive policy.
    for (const name of names.filter((n) => QUEUE_LAYOUT[n].deadLetterFor)) {
      queues[name] = new sqs.Queue(this, pascal(name), {
        // SQS-managed encryption: a KMS key would cost a KMS request per batch of messages, and the
        // messages carry ids, never secrets.
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: DLQ_RETENTION,
        visibilityTimeout: visibility(name),
      });
    }
    for (const name of names.filter((n) => !QUEUE_LAYOUT[n].deadLetterFor)) {
      const deadLetter = names.find((n) => QUEUE_LAYOUT[n].deadLetterFor === name);
      queues[name] = new sqs.Queue(this, `${pascal(name)}Queue`, {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        visibilityTimeout: visibility(name),
        deadLetterQueue: deadLetter
          ? { queue: queues[deadLetter], maxReceiveCount: config.maxReceiveCount }
          : undefined,
      });
    }
    return queues;
  }

  private resourceArns(target: GrantTarget): string[] {
    switch (target.kind) {
      case 'table':
        return [this.table.tableArn];
      case 'tableIndexes':
        // Each index by name rather than `index/*`: the same indexes, without a wildcard resource.
        return TABLE_DEFINITION.globalIndexes.map((i) => `${this.table.tableArn}/index/${i.name}`);
      case 'key':
        return [this.secretsKey.keyArn];
      case 'queue':
        return [this.queues[target.queue].queueArn];
    }
  }

  private createFunction(spec: FunctionSpec, config: DeployConfig, projectRoot: string): NodejsFunction {
    const scope = new Construct(this, spec.name);

    const logGroup = new logs.LogGroup(scope, 'Logs', {
      retention: config.logRetentionDays,
      removalPolicy: config.removalPolicy,
    });

    // A role of its own without AWSLambdaBasicExecutionRole, whose logs actions apply to every log group.
    const role = new iam.Role(scope, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `${spec.name}: exactly what lib/routes.ts declares`,
    });
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: LOG_ACTIONS, resources: [logGroup.logGroupArn] }));
    for (const grant of grantsFor(spec.access)) {
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: grant.actions, resources: this.resourceArns(grant.target) }),
      );
    }

    const environment = {
      NODE_OPTIONS: '--enable-source-maps',
      ...functionEnvironment(spec, {
        stage: config.stage,
        tableName: this.table.tableName,
        keyId: this.secretsKey.keyArn,
        queueUrl: (queue) => this.queues[queue].queueUrl,
        shopDomainSuffix: config.shopDomainSuffix,
        apiKeyPrefix: 'sk_live_',
      }),
    };

    const fn = new NodejsFunction(scope, 'Function', {
      description: spec.description,
      entry: join(projectRoot, spec.entry),
      handler: 'handler',
      projectRoot,
      depsLockFilePath: join(projectRoot, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: config.memorySize,
      timeout: Duration.seconds(spec.timeoutSeconds),
      role,
      logGroup,
      tracing: config.tracing ? lambda.Tracing.ACTIVE : lambda.Tracing.DISABLED,
      environment,
      bundling: {
        format: OutputFormat.ESM,
        mainFields: ['module', 'main'],
        target: 'node24',
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        // The SDK is bundled: a pinned, tree-shaken client starts faster than the runtime's copy.
        externalModules: [],
        bundleAwsSDK: true,
        banner: ESM_REQUIRE_SHIM,
        forceDockerBundling: false,
        logLevel: LogLevel.WARNING,
      },
    });

    if (config.tracing) {
      acknowledge(
        role.node.findChild('DefaultPolicy'),
        'AwsSolutions-IAM5[Resource::*]',
        'X-Ray PutTraceSegments and PutTelemetryRecords support no resource-level permissions.',
      );
    }
    return fn;
  }

  private createApi(config: DeployConfig): [apigw.HttpApi, apigw.HttpStage] {
    const api = new apigw.HttpApi(this, 'Api', {
      apiName: this.stackName,
      description: 'Reseller order routing',
      // The stage is added below, with access logs and throttling, which the default stage lacks.
      createDefaultStage: false,
    });

    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', {
      retention: config.logRetentionDays,
      removalPolicy: config.removalPolicy,
    });
    const stage = api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: config.throttleRate, burstLimit: config.throttleBurst },
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            requestTime: '$context.requestTime',
            routeKey: '$context.routeKey',
            status: '$context.status',
            responseLength: '$context.responseLength',
            responseLatency: '$context.responseLatency',
            integrationStatus: '$context.integrationStatus',
            integrationLatency: '$context.integrationLatency',
            integrationErrorMessage: '$context.integrationErrorMessage',
            authorizerError: '$context.authorizer.error',
            sourceIp: '$context.identity.sourceIp',
            userAgent: '$context.identity.userAgent',
          }),
        ),
      },
    });

    // No identity source and no cache: API Gateway would answer a missing Authorization header with
    // its own 401 body before calling the authorizer, and the contract wants its error shape. So the
    // authorizer runs on every request, always allows, and passes the owner (or nothing) in its
    // context; the route's middleware answers 401 when there is none.
    const apiKeyAuthorizer = new HttpLambdaAuthorizer('ApiKeyAuthorizer', this.functions.get(authorizer.name)!, {
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      resultsCacheTtl: Duration.seconds(0),
      identitySource: [],
    });

    for (const route of routes) {
      const [httpRoute] = api.addRoutes({
        path: route.path,
        methods: [apigw.HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${route.name}Integration`, this.functions.get(route.name)!, {
          payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
        }),
        authorizer: route.auth === 'apiKey' ? apiKeyAuthorizer : undefined,
      });
      if (route.auth === 'webhook') {
        acknowledge(
          httpRoute,
          'AwsSolutions-APIG4',
          'A webhook is authenticated by the HMAC of its raw body, which the handler checks and an authorizer cannot see.',
        );
      }
    }
    return [api, stage];
  }

  private createAlarms(config: DeployConfig) {
    const alarm = (id: string, description: string, metric: cloudwatch.IMetric, threshold: number) => {
      const created = new cloudwatch.Alarm(this, id, {
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      this.alarms.push(created);
      return created;
    };
    const minute = Duration.minutes(1);
    const fiveMinutes = Duration.minutes(5);

    for (const [name, queue] of Object.entries(this.queues) as [QueueName, sqs.Queue][]) {
      const deadLetterFor = QUEUE_LAYOUT[name].deadLetterFor;
      if (deadLetterFor) {
        alarm(
          `${pascal(name)}MessagesAlarm`,
          `Messages of the ${deadLetterFor} queue gave up after ${config.maxReceiveCount} receives`,
          queue.metricApproximateNumberOfMessagesVisible({ period: minute, statistic: 'Maximum' }),
          1,
        );
      } else {
        alarm(
          `${pascal(name)}QueueAgeAlarm`,
          `The ${name} queue is not being drained`,
          queue.metricApproximateAgeOfOldestMessage({ period: minute, statistic: 'Maximum' }),
          config.queueAgeAlarmSeconds,
        );
      }
    }

    // Route and authorizer failures show as API 5xx; consumers have no caller to notice theirs.
    for (const consumer of consumers) {
      const fn = this.functions.get(consumer.name)!;
      alarm(
        `${consumer.name}ErrorsAlarm`,
        `${consumer.name} invocations failed`,
        fn.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
        1,
      );
      alarm(
        `${consumer.name}ThrottlesAlarm`,
        `${consumer.name} invocations were throttled`,
        fn.metricThrottles({ period: fiveMinutes, statistic: 'Sum' }),
        1,
      );
    }

    alarm(
      'Api5xxAlarm',
      'The API answered 5xx',
      this.api.metricServerError({ period: fiveMinutes, statistic: 'Sum' }),
      config.api5xxThreshold,
    );

    const topic = this.alarmTopic(config);
    if (topic) for (const a of this.alarms) a.addAlarmAction(new SnsAction(topic));
  }

  private alarmTopic(config: DeployConfig): sns.ITopic | undefined {
    if (config.alarmTopicArn) return sns.Topic.fromTopicArn(this, 'AlarmTopic', config.alarmTopicArn);
    if (!config.alarmEmail) return undefined;
    // Its own key: CloudWatch must be allowed to use it, which the secrets key must never allow.
    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: `${this.stackName}: alarm notifications`,
      enableKeyRotation: true,
      removalPolicy: config.removalPolicy,
      pendingWindow: config.isProd ? Duration.days(30) : Duration.days(7),
    });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': this.account } },
      }),
    );
    const topic = new sns.Topic(this, 'AlarmTopic', {
      masterKey: key,
      enforceSSL: true,
      displayName: `${this.stackName} alarms`,
    });
    topic.addSubscription(new EmailSubscription(config.alarmEmail));
    return topic;
  }
}

const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);
