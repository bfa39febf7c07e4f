import { rmSync } from 'node:fs';
import { App, RemovalPolicy } from 'aws-cdk-lib';
import { ConfigError, loadConfig, longestDeliberateDelaySeconds, MAX_BACKOFF_STEP_SECONDS } from '../../lib/config.js';

const configWith = (context: Record<string, unknown>) => {
  const app = new App({ context });
  try {
    return loadConfig(app);
  } finally {
    rmSync(app.outdir, { recursive: true, force: true });
  }
};

describe('config', () => {
  it('defaults to a dev stage whose logs go with its stack, and whose protected table and key stay', () => {
    expect(configWith({})).toEqual({
      stage: 'dev',
      isProd: false,
      removalPolicy: RemovalPolicy.DESTROY,
      dataRemovalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
      maxReceiveCount: 3,
      memorySize: 256,
      throttleRate: 50,
      throttleBurst: 100,
      webhookThrottleRate: 1000,
      webhookThrottleBurst: 2000,
      authorizerCacheSeconds: 60,
      domainName: undefined,
      certificateArn: undefined,
      hostedZoneId: undefined,
      hostedZoneName: undefined,
      jobRetentionDays: 365,
      routeMetrics: false,
      logLevel: 'WARN',
      personalDataRetentionDays: 90,
      apiKeyRateLimit: 10,
      pollMessageRetentionSeconds: 7200,
      failedRecordsAlarmPercent: 50,
      platformErrorsPer15Minutes: 50,
      webhook429Threshold: 1,
      webhook5xxThreshold: 5,
      logRetentionDays: 30,
      alarmEmail: undefined,
      alarmTopicArn: undefined,
      shopDomainSuffix: 'myshopify.com',
      api5xxThreshold: 5,
      // 15 minutes above the longest deliberate wait: 300 + 1800 + 60 s of backoff.
      queueAgeAlarmSeconds: 3060,
      deadJobsPerHour: 1,
      tracing: false,
      deletionProtection: true,
      throttleBudgetSeconds: 86_400,
      syncBackoffSeconds: [300, 1800, 60],
      indexes: 7,
      pollIntervalSeconds: 900,
    });
  });

  it('refuses personal data kept longer than the jobs its retention sweep finds it through', () => {
    expect(() => configWith({ jobRetentionDays: '30' })).toThrow(/personalDataRetentionDays \(90\) must not exceed/);
    expect(configWith({ jobRetentionDays: '90' }).personalDataRetentionDays).toBe(90);
  });

  it('reads the poll interval in whole minutes, as EventBridge schedules it', () => {
    expect(configWith({ pollIntervalSeconds: '300' }).pollIntervalSeconds).toBe(300);
    expect(() => configWith({ pollIntervalSeconds: '90' })).toThrow(/whole number of minutes/);
    expect(() => configWith({ pollIntervalSeconds: '30' })).toThrow(/pollIntervalSeconds must be an integer in 60/);
  });

  it('reads the sync backoff steps and refuses a step SQS cannot wait', () => {
    expect(configWith({ syncBackoffSeconds: '30,600' }).syncBackoffSeconds).toEqual([30, 600]);
    expect(() => configWith({ syncBackoffSeconds: '60,50000' })).toThrow(/syncBackoffSeconds/);
    expect(() => configWith({ syncBackoffSeconds: '1m' })).toThrow(/syncBackoffSeconds/);
    // SQS's 12 hours run from the receive, and the worker may have held the message 15 minutes already.
    expect(() => configWith({ syncBackoffSeconds: '60,42301' })).toThrow(/up to 42300/);
    expect(configWith({ syncBackoffSeconds: '60,42300' }).syncBackoffSeconds).toEqual([60, 42_300]);
  });

  it('spreads the default attempts of one message over at least 30 minutes, no step past SQS’s limit', () => {
    const { syncBackoffSeconds, maxReceiveCount } = configWith({});
    // Attempt n+1 comes after the waits of the n failed before it; the last wait only leads to the DLQ.
    const attemptsAt = Array.from({ length: maxReceiveCount }, (_, n) =>
      syncBackoffSeconds.slice(0, n).reduce((sum, step) => sum + step, 0),
    );
    expect(attemptsAt).toEqual([0, 300, 2100]);
    expect(attemptsAt.at(-1)! - attemptsAt[0]).toBeGreaterThanOrEqual(30 * 60);
    for (const step of syncBackoffSeconds) expect(step).toBeLessThanOrEqual(MAX_BACKOFF_STEP_SECONDS);
    expect(MAX_BACKOFF_STEP_SECONDS + 15 * 60).toBeLessThanOrEqual(12 * 3600);
  });

  it('takes the number of indexes an upgrade has reached, from the 3 every deployed table has to all 7', () => {
    expect(configWith({ indexes: '4' }).indexes).toBe(4);
    expect(() => configWith({ indexes: '2' })).toThrow(/indexes must be an integer in 3..7/);
    expect(() => configWith({ indexes: '8' })).toThrow(/indexes/);
  });

  it('raises the queue-age alarm only above the longest deliberate wait, and refuses a threshold below it', () => {
    const config = configWith({ syncBackoffSeconds: '600,3600,60' });
    expect(config.queueAgeAlarmSeconds).toBeGreaterThan(longestDeliberateDelaySeconds(config.syncBackoffSeconds));
    expect(() => configWith({ queueAgeAlarmSeconds: '900' })).toThrow(/queueAgeAlarmSeconds must be above 2160/);
  });

  it('lets a dev stage turn deletion protection off, and then deletes table and key with the stack', () => {
    expect(configWith({ deletionProtection: 'false' })).toMatchObject({
      deletionProtection: false,
      dataRemovalPolicy: RemovalPolicy.DESTROY,
    });
  });

  it('retains data and keeps logs 90 days in prod', () => {
    expect(configWith({ stage: 'prod', alarmEmail: 'ops@example.com' })).toMatchObject({
      stage: 'prod',
      isProd: true,
      removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
      dataRemovalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
      logRetentionDays: 90,
    });
  });

  it('retains table and key in prod even without deletion protection', () => {
    const config = configWith({ stage: 'prod', alarmEmail: 'ops@example.com', deletionProtection: 'false' });
    expect(config.dataRemovalPolicy).toBe(RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE);
  });

  it('refuses a prod stage whose alarms would reach no one, in one line naming both ways out', () => {
    const refuse = () => configWith({ stage: 'prod' });
    expect(refuse).toThrow(ConfigError);
    expect(refuse).toThrow(/^stage prod needs .*-c alarmEmail=.*-c alarmTopicArn=[^\n]*$/);
    expect(configWith({ stage: 'prod', alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:on-call' }).isProd).toBe(
      true,
    );
  });

  it('reads numbers and booleans given as strings on the command line', () => {
    expect(
      configWith({ maxReceiveCount: '5', memorySize: 512, tracing: 'true', logRetentionDays: '14' }),
    ).toMatchObject({
      maxReceiveCount: 5,
      memorySize: 512,
      tracing: true,
      logRetentionDays: 14,
    });
  });

  it('takes a custom domain with a certificate ARN, or a zone to validate one in, and nothing half given', () => {
    const arn = 'arn:aws:acm:eu-west-1:123456789012:certificate/0b1c2d3e-aaaa-bbbb-cccc-123456789012';
    expect(configWith({ domainName: 'api.example.com', certificateArn: arn })).toMatchObject({
      domainName: 'api.example.com',
      certificateArn: arn,
    });
    expect(
      configWith({ domainName: 'api.example.com', hostedZoneId: 'Z123', hostedZoneName: 'example.com' }),
    ).toMatchObject({ domainName: 'api.example.com', hostedZoneId: 'Z123', hostedZoneName: 'example.com' });
    expect(() => configWith({ domainName: 'api.example.com' })).toThrow(/domainName needs a certificate/);
    expect(() => configWith({ domainName: 'api.example.com', hostedZoneId: 'Z123' })).toThrow(/go together/);
    expect(() => configWith({ certificateArn: arn })).toThrow(/add -c domainName/);
    expect(() =>
      configWith({ domainName: 'api.example.org', hostedZoneId: 'Z123', hostedZoneName: 'example.com' }),
    ).toThrow(/not in the zone/);
  });

  it('keeps poll messages two hours, never less than the poll interval', () => {
    expect(configWith({ pollIntervalSeconds: '86400' }).pollMessageRetentionSeconds).toBe(86_400);
    expect(() => configWith({ pollMessageRetentionSeconds: '600' })).toThrow(/at least the poll interval, 900/);
  });

  it('caches the authorizer at most the hour API Gateway allows', () => {
    expect(configWith({ authorizerCacheSeconds: '0' }).authorizerCacheSeconds).toBe(0);
    expect(() => configWith({ authorizerCacheSeconds: '3601' })).toThrow(/authorizerCacheSeconds/);
  });

  it.each([
    ['maxReceiveCount', 'three'],
    ['maxReceiveCount', '0'],
    ['memorySize', 64],
    ['logRetentionDays', 31],
    ['tracing', 'yes'],
    ['stage', 'Prod!'],
    ['alarmEmail', 'not-an-address'],
    ['alarmTopicArn', 'arn:aws:sqs:eu-west-1:123456789012:x'],
    ['domainName', 'https://api.example.com'],
    ['jobRetentionDays', '0'],
    ['failedRecordsAlarmPercent', '101'],
  ])('refuses %s=%p', (key, value) => {
    expect(() => configWith({ [key]: value })).toThrow(ConfigError);
    expect(() => configWith({ [key]: value })).toThrow(key);
  });
});
