import { join } from 'node:path';
import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { type GrantResources, grantsFor, resourceArns } from '../access.js';
import { BUNDLING, NODE_OPTIONS } from '../bundling.js';
import type { DeployConfig } from '../config.js';
import { buildConsole, consoleDefine } from '../console-build.js';
import { functionEnvironment, type SyncTimings } from '../environment.js';
import { allFunctions, type FunctionSpec } from '../functions.js';
import { acknowledge } from '../nag.js';
import type { QueueName } from '../routes.js';
import { visibilityTimeoutSeconds } from './queues.js';

/**
 * CONTRACT.md §6's lease on AWS: every receive of a message may take the sync queue's visibility
 * timeout, then 5 minutes to spare; waits a job announces (backoff, deferral) come on top of it.
 */
export const syncTimings = (config: DeployConfig): SyncTimings => ({
  leaseSeconds: visibilityTimeoutSeconds('sync')! * (config.maxReceiveCount + 1) + 300,
  backoffSeconds: config.syncBackoffSeconds,
  throttleBudgetSeconds: config.throttleBudgetSeconds,
});

/** What every function may do besides its `access`: write to its own log group. */
export const LOG_ACTIONS = ['logs:CreateLogStream', 'logs:PutLogEvents'];

/** What the functions are given: where their code is and the resources their `access` names. */
export interface FunctionResources {
  config: DeployConfig;
  /** Directory holding package.json and package-lock.json; every `entry` of lib/routes.ts is relative to it. */
  projectRoot: string;
  table: dynamodb.Table;
  secretsKey: kms.Key;
  queues: Record<QueueName, sqs.Queue>;
  /** Where the platforms send webhooks: a token the stack resolves once its API exists. */
  publicUrl: string;
  /**
   * Where a function itself goes (a nested stack of lib/stack.ts); its log group and role stay in the
   * scope given to addFunctions, beside the key whose policy names the role. Default: that scope.
   */
  placeOf?: (spec: FunctionSpec) => Construct;
}

/**
 * The name a function another invokes is deployed under: fixed (`<stack>-<name>`), so that its invoker's
 * grant and variable name it without a reference to a resource of a nested stack (a reference would make
 * the invoker's policy wait for that stack, which waits for the invoker's role: a cycle).
 */
export const invokedFunctionName = (scope: Construct, name: string) => `${Stack.of(scope).stackName}-${name}`;

/** The ARNs `resourceArns` (lib/access.ts) names a grant's target by, from the stack's resources. */
const grantResources = (scope: Construct, resources: FunctionResources): GrantResources => ({
  tableArn: resources.table.tableArn,
  keyArn: resources.secretsKey.keyArn,
  queueArn: (queue) => resources.queues[queue].queueArn,
  functionArn: (name) =>
    Stack.of(scope).formatArn({
      service: 'lambda',
      resource: 'function',
      resourceName: invokedFunctionName(scope, name),
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    }),
});

/** A role of its own without AWSLambdaBasicExecutionRole, whose logs actions apply to every log group. */
const functionRole = (group: Construct, spec: FunctionSpec, logGroup: logs.LogGroup, resources: FunctionResources) => {
  const role = new iam.Role(group, 'Role', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: `${spec.name}: exactly what lib/routes.ts declares`,
  });
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: LOG_ACTIONS, resources: [logGroup.logGroupArn] }));
  const arns = grantResources(group, resources);
  for (const grant of grantsFor(spec.access)) {
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: grant.actions,
        resources: resourceArns(grant.target, arns),
        conditions: grant.conditions,
      }),
    );
  }
  return role;
};

/** A function's variables on AWS (lib/environment.ts), with CloudFormation references. */
const deployedEnvironment = (scope: Construct, spec: FunctionSpec, resources: FunctionResources) => {
  const { config } = resources;
  return {
    NODE_OPTIONS,
    ...functionEnvironment(spec, {
      stage: config.stage,
      tableName: resources.table.tableName,
      keyId: resources.secretsKey.keyArn,
      queueUrl: (queue) => resources.queues[queue].queueUrl,
      functionName: (name) => invokedFunctionName(scope, name),
      shopDomainSuffix: config.shopDomainSuffix,
      apiKeyPrefix: 'sk_live_',
      sync: syncTimings(config),
      pollIntervalSeconds: config.pollIntervalSeconds,
      jobRetentionDays: config.jobRetentionDays,
      apiKeyRateLimit: config.apiKeyRateLimit,
      personalDataRetentionDays: config.personalDataRetentionDays,
      publicUrl: resources.publicUrl,
    }),
  };
};

/**
 * One function: its log group, a role of its own that may do exactly what its `access` declares,
 * its environment (lib/environment.ts) and its bundle (lib/bundling.ts), under a construct named
 * after it (the function under one of that name in `placeOf`'s scope, when it is placed elsewhere).
 */
const addFunction = (scope: Construct, spec: FunctionSpec, resources: FunctionResources): NodejsFunction => {
  const { config, projectRoot } = resources;
  const group = new Construct(scope, spec.name);
  const place = resources.placeOf?.(spec) ?? scope;
  const home = place === scope ? group : new Construct(place, spec.name);

  const logGroup = new logs.LogGroup(group, 'Logs', {
    retention: config.logRetentionDays,
    removalPolicy: config.removalPolicy,
  });

  const role = functionRole(group, spec, logGroup, resources);
  const invoked = spec.consumer && 'invoked' in spec.consumer.trigger ? spec.consumer.trigger.invoked : undefined;

  const fn = new NodejsFunction(home, 'Function', {
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
    // JSON lines and Lambda's advanced logging controls: its own START/END/REPORT lines (about 400 bytes
    // an invocation) only from WARN, the functions' from -c logLevel (issue 44).
    loggingFormat: lambda.LoggingFormat.JSON,
    systemLogLevelV2: lambda.SystemLogLevel.WARN,
    applicationLogLevelV2: lambda.ApplicationLogLevel[config.logLevel],
    tracing: config.tracing ? lambda.Tracing.ACTIVE : lambda.Tracing.DISABLED,
    environment: deployedEnvironment(scope, spec, resources),
    ...(invoked ? { functionName: invokedFunctionName(scope, spec.name) } : {}),
    // An asynchronously invoked function is bounded by its reservation (lib/routes.ts, InvokedTrigger).
    reservedConcurrentExecutions: invoked?.reservedConcurrency,
    // The console's function carries the console's files (lib/console-build.ts).
    bundling: spec.console ? { ...BUNDLING, define: consoleDefine(buildConsole(projectRoot)) } : BUNDLING,
  });

  // The change stream's event source (lib/constructs/consumers.ts) grants dynamodb:ListStreams, on `*`.
  const readsStream = spec.consumer !== undefined && 'stream' in spec.consumer.trigger;
  if (config.tracing || readsStream) {
    acknowledge(
      role.node.findChild('DefaultPolicy'),
      'AwsSolutions-IAM5[Resource::*]',
      [
        config.tracing && 'X-Ray PutTraceSegments and PutTelemetryRecords support no resource-level permissions.',
        readsStream &&
          'dynamodb:ListStreams, which a stream event source needs, supports no resource-level permissions.',
      ]
        .filter(Boolean)
        .join(' '),
    );
  }
  return fn;
};

/** Every function of lib/functions.ts, by name. */
export const addFunctions = (scope: Construct, resources: FunctionResources): Map<string, NodejsFunction> =>
  new Map(allFunctions().map((spec) => [spec.name, addFunction(scope, spec, resources)]));
