import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { Match } from 'aws-cdk-lib/assertions';
import { mockClient } from 'aws-sdk-client-mock';
import { ENCRYPTION_CONTEXT_KEYS, indexName } from '../../lib/access.js';
import { allFunctions } from '../../lib/functions.js';
import { kmsCipher } from '../../shared/aws/kms-cipher.js';
import { BUSINESS_METRICS, METRICS_NAMESPACE } from '../../shared/core/telemetry.js';
import {
  denyingWithoutTls,
  logicalId,
  PROJECT_ROOT,
  type Resources,
  removeOutput,
  rolePolicies,
  type Synthesized,
  synthesize,
} from './synth.js';

/**
 * What the first review of the synthesized template found would not work on AWS (issue 14, item 7):
 * each finding, asserted on the template.
 */

const resourcesOf = (s: Synthesized) => s.template.toJSON().Resources as Resources;
const statementsOf = (s: Synthesized, name: string) => {
  const roleId = logicalId(s.stack, s.stack.functions.get(name)!.role as never);
  return rolePolicies(s.template, roleId).documents.flatMap((d) => d.Statement) as {
    Action: string | string[];
    Resource: unknown;
    Condition?: Record<string, Record<string, unknown>>;
  }[];
};
const actions = (statement: { Action: string | string[] }) =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];

