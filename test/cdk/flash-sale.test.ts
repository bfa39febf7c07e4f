import { Match } from 'aws-cdk-lib/assertions';
import { allFunctions } from '../../lib/functions.js';
import { consumers, isScheduled, type QueueName, routes } from '../../lib/routes.js';
import { BUSINESS_METRICS, METRICS_NAMESPACE } from '../../shared/core/telemetry.js';
import { logicalId, type Resources, removeOutput, type Synthesized, synthesize } from './synth.js';

/**
 * What a flash sale needs of the stack (issue 32): intake sized and isolated, no silent failure,
 * margins, day-one operations. Each limit, alarm, policy and setting, asserted on the template.
 */

const resourcesOf = (s: Synthesized) => s.template.toJSON().Resources as Resources;
const alarmsOf = (s: Synthesized) => Object.entries(s.template.findResources('AWS::CloudWatch::Alarm'));
const alarm = (s: Synthesized, id: string) => {
  const found = alarmsOf(s).filter(([logical]) => logical.startsWith(id));
  expect(found.map(([logical]) => logical)).toHaveLength(1);
  return found[0][1].Properties;
};
const functionId = (s: Synthesized, name: string) => logicalId(s.stack, s.stack.functions.get(name)!);
const queueRef = (s: Synthesized, queue: QueueName) => ({ Ref: logicalId(s.stack, s.stack.queues[queue]) });
const queueName = (s: Synthesized, queue: QueueName) => ({
  'Fn::GetAtt': [logicalId(s.stack, s.stack.queues[queue]), 'QueueName'],
});
const webhookRoutes = routes.filter((r) => r.auth === 'webhook');
const routeKeys = webhookRoutes.map((r) => `${r.method} ${r.path}`);
const CERTIFICATE_ARN = 'arn:aws:acm:eu-west-1:123456789012:certificate/0b1c2d3e-aaaa-bbbb-cccc-123456789012';

