import { CfnOutput, Lazy, NestedStack, Stack, type StackProps } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { DeployConfig } from './config.js';
import { addAlarms } from './constructs/alarms.js';
import { addApi } from './constructs/api.js';
import { addConsumerTriggers, addStreamFailureQueue } from './constructs/consumers.js';
import { addDashboard } from './constructs/dashboard.js';
import { addSecretsKey, addTable, grantSecretsKeyUse } from './constructs/data.js';
import { addFunctions } from './constructs/functions.js';
import { addQueues } from './constructs/queues.js';
import { authorizer, type QueueName } from './routes.js';

export interface ResellerRoutingStackProps extends StackProps {
  config: DeployConfig;
  /** Directory holding package.json and package-lock.json; every `entry` of lib/routes.ts is relative to it. */
  projectRoot: string;
}

/**
 * The whole deployment: one table, the secrets key, the work queues and their DLQs, one Lambda
 * per entry of lib/routes.ts with a role derived from its `access`, the HTTP API, the schedule and
 * the alarms. Each part is added by a module of lib/constructs/, the data to this stack's own scope,
 * so the logical ids (and with them the deployed table, key, queues and API URL) do not depend on
 * how the code is split.
 *
 * CloudFormation takes at most 500 resources a stack, and a route costs 7: what grows with the routes
 * and consumers is in nested stacks (docs/design.md, "Stacks"), deployed with this one by `cdk deploy`.
 * Here: the data, each function's log group and role (the secrets key's policy names the roles, and a
 * key's policy is part of the key), the API with its stage and authorizer, the dashboard. `Routes`: the
 * routes' functions with their routes, integrations and permissions. `Consumers`: the consumers'
 * functions and their triggers. `Alarms`: the alarms and their topic.
 */
export class ResellerRoutingStack extends Stack {
  readonly routesStack: NestedStack;
  readonly consumersStack: NestedStack;
  readonly alarmsStack: NestedStack;
  readonly table: dynamodb.Table;
  readonly secretsKey: kms.Key;
  readonly queues: Record<QueueName, sqs.Queue>;
  /** The change stream mapping's on-failure destination: the batches the event recorder gave up on. */
  readonly streamFailures: sqs.Queue;
  readonly api: apigw.HttpApi;
  readonly apiStage: apigw.HttpStage;
  /** Every function by its name in lib/routes.ts. */
  readonly functions: Map<string, NodejsFunction>;
  readonly alarms: cloudwatch.Alarm[];
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: ResellerRoutingStackProps) {
    // A prod stack cannot be deleted by one command: its table, key and queues hold accepted work.
    super(scope, id, { terminationProtection: props.config.isProd, ...props });
    const { config, projectRoot } = props;

    this.secretsKey = addSecretsKey(this, config);
    this.table = addTable(this, config, this.secretsKey);
    this.queues = addQueues(this, config);
    this.streamFailures = addStreamFailureQueue(this, config);
    this.routesStack = new NestedStack(this, 'Routes', { description: 'The API routes and their functions' });
    this.consumersStack = new NestedStack(this, 'Consumers', { description: 'The consumers and their triggers' });
    this.alarmsStack = new NestedStack(this, 'Alarms', { description: 'The alarms and their topic' });
    let publicUrl: string | undefined;
    this.functions = addFunctions(this, {
      config,
      projectRoot,
      table: this.table,
      secretsKey: this.secretsKey,
      queues: this.queues,
      // The API is made after its functions: the URL is read when the template is written.
      publicUrl: Lazy.string({ produce: () => publicUrl }),
      // The authorizer beside the API, which holds it (a route names it, and it names its function).
      placeOf: (spec) =>
        spec.consumer ? this.consumersStack : spec.name === authorizer.name ? this : this.routesStack,
    });
    grantSecretsKeyUse(this.secretsKey, this.functions);
    addConsumerTriggers(this.consumersStack, this.functions, this.queues, this.table, config, this.streamFailures);
    const { api, stage, domain } = addApi(this, config, this.functions, this.routesStack);
    this.api = api;
    this.apiStage = stage;
    publicUrl = config.publicUrl ?? (domain ? `https://${config.domainName}` : stage.url);
    this.alarms = addAlarms(this.alarmsStack, config, {
      queues: this.queues,
      functions: this.functions,
      api: this.api,
      streamFailures: this.streamFailures,
      key: this.secretsKey,
    });
    this.dashboard = addDashboard(this, config);

    this.addOutputs(config, domain);
  }

  /** The stack's outputs: the URLs, the table and what `npm run events -- replay-failed` needs. */
  private addOutputs(config: DeployConfig, domain: ReturnType<typeof addApi>['domain']) {
    // With a domain of its own, the execute-api host is off: the domain is the only URL.
    new CfnOutput(this, 'ApiUrl', {
      value: domain ? `https://${config.domainName}/` : this.apiStage.url,
      description: 'Base URL of the API: where every shop’s webhook subscriptions point',
    });
    if (domain) {
      new CfnOutput(this, 'ApiDomainTarget', {
        value: domain.regionalDomainName,
        description: `The CNAME (or alias) target of ${config.domainName}, when its zone is not given`,
      });
    }
    new CfnOutput(this, 'ConsoleUrl', {
      value: `${domain ? `https://${config.domainName}/` : this.apiStage.url}console`,
      description: 'The operator console, served by the API from its own origin (docs/design.md, "Operator console")',
    });
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'The single DynamoDB table' });
    new CfnOutput(this, 'EventRecorderFailuresUrl', {
      value: this.streamFailures.queueUrl,
      description: 'The change stream batches the event recorder gave up on: npm run events -- replay-failed',
    });
    new CfnOutput(this, 'EventRecorderFunction', {
      value: this.functions.get('EventRecorder')!.functionName,
      description: 'The event recorder, which npm run events -- replay-failed hands the replayed records to',
    });
  }
}
