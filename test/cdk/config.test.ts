import { rmSync } from 'node:fs';
import { App, RemovalPolicy } from 'aws-cdk-lib';
import { loadConfig } from '../../lib/config.js';

const configWith = (context: Record<string, unknown>) => {
  const app = new App({ context });
  try {
    return loadConfig(app);
  } finally {
    rmSync(app.outdir, { recursive: true, force: true });
  }
};

describe('config', () => {
  it('defaults to a dev stage that is deleted with its stack', () => {
    expect(configWith({})).toEqual({
      stage: 'dev',
      isProd: false,
      removalPolicy: RemovalPolicy.DESTROY,
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
      tracing: false,
      deletionProtection: true,
    });
  });

  it('lets a dev stage turn deletion protection off', () => {
    expect(configWith({ deletionProtection: 'false' }).deletionProtection).toBe(false);
  });

  it('retains data and keeps logs 90 days in prod', () => {
    expect(configWith({ stage: 'prod' })).toMatchObject({
      stage: 'prod',
      isProd: true,
      removalPolicy: RemovalPolicy.RETAIN,
      logRetentionDays: 90,
    });
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
    expect(() => configWith({ [key]: value })).toThrow(key);
  });
});
