import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from 'aws-lambda';

export type LambdaHandler = (event: any, context: Context) => Promise<any>;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Loads a handler module the way Lambda would: once per "container", after the environment is set. */
export const loadHandler = async (entry: string): Promise<LambdaHandler> => {
  const mod = await import(resolve(ROOT, entry));
  if (typeof mod.handler !== 'function') throw new Error(`${entry} does not export a handler`);
  return mod.handler;
};

/** A Lambda context for one invocation. */
export const lambdaContext = (functionName: string, timeoutSeconds: number): Context => {
  const deadline = Date.now() + timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
};
