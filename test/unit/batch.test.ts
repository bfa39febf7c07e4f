import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { published } from './emf.js';

/**
 * The queue consumers' batches (shared/aws/batch.ts): a failed record is reported back for SQS to
 * deliver again and counted, and a batch whose every record failed is no Lambda error (issue: the
 * errors alarm paged for a supplier's 503 on a batch of one).
 */
process.env.POWERTOOLS_METRICS_DISABLED = 'false';

const record = (id: string): SQSRecord => ({ messageId: id, body: id }) as unknown as SQSRecord;
const event = (...ids: string[]): SQSEvent => ({ Records: ids.map(record) });
const context = { functionName: 'SyncWorker', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

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

describe('systemic errors inside a batch (issue 32)', () => {
  const named = (name: string, message: string) => Object.assign(new Error(message), { name });
  const errors: Record<string, Error> = {
    denied: named('AccessDeniedException', 'not authorized to perform kms:Decrypt'),
    bug: new TypeError("Cannot read properties of undefined (reading 'id')"),
    noTable: named('ResourceNotFoundException', 'Requested resource not found'),
    supplier: new Error('supplier answered 503'),
    throttled: named('ProvisionedThroughputExceededException', 'rate exceeded'),
  };
  const handle = async (r: SQSRecord) => {
    const error = errors[r.messageId.split('-')[0]];
    if (error) throw error;
  };

  it('counts a record failed on access denied, a missing table or a bug as SystemicErrors', async () => {
    const { sqsBatchHandler } = await import('../../shared/aws/batch.js');

    const { result, emf } = await published(() =>
      sqsBatchHandler(handle)(event('denied-1', 'bug-1', 'noTable-1', 'ok-1'), context),
    );

    expect(result).toEqual({
      batchItemFailures: [{ itemIdentifier: 'denied-1' }, { itemIdentifier: 'bug-1' }, { itemIdentifier: 'noTable-1' }],
    });
    // EMF keeps a metric counted several times in one invocation as a list of its values.
    const total = (name: string) =>
      emf.flatMap((line) => [JSON.parse(line)[name] ?? []].flat() as number[]).reduce((sum, n) => sum + n, 0);
    expect(total('SystemicErrors')).toBe(3);
    expect(total('QueueRecordsFailed')).toBe(3);
  });

  it('counts no SystemicErrors for a failure a retry may mend (a supplier’s 503, a throttled table)', async () => {
    const { sqsBatchHandler } = await import('../../shared/aws/batch.js');

    const { result, emf } = await published(() => sqsBatchHandler(handle)(event('supplier-1', 'throttled-1'), context));

    expect((result as { batchItemFailures: unknown[] }).batchItemFailures).toHaveLength(2);
    expect(emf.some((line) => 'SystemicErrors' in JSON.parse(line))).toBe(false);
  });
});
