import { rmSync } from 'node:fs';
import { App, RemovalPolicy } from 'aws-cdk-lib';
import { ConfigError, loadConfig } from '../../lib/config.js';

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
      dataRemovalPolicy: RemovalPolicy.RETAIN,
      maxReceiveCount: 3,
      memorySize: 256,
      throttleRate: 50,
      throttleBurst: 100,
      logRetentionDays: 30,
      alarmEmail: undefined,
      alarmTopicArn: undefined,
      shopDomainSuffix: 'myshopify.com',
      api5xxThreshold: 5,
      queueAgeAlarmSeconds: 900,
      deadJobsPerHour: 1,
      tracing: false,
      deletionProtection: true,
      throttleBudgetSeconds: 86_400,
      syncBackoffSeconds: [60, 300, 1800],
    });
  });

  it('reads the sync backoff steps and refuses a step SQS cannot wait', () => {
    expect(configWith({ syncBackoffSeconds: '30,600' }).syncBackoffSeconds).toEqual([30, 600]);
    expect(() => configWith({ syncBackoffSeconds: '60,50000' })).toThrow(/syncBackoffSeconds/);
    expect(() => configWith({ syncBackoffSeconds: '1m' })).toThrow(/syncBackoffSeconds/);
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
      removalPolicy: RemovalPolicy.RETAIN,
      dataRemovalPolicy: RemovalPolicy.RETAIN,
      logRetentionDays: 90,
    });
  });

  it('retains table and key in prod even without deletion protection', () => {
    const config = configWith({ stage: 'prod', alarmEmail: 'ops@example.com', deletionProtection: 'false' });
    expect(config.dataRemovalPolicy).toBe(RemovalPolicy.RETAIN);
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

  it.each([
    ['maxReceiveCount', 'three'],
    ['maxReceiveCount', '0'],
    ['memorySize', 64],
    ['logRetentionDays', 31],
    ['tracing', 'yes'],
    ['stage', 'Prod!'],
    ['alarmEmail', 'not-an-address'],
    ['alarmTopicArn', 'arn:aws:sqs:eu-west-1:123456789012:x'],
  ])('refuses %s=%p', (key, value) => {
    expect(() => configWith({ [key]: value })).toThrow(ConfigError);
    expect(() => configWith({ [key]: value })).toThrow(key);
  });
});