describe('operations on AWS', () => {
  let dev: Synthesized;
  let unprotected: Synthesized;
  let prod: Synthesized;

  beforeAll(() => {
    dev = synthesize({ bundle: false });
    unprotected = synthesize({ bundle: false, context: { deletionProtection: 'false' } });
    prod = synthesize({ bundle: false, context: { stage: 'prod', alarmEmail: 'ops@example.com' } });
  }, 60_000);

  /** Synths of a single test, removed with the others. */
  const onExit: Synthesized[] = [];

  afterAll(() => {
    for (const s of [dev, unprotected, prod, ...onExit]) removeOutput(s?.app);
  });

  describe('alarm notifications', () => {
    it('let CloudWatch publish to the alarm topic, from this account and these alarms only', () => {
      const topicId = Object.keys(prod.template.findResources('AWS::SNS::Topic'))[0];
      const alarmArns = Object.keys(prod.template.findResources('AWS::CloudWatch::Alarm')).map((id) => ({
        'Fn::GetAtt': [id, 'Arn'],
      }));
      expect(alarmArns.length).toBeGreaterThan(5);
      prod.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
        Topics: [{ Ref: topicId }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Allow',
              Principal: { Service: 'cloudwatch.amazonaws.com' },
              Action: 'sns:Publish',
              Resource: { Ref: topicId },
              Condition: {
                StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
                ArnEquals: { 'aws:SourceArn': Match.arrayEquals(alarmArns) },
              },
            }),
          ]),
        },
      });
    });

    it('still refuse publishing without TLS', () => {
      prod.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
        PolicyDocument: denyingWithoutTls('sns:Publish'),
      });
    });

    it("let CloudWatch use the topic key, from this account only, under this stack's topics' context only", () => {
      const topic = Object.values(prod.template.findResources('AWS::SNS::Topic'))[0];
      // The stack's one key (issue 44): the secrets key, passed to the alarms' nested stack.
      expect(JSON.stringify(topic.Properties.KmsMasterKeyId)).toContain('SecretsKey');
      prod.template.resourceCountIs('AWS::KMS::Key', 1);
      const keyId = logicalId(prod.stack, prod.stack.secretsKey);
      const statements = resourcesOf(prod)[keyId].Properties.KeyPolicy.Statement as Record<string, any>[];
      const cloudwatch = statements.filter((s) => JSON.stringify(s.Principal).includes('cloudwatch'));
      expect(cloudwatch).toEqual([
        expect.objectContaining({
          Principal: { Service: 'cloudwatch.amazonaws.com' },
          Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
          Condition: {
            StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
            StringLike: {
              'kms:EncryptionContext:aws:sns:topicArn': {
                'Fn::Join': [
                  '',
                  [
                    'arn:',
                    { Ref: 'AWS::Partition' },
                    ':sns:',
                    { Ref: 'AWS::Region' },
                    ':',
                    { Ref: 'AWS::AccountId' },
                    `:${prod.stack.stackName}-*`,
                  ],
                ],
              },
            },
            // The context of a topic's message and nothing else: never a secret's (`field`, `storeId`).
            'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['aws:sns:topicArn'] },
          },
        }),
      ]);
    });
  });

  describe('jobs going dead', () => {
    const alarms = () => Object.values(dev.template.findResources('AWS::CloudWatch::Alarm'));

    it('raise an alarm on the dead jobs of an hour, whichever way they died', () => {
      const alarm = alarms().find((a) => a.Properties.MetricName === BUSINESS_METRICS.jobsDead);
      expect(alarm?.Properties).toMatchObject({
        Namespace: METRICS_NAMESPACE,
        Dimensions: expect.arrayContaining([
          { Name: 'service', Value: 'reseller-routing' },
          { Name: 'stage', Value: 'dev' },
        ]),
        Statistic: 'Sum',
        Period: 3600,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
      expect(alarm?.Properties.Dimensions).toHaveLength(2);
    });

    it('raise an alarm on dead fulfillments too', () => {
      const alarm = alarms().find((a) => a.Properties.MetricName === BUSINESS_METRICS.fulfillmentsDead);
      expect(alarm?.Properties).toMatchObject({ Namespace: METRICS_NAMESPACE, Period: 3600, Threshold: 1 });
    });

    it('watch arrivals in the fulfillment DLQ, which the handler drains within seconds, never a DLQ depth', () => {
      // A depth alarm only on a queue nothing receives from (issue 44: one metric, where nothing is in flight):
      // never on a queue a handler drains.
      const depth = alarms().filter((a) => a.Properties.MetricName === 'ApproximateNumberOfMessagesVisible');
      const undrained = ['pollDlq', 'deliveryDlq', 'appDlq'] as const;
      const undrainedRefs = [
        ...undrained.map((q) => logicalId(dev.stack, dev.stack.queues[q])),
        logicalId(dev.stack, dev.stack.streamFailures),
      ];
      expect(
        depth.map((a) => undrainedRefs.find((ref) => JSON.stringify(a.Properties.Dimensions).includes(ref))).sort(),
      ).toEqual([...undrainedRefs].sort());
      const dlqRef = logicalId(dev.stack, dev.stack.queues.fulfillmentDlq);
      const mine = alarms().filter((a) => JSON.stringify(a.Properties.Dimensions ?? []).includes(dlqRef));
      expect(mine.map((a) => a.Properties.MetricName)).toEqual(['NumberOfMessagesReceived']);
      expect(mine[0].Properties).toMatchObject({ Namespace: 'AWS/SQS', Statistic: 'Sum', Threshold: 1 });
      // A sync job's dead letter is counted by the dead-jobs alarm; two pages for one job help no one.
      const syncDlqRef = logicalId(dev.stack, dev.stack.queues.syncDlq);
      expect(alarms().filter((a) => JSON.stringify(a.Properties.Dimensions ?? []).includes(syncDlqRef))).toEqual([]);
    });

    it('take their threshold from -c deadJobsPerHour', () => {
      const custom = synthesize({ bundle: false, context: { deadJobsPerHour: '5' } });
      try {
        const alarm = Object.values(custom.template.findResources('AWS::CloudWatch::Alarm')).find(
          (a) => a.Properties.MetricName === BUSINESS_METRICS.jobsDead,
        );
        expect(alarm?.Properties.Threshold).toBe(5);
      } finally {
        removeOutput(custom.app);
      }
    });
  });

  describe('the dashboard', () => {
    it('shows every business metric of this stage', () => {
      const [dashboard] = Object.values(dev.template.findResources('AWS::CloudWatch::Dashboard'));
      const body = JSON.stringify(dashboard.Properties.DashboardBody);
      for (const name of Object.values(BUSINESS_METRICS)) expect(body).toContain(`\\"${name}\\"`);
      for (const statusClass of ['4xx', '5xx', 'network'])
        expect(body).toContain(`\\"statusClass\\",\\"${statusClass}\\"`);
      expect(body).toContain(`\\"${METRICS_NAMESPACE}\\"`);
      expect(body).toContain('\\"stage\\",\\"dev\\"');
    });

    it('stays within CloudWatch’s free allowance: at most 50 metrics (issue 44)', () => {
      const [dashboard] = Object.values(dev.template.findResources('AWS::CloudWatch::Dashboard'));
      const body = JSON.stringify(dashboard.Properties.DashboardBody);
      // Each metric of a widget is an array that starts with its namespace.
      const metrics = body.split(`[\\"${METRICS_NAMESPACE}\\"`).length - 1;
      expect(metrics).toBeGreaterThan(20);
      expect(metrics).toBeLessThanOrEqual(50);
    });
  });

  describe('throttles and errors (issue 44: one alarm each for the account, not one per function)', () => {
    const alarms = (s: Synthesized) => Object.values(s.template.findResources('AWS::CloudWatch::Alarm'));

    /** The one alarm on Lambda's `metric` of the account: a sum over 5 minutes, paging at the first. */
    const accountAlarm = (metric: string) => {
      const found = alarms(prod).filter((a) => a.Properties.MetricName === metric);
      expect(found).toHaveLength(1);
      expect(found[0].Properties).toMatchObject({
        Namespace: 'AWS/Lambda',
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        AlarmActions: [expect.anything()],
      });
      return found[0].Properties;
    };

    it('pages on any throttled invocation of any function: Lambda’s Throttles without a dimension', () => {
      const throttles = accountAlarm('Throttles');
      expect(throttles.EvaluationPeriods).toBe(1);
      // No dimension: the account's and region's every function, so each function of the stack (the
      // consumers that had an alarm each, and the routes and the authorizer, which had none) is in it.
      expect(throttles.Dimensions).toBeUndefined();
      expect(prod.stack.functions.size).toBe(allFunctions().length);
    });

    it('pages on any failed invocation of any function likewise: Lambda’s Errors without a dimension', () => {
      const errors = accountAlarm('Errors');
      // Every consumer that had an alarm of its own is a function of this account and region: in it.
      expect(errors.Dimensions).toBeUndefined();
      for (const consumer of allFunctions().filter((f) => f.consumer))
        expect(prod.stack.functions.get(consumer.name)).toBeDefined();
    });
  });

  describe('batching windows (issue 44)', () => {
    it('gathers the fulfillment queue’s messages 10 s, the sync queue’s 1 s, a dead letter’s not at all', () => {
      const mappings = Object.values(dev.template.findResources('AWS::Lambda::EventSourceMapping'));
      const windowOf = (name: string) => {
        const id = logicalId(dev.stack, dev.stack.functions.get(name)! as never);
        return mappings.find((m) => JSON.stringify(m.Properties.FunctionName).includes(id))?.Properties
          .MaximumBatchingWindowInSeconds;
      };
      expect(windowOf('FulfillmentWorker')).toBe(10);
      expect(windowOf('SyncWorker')).toBe(1);
      expect(windowOf('SyncDeadLetter')).toBeUndefined();
    });
  });

  describe('logs (issue 44)', () => {
    it('writes JSON lines; Lambda’s own from WARN, the functions’ from WARN, or -c logLevel', () => {
      const functions = Object.values(dev.template.findResources('AWS::Lambda::Function'));
      expect(functions.length).toBeGreaterThanOrEqual(allFunctions().length);
      for (const fn of functions.filter((f) => f.Properties.LoggingConfig?.LogGroup))
        expect(fn.Properties.LoggingConfig).toMatchObject({
          LogFormat: 'JSON',
          SystemLogLevel: 'WARN',
          ApplicationLogLevel: 'WARN',
        });
      const info = synthesize({ bundle: false, context: { logLevel: 'info' } });
      onExit.push(info);
      const levels = Object.values(info.template.findResources('AWS::Lambda::Function'))
        .filter((f) => f.Properties.LoggingConfig?.LogGroup)
        .map((f) => f.Properties.LoggingConfig.ApplicationLogLevel);
      expect(new Set(levels)).toEqual(new Set(['INFO']));
    });
  });

  describe('a prod synth without an alarm destination', () => {
    it('fails with one clear line and no stack trace', () => {
      const run = spawnSync(
        process.execPath,
        ['--import', 'tsx', join(PROJECT_ROOT, 'bin/app.ts'), '-c', 'stage=prod'],
        {
          cwd: PROJECT_ROOT,
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      expect(run.status).toBe(1);
      const lines = run.stderr.split('\n').filter((line) => line.trim() && !line.startsWith('npm warn'));
      expect(lines).toEqual([expect.stringMatching(/^error: stage prod needs .*alarmEmail.*alarmTopicArn/)]);
      expect(run.stdout).toBe('');
    }, 60_000);
  });

  describe('the secrets key', () => {
    it('is granted only under the encryption context the cipher sends', async () => {
      // What shared/aws/kms-cipher.ts sends: the condition's keys must be exactly these.
      const kms = mockClient(KMSClient);
      kms.on(EncryptCommand).resolves({ CiphertextBlob: Uint8Array.from([1]) });
      kms.on(DecryptCommand).resolves({ Plaintext: Uint8Array.from([1]) });
      const cipher = kmsCipher(new KMSClient({ region: 'us-east-1' }), () => 'key');
      await cipher.encrypt('x', { storeId: 'rst_1', field: 'accessToken' });
      await cipher.decrypt('AQ==', { storeId: 'rst_1', field: 'webhookSecret' });
      const sent = [...kms.commandCalls(EncryptCommand), ...kms.commandCalls(DecryptCommand)].map((call) =>
        Object.keys(call.args[0].input.EncryptionContext ?? {}).sort(),
      );
      kms.restore();
      expect(sent).toEqual([[...ENCRYPTION_CONTEXT_KEYS], [...ENCRYPTION_CONTEXT_KEYS]]);

      const keyArn = { 'Fn::GetAtt': [logicalId(dev.stack, dev.stack.secretsKey), 'Arn'] };
      const users = allFunctions().filter((fn) => fn.access.key);
      expect(users.length).toBeGreaterThan(3);
      for (const fn of allFunctions()) {
        const kmsStatements = statementsOf(dev, fn.name).filter((s) => actions(s).some((a) => a.startsWith('kms:')));
        if (!fn.access.key) {
          expect(kmsStatements).toEqual([]);
          continue;
        }
        const fields = [...fn.access.key.fields].sort();
        expect(kmsStatements).toEqual([
          expect.objectContaining({
            Resource: keyArn,
            Condition: {
              StringEquals: { 'kms:EncryptionContext:field': fields },
              Null: { 'kms:EncryptionContext:storeId': 'false' },
              'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': [...ENCRYPTION_CONTEXT_KEYS] },
            },
          }),
        ]);
      }
    });

    it('lets the webhooks decrypt webhook secrets and never access tokens', () => {
      for (const name of ['OrdersWebhook', 'FulfillmentsWebhook']) {
        const [statement] = statementsOf(dev, name).filter((s) => actions(s).includes('kms:Decrypt'));
        expect(statement.Condition?.StringEquals).toEqual({ 'kms:EncryptionContext:field': ['webhookSecret'] });
      }
    });
  });

  describe('Query grants', () => {
    it('name the indexes each function declares, and no other', () => {
      const tableArn = { 'Fn::GetAtt': [logicalId(dev.stack, dev.stack.table), 'Arn'] };
      for (const fn of allFunctions()) {
        const indexResources = statementsOf(dev, fn.name)
          .flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]))
          .filter((r) => JSON.stringify(r).includes('/index/'));
        const expected = (fn.access.indexes ?? []).map((index) => ({
          'Fn::Join': ['', [tableArn, `/index/${indexName(index)}`]],
        }));
        expect({ fn: fn.name, indexes: indexResources }).toEqual({ fn: fn.name, indexes: expected });
      }
    });

    it('give the list routes the indexes their filters read, and the reconciler the in-flight index only', () => {
      // Which filter reads which index: test/unit/list-sources.test.ts.
      expect(allFunctions().find((f) => f.name === 'ListResellerStores')?.access.indexes).toEqual(['lists']);
      expect(allFunctions().find((f) => f.name === 'ListSyncJobs')?.access.indexes).toEqual([
        'lists',
        'inFlight',
        'storeLists',
        'stateLists',
        'storeStateLists',
      ]);
      expect(allFunctions().find((f) => f.name === 'SyncReconciler')?.access.indexes).toEqual(['inFlight']);
    });
  });

  describe('work queues', () => {
    it('keep messages 14 days, as their dead-letter queues do', () => {
      // The poll queue too when told (-c pollMessageRetentionSeconds); by default it keeps 2 hours (issue 32).
      const dev = synthesize({ bundle: false, context: { pollMessageRetentionSeconds: '1209600' } });
      onExit.push(dev);
      for (const queue of Object.values(dev.stack.queues)) {
        expect(resourcesOf(dev)[logicalId(dev.stack, queue)].Properties.MessageRetentionPeriod).toBe(14 * 24 * 3600);
      }
    });
  });

  describe('work queues in prod', () => {
    it('are kept when the stack is deleted, with what they hold (up to 14 days of accepted work)', () => {
      for (const queue of Object.values(prod.stack.queues))
        expect(resourcesOf(prod)[logicalId(prod.stack, queue)].DeletionPolicy).toBe('RetainExceptOnCreate');
      for (const queue of Object.values(dev.stack.queues))
        expect(resourcesOf(dev)[logicalId(dev.stack, queue)].DeletionPolicy).toBe('Delete');
    });
  });

  describe('capacity (issue 22, item 4)', () => {
    it('drains each dead-letter queue two at a time, after an outage too', () => {
      for (const name of ['SyncDeadLetter', 'FulfillmentDeadLetter']) {
        const fn = dev.stack.functions.get(name)!;
        dev.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
          FunctionName: { Ref: logicalId(dev.stack, fn) },
          ScalingConfig: { MaximumConcurrency: 2 },
        });
      }
    });

    it('gives the webhook routes throttles of their own, apart from the API’s, and the catch-all a small one', () => {
      // The throttles of issue 22, given as context; issue 32's defaults: test/cdk/flash-sale.test.ts.
      const dev = synthesize({ bundle: false, context: { webhookThrottleRate: '200', webhookThrottleBurst: '400' } });
      onExit.push(dev);
      dev.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
        DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
        RouteSettings: {
          'POST /v1/orders/webhook': { ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 },
          'POST /v1/fulfillments/webhook': { ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 },
          $default: { ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 },
        },
      });
      const routeKeys = Object.values(dev.template.findResources('AWS::ApiGatewayV2::Route')).map(
        (r) => r.Properties.RouteKey,
      );
      expect(routeKeys).toEqual(expect.arrayContaining(['POST /v1/orders/webhook', 'POST /v1/fulfillments/webhook']));
    });
  });

  describe('alarms that page for the right thing (issue 22, item 2)', () => {
    const alarms = (s: Synthesized) => Object.values(s.template.findResources('AWS::CloudWatch::Alarm'));

    it('raise a queue-age alarm only above the longest deliberate wait (backoff, deferral, redrive)', () => {
      const ages = alarms(dev).filter((a) => a.Properties.MetricName === 'ApproximateAgeOfOldestMessage');
      // sync, fulfillment, poll, delivery (its hops wait 900 s at most), app (app webhooks handled durably)
      expect(ages).toHaveLength(5);
      for (const age of ages) expect(age.Properties.Threshold).toBeGreaterThan(300 + 1800 + 60);
    });

    it('never retry a failed reconciler run by Lambda’s asynchronous invoke', () => {
      for (const name of ['SyncReconciler']) {
        const fn = dev.stack.functions.get(name)!;
        dev.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
          FunctionName: { Ref: logicalId(dev.stack, fn) },
          MaximumRetryAttempts: 0,
        });
      }
    });

    it('alarm when the reconciler’s schedule stops: no run in three periods pages, as INSUFFICIENT_DATA', () => {
      const heartbeat = alarms(dev).find((a) => a.Properties.AlarmDescription?.includes('schedule stopped'));
      expect(heartbeat?.Properties).toMatchObject({
        MetricName: 'Invocations',
        Namespace: 'AWS/Lambda',
        ComparisonOperator: 'LessThanThreshold',
        Threshold: 1,
        EvaluationPeriods: 3,
        // Lambda publishes nothing for a period without a run: all three missing is INSUFFICIENT_DATA.
        TreatMissingData: 'missing',
        Period: 300,
      });
    });

    it('page no one on the day of a deploy, and page when the daily retention sweep misses its runs', () => {
      const topicId = Object.keys(prod.template.findResources('AWS::SNS::Topic'))[0];
      const fn = prod.stack.functions.get('RetentionSweep')!;
      const [sweep] = alarms(prod).filter(
        (a) =>
          a.Properties.MetricName === 'Invocations' &&
          JSON.stringify(a.Properties.Dimensions).includes(logicalId(prod.stack, fn)),
      );
      expect(sweep?.Properties).toMatchObject({
        Period: 86_400,
        EvaluationPeriods: 3,
        ComparisonOperator: 'LessThanThreshold',
        Threshold: 1,
      });
      // Missing data breaching would put a new alarm in ALARM until the first run, a day after the
      // deploy. Left missing, a new alarm stays in INSUFFICIENT_DATA, where every alarm starts, and
      // actions fire on a change of state only; three days without a run go there from OK, and page.
      expect(sweep.Properties.TreatMissingData).toBe('missing');
      expect(sweep.Properties.InsufficientDataActions).toEqual([{ Ref: topicId }]);
      expect(sweep.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
      // Every schedule's heartbeat the same way; no other alarm pages on missing data.
      const paging = alarms(prod).filter((a) => a.Properties.InsufficientDataActions);
      expect(paging.length).toBeGreaterThanOrEqual(3);
      for (const a of paging) {
        expect(a.Properties).toMatchObject({ MetricName: 'Invocations', TreatMissingData: 'missing' });
        expect(a.Properties.AlarmDescription).toContain('schedule stopped');
      }
      expect(alarms(prod).filter((a) => a.Properties.TreatMissingData === 'breaching')).toEqual([]);
    });
  });

  describe('upgrading a deployed table, one index per deployment (issue 22, item 6)', () => {
    const indexesOf = (s: Synthesized) => {
      const [table] = Object.values(s.template.findResources('AWS::DynamoDB::Table'));
      return (table.Properties.GlobalSecondaryIndexes ?? []) as { IndexName: string }[];
    };

    it('adds at most one index from each step to the next, from the 3-index table to all 7, changing none', () => {
      const steps = [3, 4, 5, 6, 7].map((n) => {
        const step = synthesize({ bundle: false, context: { indexes: String(n) } });
        const indexes = indexesOf(step);
        removeOutput(step.app);
        return indexes;
      });
      expect(steps.map((indexes) => indexes.length)).toEqual([3, 4, 5, 6, 7]);
      for (let n = 1; n < steps.length; n++) {
        // Each step keeps every index of the one before exactly as it was, and adds one.
        expect(steps[n].slice(0, -1)).toEqual(steps[n - 1]);
      }
      expect(steps.at(-1)).toEqual(indexesOf(dev));
    }, 120_000);
  });

  describe('cdk destroy', () => {
    const tableAndKey = (s: Synthesized) => {
      const resources = resourcesOf(s);
      return {
        table: resources[logicalId(s.stack, s.stack.table)],
        key: resources[logicalId(s.stack, s.stack.secretsKey)],
        keyId: logicalId(s.stack, s.stack.secretsKey),
      };
    };

    it('keeps both the table and its key of a protected dev stack', () => {
      const { table, key } = tableAndKey(dev);
      expect(table.Properties.DeletionProtectionEnabled).toBe(true);
      expect([table.DeletionPolicy, key.DeletionPolicy]).toEqual(['RetainExceptOnCreate', 'RetainExceptOnCreate']);
    });

    it('removes both of an unprotected dev stack', () => {
      const { table, key } = tableAndKey(unprotected);
      expect(table.Properties.DeletionProtectionEnabled).toBe(false);
      expect([table.DeletionPolicy, key.DeletionPolicy]).toEqual(['Delete', 'Delete']);
    });

    it('keeps both in prod', () => {
      const { table, key } = tableAndKey(prod);
      expect([table.DeletionPolicy, key.DeletionPolicy]).toEqual(['RetainExceptOnCreate', 'RetainExceptOnCreate']);
    });

    it('deletes the table before the key, so a table that stays stops the key from going', () => {
      for (const s of [dev, unprotected, prod]) {
        const { table, keyId } = tableAndKey(s);
        expect(table.DependsOn).toContain(keyId);
      }
    });
  });
});
