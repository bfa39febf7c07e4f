import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';

/**
 * The queue consumers' batches (shared/aws/batch.ts): a failed record is reported back for SQS to
 * deliver again and counted, and a batch whose every record failed is no Lambda error (issue: the
 * errors alarm paged for a supplier's 503 on a batch of one).
 */
process.env.POWERTOOLS_METRICS_DISABLED = 'false';

const record = (id: string): SQSRecord => ({ messageId: id, body: id }) as unknown as SQSRecord;
const event = (...ids: string[]): SQSEvent => ({ Records: ids.map(record) });
const context = { functionName: 'SyncWorker', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

/** The EMF lines the invocation wrote, once its metrics are published. */
const published = async (run: () => Promise<unknown>) => {
  const { metricsMiddleware } = await import('../../shared/core/metrics.js');
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    const result = await run();
    await metricsMiddleware().after!({} as never);
    return { result, emf: lines.flatMap((line) => line.split('\n')).filter((l) => l.includes('"_aws"')) };
  } finally {
    spy.mockRestore();
  }
};

describe('sqsBatchHandler', () => {
  const failing = new Set(['bad-1', 'bad-2']);
  const handle = async (r: SQSRecord) => {
    if (failing.has(r.messageId)) throw new Error('supplier answered 503');
  };

  it('answers a batch of one failed record with its failure, without throwing (no Lambda error)', async () => {
    const { sqsBatchHandler } = await import('../../shared/aws/batch.js');

    const { result, emf } = await published(() => sqsBatchHandler(handle)(event('bad-1'), context));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'bad-1' }] });
    expect(emf.map((line) => JSON.parse(line).QueueRecordsFailed)).toEqual([1]);
  });

  it('reports and counts only the failed records of a mixed batch', async () => {
    const { sqsBatchHandler } = await import('../../shared/aws/batch.js');

    const { result, emf } = await published(() => sqsBatchHandler(handle)(event('ok-1', 'bad-2', 'ok-2'), context));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'bad-2' }] });
    expect(JSON.parse(emf[0]).QueueRecordsFailed).toBe(1);
  });

  it('counts nothing for a batch that succeeded', async () => {
    const { sqsBatchHandler } = await import('../../shared/aws/batch.js');

    const { result, emf } = await published(() => sqsBatchHandler(handle)(event('ok-1'), context));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(emf).toEqual([]);
  });
});
