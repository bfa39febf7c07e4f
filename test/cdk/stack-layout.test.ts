import { NestedStack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { consumers, routes } from '../../lib/routes.js';
import { STREAM_MAPPING } from '../../lib/stream-mapping.js';
import { logicalId, removeOutput, type Synthesized, stacksOf, synthesize } from './synth.js';

/**
 * Room to grow (issue 39, item 2): CloudFormation takes at most 500 resources a stack, and the
 * routes and consumers that grow with every issue are in nested stacks (docs/design.md, "Stacks"),
 * while the data stays where it was, under the logical ids it was deployed with.
 */

/** A stack nearer than this to CloudFormation's 500 fails here, while there is still time to split it. */
const RESOURCE_LIMIT = 400;

/**
 * The table, the secrets key and its alias, the queues and their policies, as the stack deployed them
 * before the split (captured from its template at bcaf493): a changed id would replace them.
 */
const DATA_LOGICAL_IDS: Record<string, string> = {
  SecretsKey317DCF94: 'AWS::KMS::Key',
  SecretsKeyAliasF590BEF1: 'AWS::KMS::Alias',
  TableCD117FA1: 'AWS::DynamoDB::Table',
  SyncDlq729C78DB: 'AWS::SQS::Queue',
  SyncDlqPolicyD54B6507: 'AWS::SQS::QueuePolicy',
  FulfillmentDlqCC05EF4E: 'AWS::SQS::Queue',
  FulfillmentDlqPolicy8F370850: 'AWS::SQS::QueuePolicy',
  PollDlq073FB5FD: 'AWS::SQS::Queue',
  PollDlqPolicy57DF433D: 'AWS::SQS::QueuePolicy',
  DeliveryDlq0B9A268C: 'AWS::SQS::Queue',
  DeliveryDlqPolicy9B35EFB8: 'AWS::SQS::QueuePolicy',
  AppDlqCCEAC56C: 'AWS::SQS::Queue',
  AppDlqPolicyC46F6EBC: 'AWS::SQS::QueuePolicy',
  AppQueueFD3F4958: 'AWS::SQS::Queue',
  AppQueuePolicyBD4F9387: 'AWS::SQS::QueuePolicy',
  SyncQueue13109325: 'AWS::SQS::Queue',
  SyncQueuePolicyF0F9204F: 'AWS::SQS::QueuePolicy',
  DeliveryQueueA11633D0: 'AWS::SQS::Queue',
  DeliveryQueuePolicy260ED33F: 'AWS::SQS::QueuePolicy',
  FulfillmentQueueC754CD47: 'AWS::SQS::Queue',
  FulfillmentQueuePolicy3486D3E3: 'AWS::SQS::QueuePolicy',
  PollQueueE235CFA2: 'AWS::SQS::Queue',
  PollQueuePolicy82D0019F: 'AWS::SQS::QueuePolicy',
};

describe('stack layout', () => {
  const variants: [string, Record<string, unknown>][] = [
    ['dev', {}],
    [
      'prod with every optional resource',
      {
        stage: 'prod',
        alarmEmail: 'ops@example.com',
        tracing: 'true',
        domainName: 'api.example.com',
        hostedZoneId: 'Z0123456789',
        hostedZoneName: 'example.com',
      },
    ],
  ];
  const built: Synthesized[] = [];
  afterAll(() => {
    for (const s of built) removeOutput(s.app);
  });

  describe.each(variants)('%s', (_name, context) => {
    let s: Synthesized;
    let stacks: ReturnType<typeof stacksOf>;
    beforeAll(() => {
      s = synthesize({ bundle: false, context });
      built.push(s);
      stacks = stacksOf(s.stack);
    }, 120_000);

    it(`keeps every stack, nested ones included, at ${RESOURCE_LIMIT} resources or fewer`, () => {
      const counts = Object.fromEntries(
        stacks.map((t) => [t.stack.node.path, Object.keys(t.template.Resources).length]),
      );
      expect(Object.keys(counts).length).toBeGreaterThan(1);
      for (const [path, count] of Object.entries(counts)) {
        if (count > RESOURCE_LIMIT)
          throw new Error(`${path} has ${count} resources, over ${RESOURCE_LIMIT}: move some into a nested stack`);
      }
    });

    it('keeps the data in the stack itself, under the logical ids it was deployed with', () => {
      const [root] = stacks;
      expect(root.stack).toBe(s.stack);
      for (const [id, type] of Object.entries(DATA_LOGICAL_IDS)) expect(root.template.Resources[id]?.Type).toBe(type);
      const dataTypes = new Set(Object.values(DATA_LOGICAL_IDS));
      const nestedData = stacks
        .slice(1)
        .flatMap((t) => Object.values(t.template.Resources as Record<string, { Type: string }>))
        .filter((r) => dataTypes.has(r.Type) && r.Type !== 'AWS::KMS::Key');
      expect(nestedData).toEqual([]);
      // The logical ids of the constructs, as the tests find them, are the same.
      expect(logicalId(s.stack, s.stack.table)).toBe('TableCD117FA1');
      expect(logicalId(s.stack, s.stack.secretsKey)).toBe('SecretsKey317DCF94');
    });

    it('puts the routes in Routes, the consumers in Consumers and the alarms in Alarms; one stack to deploy', () => {
      const nested = stacks.slice(1).map((t) => t.stack);
      expect(nested.every((n) => NestedStack.isNestedStack(n) && n.nestedStackParent === s.stack)).toBe(true);
      const where = (name: string) => s.stack.functions.get(name)!.stack;
      for (const r of routes) expect(where(r.name)).toBe(s.stack.routesStack);
      for (const c of consumers) expect(where(c.name)).toBe(s.stack.consumersStack);
      for (const alarm of s.stack.alarms) expect(alarm.stack).toBe(s.stack.alarmsStack);
      // The one stack `cdk deploy` deploys: the nested ones are resources of it.
      expect(s.app.node.children.filter((c) => c === s.stack || c.node.id === s.stack.node.id)).toHaveLength(1);
    });

    it("bounds the event recorder's retries and record age, bisects, and sends what it gives up on to a queue", () => {
      s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: logicalId(s.stack, s.stack.functions.get('EventRecorder')!) },
        BisectBatchOnFunctionError: true,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        MaximumRetryAttempts: STREAM_MAPPING.retryAttempts,
        MaximumRecordAgeInSeconds: STREAM_MAPPING.maxRecordAgeSeconds,
        MaximumBatchingWindowInSeconds: STREAM_MAPPING.batchingWindowSeconds,
        DestinationConfig: {
          OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(s.stack, s.stack.streamFailures), 'Arn'] } },
        },
      });
      // A message there pages at once. Only the replay command receives from it, so what waits is visible:
      // one metric (issue 44); a replay that fails leaves its messages visible again, which pages again.
      const queueName = { 'Fn::GetAtt': [logicalId(s.stack, s.stack.streamFailures), 'QueueName'] };
      s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Namespace: 'AWS/SQS',
        Dimensions: [{ Name: 'QueueName', Value: queueName }],
        Statistic: 'Maximum',
        Period: 60,
        Threshold: 1,
        EvaluationPeriods: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      s.template.hasOutput('EventRecorderFailuresUrl', {
        Value: { Ref: logicalId(s.stack, s.stack.streamFailures) },
      });
      s.template.hasOutput('EventRecorderFunction', {
        Value: { Ref: logicalId(s.stack, s.stack.functions.get('EventRecorder')!) },
      });
      s.template.hasResourceProperties('AWS::SQS::Queue', {
        SqsManagedSseEnabled: true,
        MessageRetentionPeriod: 14 * 24 * 3600,
        RedrivePolicy: Match.absent(),
      });
    });
  });
});
