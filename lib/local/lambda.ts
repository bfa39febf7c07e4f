import type { Context } from 'aws-lambda';

export type LambdaHandler = (event: any, context: Context) => Promise<any>;

/** The Lambda context of one invocation; its remaining time counts down to the runtime's deadline. */
export const lambdaContext = (options: {
  functionName: string;
  requestId: string;
  /** Epoch ms at which the runtime abandons the invocation. */
  deadline: number;
  memoryMb: number;
}): Context => ({
  callbackWaitsForEmptyEventLoop: false,
  functionName: options.functionName,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${options.functionName}`,
  memoryLimitInMB: String(options.memoryMb),
  awsRequestId: options.requestId,
  logGroupName: `/aws/lambda/${options.functionName}`,
  logStreamName: 'local',
  getRemainingTimeInMillis: () => Math.max(0, options.deadline - Date.now()),
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
});
