import { KMSClient } from '@aws-sdk/client-kms';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { addLogContext, lambdaHandler, logger, withLogContext } from '../../shared/core/telemetry.js';
import { processSyncMessage } from '../../shared/order-flow/placing-worker.js';
import { requiresOf } from '../command-meaning.js';
import { dynamo } from './aws-mocks.js';
import { fakeDeps } from './fake-deps.js';

/**
 * Correlated logs (issue 14): the Lambda context on every function's lines, the work context of
 * one queue record on every line logged while it is handled, and an unexpected worker error
 * logged with its job.
 */

mockClient(KMSClient);

/** The JSON lines the logger writes (stdout and stderr) while `run` runs. */
const linesOf = async (run: () => Promise<unknown>) => {
  const lines: Record<string, any>[] = [];
  const spies = [process.stdout, process.stderr].map((stream) =>
    jest.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      for (const line of String(chunk).split('\n')) if (line.startsWith('{')) lines.push(JSON.parse(line));
      return true;
    }),
  );
  logger.setLogLevel('INFO');
  try {
    await run().catch(() => undefined);
  } finally {
    logger.setLogLevel('SILENT');
    for (const spy of spies) spy.mockRestore();
  }
  return lines;
};

const context = (functionName: string) =>
  ({
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: `${functionName}-invocation`,
    getRemainingTimeInMillis: () => 5_000,
  }) as unknown as Context;

beforeEach(() => dynamo.reset());

describe('lambdaHandler', () => {
  it('puts the invocation’s Lambda context on every line, and nothing of the previous invocation', async () => {
    const handler = lambdaHandler(async (event: { say: string }) => {
      // The middleware puts the configured level (silent in unit tests) back after each invocation.
      logger.setLogLevel('INFO');
      logger.appendKeys({ said: event.say });
      logger.info('hello');
      return 'ok';
    });
    const lines = await linesOf(async () => {
      await handler({ say: 'first' }, context('SyncSweep'));
      await handler({ say: 'second' }, { ...context('SyncSweep'), awsRequestId: 'second-invocation' });
    });
    expect(lines.map((l) => [l.function_name, l.function_request_id, l.said])).toEqual([
      ['SyncSweep', 'SyncSweep-invocation', 'first'],
      ['SyncSweep', 'second-invocation', 'second'],
    ]);
  });
});

describe('withLogContext', () => {
  it('keeps the attributes of works running side by side apart', async () => {
    const work = (jobId: string, delayMs: number) =>
      withLogContext({ jobId }, async () => {
        await new Promise((r) => setTimeout(r, delayMs));
        addLogContext({ externalOrderId: `order-of-${jobId}` });
        await new Promise((r) => setTimeout(r, delayMs));
        logger.info('done');
      });
    const lines = await linesOf(() => Promise.all([work('sj_a', 20), work('sj_b', 5)]));
    expect(lines.map((l) => [l.jobId, l.externalOrderId]).sort()).toEqual([
      ['sj_a', 'order-of-sj_a'],
      ['sj_b', 'order-of-sj_b'],
    ]);
  });
});

describe('the sync worker', () => {
  it('logs an unexpected error with the job, its order and the request that sent it', async () => {
    dynamo.on(UpdateCommand).rejects(new Error('table unavailable'));
    const record = {
      messageId: 'm-1',
      body: JSON.stringify({
        jobId: 'sj_1',
        generation: 1,
        requestId: 'req_webhook',
        resellerStoreId: 'rst_1',
        externalOrderId: '5551234',
      }),
      attributes: { ApproximateReceiveCount: '1' },
    } as unknown as SQSRecord;
    const deps = fakeDeps();

    let thrown: unknown;
    const lines = await linesOf(() =>
      processSyncMessage(deps, record).catch((error) => {
        thrown = error;
      }),
    );

    expect((thrown as Error)?.message).toBe('table unavailable');
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        jobId: 'sj_1',
        request_id: 'req_webhook',
        resellerStoreId: 'rst_1',
        externalOrderId: '5551234',
        error: expect.objectContaining({ message: 'table unavailable' }),
      }),
    );
  });

  it('reads messages sent before they carried a request id', async () => {
    dynamo.on(UpdateCommand).rejects(new Error('table unavailable'));
    const record = {
      messageId: 'm-2',
      body: JSON.stringify({ jobId: 'sj_old', generation: 3 }),
      attributes: { ApproximateReceiveCount: '1' },
    } as unknown as SQSRecord;
    const deps = fakeDeps();
    const lines = await linesOf(() => processSyncMessage(deps, record));
    const error = lines.find((l) => l.level === 'ERROR');
    expect(error).toMatchObject({ jobId: 'sj_old' });
    expect(error).not.toHaveProperty('request_id');
    expect(requiresOf(dynamo.commandCalls(UpdateCommand)[0].args[0].input)).toMatchObject({ generation: 3 });
  });
});