describe('a flash sale on AWS (issue 32)', () => {
  let dev: Synthesized;
  let prod: Synthesized;
  const others: Synthesized[] = [];
  const synth = (context: Record<string, unknown>) => {
    const s = synthesize({ bundle: false, context });
    others.push(s);
    return s;
  };

  beforeAll(() => {
    dev = synthesize({ bundle: false });
    prod = synthesize({
      bundle: false,
      context: {
        stage: 'prod',
        alarmEmail: 'ops@example.com',
        domainName: 'api.example.com',
        hostedZoneId: 'Z0123456789',
        hostedZoneName: 'example.com',
      },
    });
  }, 60_000);

  afterAll(() => {
    for (const s of [dev, prod, ...others]) removeOutput(s?.app);
  });

  describe('intake, sized and isolated', () => {
    it('gives each webhook route a bucket of 1,000 a second, burst 2,000, route metrics with -c routeMetrics', () => {
      const [stage] = Object.values(dev.template.findResources('AWS::ApiGatewayV2::Stage'));
      // Route metrics are custom metrics (six a route): none by default (issue 44), as the access log's
      // filters count each webhook route's 429s and 5xx (and alarm on them: test/cdk/operations.test.ts).
      expect(stage.Properties.DefaultRouteSettings.DetailedMetricsEnabled).toBeUndefined();
      expect(stage.Properties.RouteSettings.$default.DetailedMetricsEnabled).toBeUndefined();
      for (const key of routeKeys) {
        expect(stage.Properties.RouteSettings[key]).toEqual({
          ThrottlingRateLimit: 1000,
          ThrottlingBurstLimit: 2000,
        });
      }
      const withMetrics = synth({ routeMetrics: 'true' });
      const [metered] = Object.values(withMetrics.template.findResources('AWS::ApiGatewayV2::Stage'));
      for (const key of routeKeys) {
        expect(metered.Properties.RouteSettings[key]).toEqual({
          ThrottlingRateLimit: 1000,
          ThrottlingBurstLimit: 2000,
          DetailedMetricsEnabled: true,
        });
      }
      // The platforms' deliveries: orders, fulfillments, and the app's own topics (CONTRACT.md §12.2).
      expect(routeKeys).toEqual(
        expect.arrayContaining(['POST /v1/orders/webhook', 'POST /v1/fulfillments/webhook', 'POST /v1/app/webhook']),
      );
    });

    it('takes the webhook throttles from -c webhookThrottleRate and -c webhookThrottleBurst', () => {
      const custom = synth({ webhookThrottleRate: '3000', webhookThrottleBurst: '5000' });
      const [stage] = Object.values(custom.template.findResources('AWS::ApiGatewayV2::Stage'));
      for (const key of routeKeys)
        expect(stage.Properties.RouteSettings[key]).toMatchObject({
          ThrottlingRateLimit: 3000,
          ThrottlingBurstLimit: 5000,
        });
    });

    it('counts each webhook route’s 429s and 5xx from the access log, by API and route', () => {
      const [stage] = Object.values(dev.template.findResources('AWS::ApiGatewayV2::Stage'));
      const format = JSON.parse(stage.Properties.AccessLogSettings.Format);
      expect(format).toMatchObject({
        apiId: '$context.apiId',
        routeKey: '$context.routeKey',
        status: '$context.status',
      });
      const logGroup = stage.Properties.AccessLogSettings.DestinationArn['Fn::GetAtt'][0];
      const filters = Object.values(dev.template.findResources('AWS::Logs::MetricFilter'));
      const byName = Object.fromEntries(filters.map((f) => [f.Properties.MetricTransformations[0].MetricName, f]));
      expect(Object.keys(byName).sort()).toEqual(['WebhookServerErrors', 'WebhookThrottled']);
      for (const [name, status] of [
        ['WebhookThrottled', '"429"'],
        ['WebhookServerErrors', '"5*"'],
      ]) {
        const filter = byName[name].Properties;
        expect(filter.LogGroupName).toEqual({ Ref: logGroup });
        expect(filter.FilterPattern).toContain(`$.status = ${status}`);
        for (const key of routeKeys) expect(filter.FilterPattern).toContain(`$.routeKey = "${key}"`);
        expect(filter.MetricTransformations[0]).toMatchObject({
          MetricNamespace: METRICS_NAMESPACE,
          MetricValue: '1',
          // Every webhook route in one metric (issue 44): one alarm for them all; the log line names the route.
          Dimensions: [{ Key: 'ApiId', Value: '$.apiId' }],
        });
      }
    });

    it('alarms on any webhook route answering 429, and on 5xx where the API 5xx alarm would not already', () => {
      const dimensions = [{ Name: 'ApiId', Value: { Ref: logicalId(dev.stack, dev.stack.api) } }];
      expect(alarm(dev, 'WebhookThrottledAlarm')).toMatchObject({
        MetricName: 'WebhookThrottled',
        Namespace: METRICS_NAMESPACE,
        Dimensions: dimensions,
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      for (const route of webhookRoutes)
        expect(alarm(dev, 'WebhookThrottledAlarm').AlarmDescription).toContain(`${route.method} ${route.path}`);
      // A webhook's 5xx is one of the API's, counted in the same 5 minutes: with both thresholds 5 (the
      // defaults), the API's 5xx alarm is in ALARM whenever a webhooks' one would be.
      const api5xx = { MetricName: '5xx', Statistic: 'Sum', Period: 300, Threshold: 5 };
      expect(alarm(dev, 'Api5xxAlarm')).toMatchObject(api5xx);
      expect(alarmsOf(dev).filter(([id]) => id.startsWith('WebhookServerErrorsAlarm'))).toEqual([]);
      // A webhooks' threshold below the API's: its own alarm, at its threshold.
      const lower = synth({ webhook5xxThreshold: 2 });
      expect(alarm(lower, 'WebhookServerErrorsAlarm')).toMatchObject({
        MetricName: 'WebhookServerErrors',
        Dimensions: [{ Name: 'ApiId', Value: { Ref: logicalId(lower.stack, lower.stack.api) } }],
        Period: 300,
        Threshold: 2,
      });
    });
  });

  describe('no silent failure', () => {
    it.each(['syncDlq', 'fulfillmentDlq'] as const)(
      'alarms when %s (drained by its handler) holds messages 15 minutes running, visible or in flight',
      (queue) => {
        const id = queue.charAt(0).toUpperCase() + queue.slice(1);
        const props = alarm(dev, `${id}BacklogAlarm`);
        expect(props).toMatchObject({
          EvaluationPeriods: 15,
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          TreatMissingData: 'ignore',
        });
        const metrics = props.Metrics as any[];
        expect(metrics.find((m) => m.ReturnData !== false).Expression).toBe('visible + inFlight');
        const names = metrics
          .filter((m) => m.MetricStat)
          .map((m) => [m.MetricStat.Metric.MetricName, m.MetricStat.Metric.Dimensions, m.MetricStat.Period]);
        expect(names.sort()).toEqual(
          [
            ['ApproximateNumberOfMessagesNotVisible', [{ Name: 'QueueName', Value: queueName(dev, queue) }], 60],
            ['ApproximateNumberOfMessagesVisible', [{ Name: 'QueueName', Value: queueName(dev, queue) }], 60],
          ].sort(),
        );
      },
    );

    it.each(['pollDlq', 'deliveryDlq', 'appDlq'] as const)(
      'alarms when %s (which nothing receives from) holds visible messages 15 minutes running',
      (queue) => {
        expect(consumers.some((c) => 'queue' in c.trigger && c.trigger.queue === queue)).toBe(false);
        const id = queue.charAt(0).toUpperCase() + queue.slice(1);
        expect(alarm(dev, `${id}BacklogAlarm`)).toMatchObject({
          MetricName: 'ApproximateNumberOfMessagesVisible',
          Namespace: 'AWS/SQS',
          Dimensions: [{ Name: 'QueueName', Value: queueName(dev, queue) }],
          Statistic: 'Maximum',
          Period: 60,
          EvaluationPeriods: 15,
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          TreatMissingData: 'ignore',
        });
      },
    );

    it('pages on every receive of the fulfillment DLQ, so its handler needs no failed-records alarm', () => {
      expect(alarm(dev, 'FulfillmentDlqMessagesAlarm')).toMatchObject({
        MetricName: 'NumberOfMessagesReceived',
        Dimensions: [{ Name: 'QueueName', Value: queueName(dev, 'fulfillmentDlq') }],
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      expect(alarmsOf(dev).filter(([id]) => id.startsWith('FulfillmentDeadLetterFailedRecordsAlarm'))).toEqual([]);
    });

    it.each(
      consumers
        .filter((c) => 'queue' in c.trigger && c.trigger.queue !== 'fulfillmentDlq')
        .map((c) => [c.name, c] as const),
    )('alarms when %s fails half the records it receives in 15 minutes', (name, consumer) => {
      const queue = (consumer.trigger as { queue: QueueName }).queue;
      const props = alarm(dev, `${name}FailedRecordsAlarm`);
      expect(props).toMatchObject({ Threshold: 50, EvaluationPeriods: 1, TreatMissingData: 'notBreaching' });
      const metrics = props.Metrics as any[];
      expect(metrics.find((m) => m.Expression).Expression).toBe(
        'IF(received >= 10, 100 * (received - deleted) / received, 0)',
      );
      const stats = Object.fromEntries(
        metrics.filter((m) => m.MetricStat).map((m) => [m.Id, m.MetricStat.Metric.MetricName]),
      );
      expect(stats).toEqual({ received: 'NumberOfMessagesReceived', deleted: 'NumberOfMessagesDeleted' });
      for (const m of metrics.filter((m) => m.MetricStat)) {
        expect(m.MetricStat.Metric.Dimensions).toEqual([{ Name: 'QueueName', Value: queueName(dev, queue) }]);
        expect(m.MetricStat).toMatchObject({ Period: 900, Stat: 'Sum' });
      }
    });

    it('alarms on the failed records counted, p95 webhook → completed above an hour, platform errors', () => {
      const dims = [
        { Name: 'service', Value: 'reseller-routing' },
        { Name: 'stage', Value: 'dev' },
      ];
      expect(alarm(dev, 'QueueRecordsFailedAlarm')).toMatchObject({
        MetricName: BUSINESS_METRICS.queueRecordsFailed,
        Namespace: METRICS_NAMESPACE,
        Dimensions: dims,
        Period: 900,
        Statistic: 'Sum',
      });
      expect(alarm(dev, 'WebhookToCompletedLatencyAlarm')).toMatchObject({
        MetricName: BUSINESS_METRICS.webhookToCompletedLatency,
        Dimensions: dims,
        ExtendedStatistic: 'p95',
        Threshold: 3_600_000,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 2,
      });
      const platform = alarm(dev, 'PlatformErrorsAlarm');
      expect(platform.Threshold).toBe(50);
      const classes = (platform.Metrics as any[])
        .filter((m) => m.MetricStat)
        .map((m) => {
          expect(m.MetricStat.Metric.MetricName).toBe(BUSINESS_METRICS.platformErrors);
          return m.MetricStat.Metric.Dimensions.find((d: any) => d.Name === 'statusClass').Value;
        });
      expect(classes.sort()).toEqual(['5xx', 'network']);
    });

    it('alarms on the first record a consumer fails on an error no retry mends (SystemicErrors)', () => {
      expect(alarm(dev, 'SystemicErrorsAlarm')).toMatchObject({
        MetricName: BUSINESS_METRICS.systemicErrors,
        Namespace: METRICS_NAMESPACE,
        Dimensions: [
          { Name: 'service', Value: 'reseller-routing' },
          { Name: 'stage', Value: 'dev' },
        ],
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        EvaluationPeriods: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
    });

    it('sends every new alarm to the alarm topic in prod', () => {
      const [topicId] = Object.keys(prod.template.findResources('AWS::SNS::Topic'));
      const ids = [
        'BacklogAlarm',
        'FailedRecordsAlarm',
        'LatencyAlarm',
        'PlatformErrorsAlarm',
        'ThrottledAlarm',
        'SystemicErrorsAlarm',
      ];
      const mine = alarmsOf(prod).filter(([logical]) => ids.some((id) => logical.includes(id)));
      expect(mine.length).toBeGreaterThanOrEqual(3 + 5 + 1 + 1 + 2 + 1);
      for (const [, a] of mine) expect(a.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
    });
  });

  describe('margins', () => {
    it('drops a scheduled run that could not start within 5 minutes, at EventBridge and at Lambda', () => {
      const scheduled = consumers.filter((c) => isScheduled(c.trigger));
      expect(scheduled.length).toBeGreaterThan(0);
      for (const c of scheduled) {
        dev.template.hasResourceProperties('AWS::Events::Rule', {
          Targets: [
            Match.objectLike({
              Arn: { 'Fn::GetAtt': [functionId(dev, c.name), 'Arn'] },
              RetryPolicy: { MaximumEventAgeInSeconds: 300, MaximumRetryAttempts: 0 },
            }),
          ],
        });
        dev.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
          FunctionName: { Ref: functionId(dev, c.name) },
          MaximumEventAgeInSeconds: 300,
          MaximumRetryAttempts: 0,
        });
      }
    });

    it('keeps poll messages 2 hours (a day with a daily poll), and everything else, the poll DLQ too, 14 days', () => {
      for (const [queue, retention] of Object.entries({
        poll: 7200,
        pollDlq: 14 * 86_400,
        sync: 14 * 86_400,
        syncDlq: 14 * 86_400,
        fulfillment: 14 * 86_400,
        fulfillmentDlq: 14 * 86_400,
      }) as [QueueName, number][]) {
        expect(resourcesOf(dev)[queueRef(dev, queue).Ref].Properties.MessageRetentionPeriod).toBe(retention);
      }
      const daily = synth({ pollIntervalSeconds: '86400' });
      expect(resourcesOf(daily)[queueRef(daily, 'poll').Ref].Properties.MessageRetentionPeriod).toBe(86_400);
    });

    it('caches the authorizer’s verdict 60 s by the Authorization header, and not at all with 0', () => {
      dev.template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
        AuthorizerType: 'REQUEST',
        EnableSimpleResponses: true,
        IdentitySource: ['$request.header.Authorization'],
        AuthorizerResultTtlInSeconds: 60,
      });
      const off = synth({ authorizerCacheSeconds: '0' });
      off.template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
        IdentitySource: [],
        AuthorizerResultTtlInSeconds: 0,
      });
    });

    it('gives the sync worker time for five 10 s supplier calls, and its queue six times that', () => {
      const timeout = resourcesOf(dev)[functionId(dev, 'SyncWorker')].Properties.Timeout;
      expect(timeout).toBeGreaterThanOrEqual(5 * 10 + 10);
      expect(resourcesOf(dev)[queueRef(dev, 'sync').Ref].Properties.VisibilityTimeout).toBe(6 * timeout);
    });
  });

  describe('day one', () => {
    it('protects the prod stack from termination, not a dev one', () => {
      expect(prod.stack.terminationProtection).toBe(true);
      expect(dev.stack.terminationProtection).toBe(false);
    });

    it('serves prod at its own domain with a DNS-validated certificate, its execute-api host off', () => {
      prod.template.hasResourceProperties('AWS::CertificateManager::Certificate', {
        DomainName: 'api.example.com',
        ValidationMethod: 'DNS',
        DomainValidationOptions: [{ DomainName: 'api.example.com', HostedZoneId: 'Z0123456789' }],
      });
      prod.template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
        DomainName: 'api.example.com',
        DomainNameConfigurations: [Match.objectLike({ EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' })],
      });
      const apiId = logicalId(prod.stack, prod.stack.api);
      prod.template.hasResourceProperties('AWS::ApiGatewayV2::ApiMapping', {
        ApiId: { Ref: apiId },
        Stage: '$default',
      });
      prod.template.hasResourceProperties('AWS::Route53::RecordSet', {
        Name: 'api.example.com.',
        Type: 'A',
        HostedZoneId: 'Z0123456789',
      });
      expect(resourcesOf(prod)[apiId].Properties.DisableExecuteApiEndpoint).toBe(true);
      prod.template.hasOutput('ApiUrl', { Value: 'https://api.example.com/' });
    });

    it('uses a given certificate as is, and keeps the execute-api host without a domain', () => {
      const given = synth({ domainName: 'api.example.com', certificateArn: CERTIFICATE_ARN });
      given.template.resourceCountIs('AWS::CertificateManager::Certificate', 0);
      given.template.resourceCountIs('AWS::Route53::RecordSet', 0);
      given.template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
        DomainNameConfigurations: [Match.objectLike({ CertificateArn: CERTIFICATE_ARN })],
      });
      given.template.hasOutput('ApiDomainTarget', { Value: Match.anyValue() });
      const apiId = logicalId(dev.stack, dev.stack.api);
      expect(resourcesOf(dev)[apiId].Properties.DisableExecuteApiEndpoint).not.toBe(true);
      dev.template.resourceCountIs('AWS::ApiGatewayV2::DomainName', 0);
    });

    it('counts each key’s changes: API_KEY_RATE_LIMIT (-c apiKeyRateLimit, 10) on the key routes that change', () => {
      const variable = (s: Synthesized, name: string) =>
        resourcesOf(s)[functionId(s, name)].Properties.Environment.Variables.API_KEY_RATE_LIMIT;
      const changing = routes.filter((route) => route.auth === 'apiKey' && route.method !== 'GET');
      const others = allFunctions().filter((fn) => !changing.some((route) => route.name === fn.name));
      expect(changing.map((route) => route.name)).toEqual(
        expect.arrayContaining(['CreateResellerStore', 'UpdateResellerStore', 'RetrySyncJob']),
      );
      for (const route of changing) {
        expect([route.name, variable(dev, route.name)]).toEqual([route.name, '10']);
        expect(route.access.table).toContain('UpdateItem');
      }
      for (const fn of others) expect([fn.name, variable(dev, fn.name)]).toEqual([fn.name, undefined]);
      const five = synth({ apiKeyRateLimit: '5' });
      expect(variable(five, 'UpdateResellerStore')).toBe('5');
      const off = synth({ apiKeyRateLimit: '0' });
      expect(variable(off, 'UpdateResellerStore')).toBeUndefined();
    });

    it('gives every function that writes the table JOB_RETENTION_DAYS (-c jobRetentionDays, 365), for TTL', () => {
      dev.template.hasResourceProperties('AWS::DynamoDB::Table', {
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      });
      const days = (s: Synthesized, name: string) =>
        resourcesOf(s)[functionId(s, name)].Properties.Environment.Variables.JOB_RETENTION_DAYS;
      const writers = allFunctions().filter((fn) =>
        (fn.access.table ?? []).some((action) => ['PutItem', 'UpdateItem', 'TransactWriteItems'].includes(action)),
      );
      // Whatever ends a job (a move to completed, dead or cancelled; a job created cancelled) or retries one.
      expect(writers.map((fn) => fn.name)).toEqual(
        expect.arrayContaining(['SyncWorker', 'SyncDeadLetter', 'SyncReconciler', 'OrdersWebhook', 'RetrySyncJob']),
      );
      for (const fn of writers) expect([fn.name, days(dev, fn.name)]).toEqual([fn.name, '365']);
      expect(days(dev, 'GetSyncJob')).toBeUndefined();
      const thirty = synth({ jobRetentionDays: '30', personalDataRetentionDays: '30' });
      for (const fn of writers) expect([fn.name, days(thirty, fn.name)]).toEqual([fn.name, '30']);
    });

    describe.each([
      ['dev', () => dev],
      ['prod', () => prod],
    ])('KMS key policies (%s)', (_stage, stage) => {
      const keyPolicies = () =>
        Object.entries(stage().template.findResources('AWS::KMS::Key')).map(
          ([id, key]) => [id, key.Properties.KeyPolicy.Statement as any[]] as const,
        );
      const actionsOf = (statement: any): string[] =>
        Array.isArray(statement.Action) ? statement.Action : [statement.Action];

      it('let the account administer each key, never use it, with no wildcard action', () => {
        const policies = keyPolicies();
        // One key (issue 44): the secrets key encrypts the alarm topic too (prod), held to the topic's context.
        expect(policies.length).toBe(1);
        for (const [, statements] of policies) {
          for (const statement of statements) {
            expect(actionsOf(statement).filter((a) => a.includes('*'))).toEqual([]);
            const usesKey = actionsOf(statement).some((a) =>
              /^kms:(Decrypt|Encrypt|GenerateDataKey|ReEncrypt|CreateGrant)/.test(a),
            );
            if (usesKey && JSON.stringify(statement.Principal).includes(':root'))
              expect(statement.Condition?.ArnEquals?.['aws:PrincipalArn']).toBeDefined();
          }
        }
      });

      it('let exactly the roles of the functions that declare the secrets key encrypt or decrypt with it', () => {
        const s = stage();
        const [, statements] = keyPolicies().find(([id]) => id === logicalId(s.stack, s.stack.secretsKey))!;
        for (const action of ['Decrypt', 'Encrypt'] as const) {
          // One statement per group of roles that declare the same actions and secrets (lib/access.ts
          // keyUseGrants); test/cdk/access-template.test.ts evaluates them role by role, secret by secret.
          const byService = statements.filter((st) => st.Principal?.Service && actionsOf(st).includes(`kms:${action}`));
          // The one service that may use it: CloudWatch, for the alarm topic's messages only (no secret's context).
          for (const st of byService)
            expect([st.Principal.Service, st.Condition['ForAllValues:StringEquals']]).toEqual([
              'cloudwatch.amazonaws.com',
              { 'kms:EncryptionContextKeys': ['aws:sns:topicArn'] },
            ]);
          expect(byService.length).toBe(stage() === prod && action === 'Decrypt' ? 1 : 0);
          const granted = statements.filter((st) => !st.Principal?.Service && actionsOf(st).includes(`kms:${action}`));
          expect(granted.length).toBeGreaterThan(0);
          const roles = allFunctions()
            .filter((fn) => fn.access.key?.actions.includes(action))
            .map((fn) => ({
              'Fn::GetAtt': [logicalId(s.stack, s.stack.functions.get(fn.name)!.role as never), 'Arn'],
            }));
          expect(roles.length).toBeGreaterThan(0);
          const byId = (a: any, b: any) => a['Fn::GetAtt'][0].localeCompare(b['Fn::GetAtt'][0]);
          expect(granted.flatMap((st) => st.Condition.ArnEquals['aws:PrincipalArn']).sort(byId)).toEqual(
            roles.sort(byId),
          );
          for (const statement of granted) {
            expect(statement.Condition).toMatchObject({
              Null: { 'kms:EncryptionContext:storeId': 'false' },
              'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['field', 'storeId'] },
            });
          }
        }
      });
    });
  });
});
