import { randomBytes } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { syncJobId } from '../../shared/core/ids.js';
import { keys } from '../../shared/dynamo/keys.js';
import { compressBody, jobOrderReading, splitParts } from '../../shared/order-flow/order-repository.js';
import type { SyncJob } from '../../shared/order-flow/order-sync-job.js';
import { dynamo as ddb } from './aws-mocks.js';

/**
 * Issue 40, item 9: a reading of a stored order is kept per execution environment. A redaction that
 * rewrites a large body's parts in place keeps their number; a warm environment must not answer the
 * unredacted reading once the job says it was redacted.
 */

const job = {
  id: 'sj_1',
  resellerStoreId: 'rst_cache',
  externalOrderId: '4242',
} as const;

// Random text does not compress: the body needs more than one part, redacted or not.
const filler = randomBytes(600_000).toString('base64');
const orderText = (email: string) =>
  JSON.stringify({ id: 4242, currency: 'USD', email, line_items: [], note_attributes: [{ name: 'x', value: filler }] });

/** The query of the order's parts answers `text`'s parts, as the table holds them. */
const storeParts = (firstJobId: string, text: string) => {
  const parts = splitParts(compressBody(Buffer.from(text, 'utf8')));
  ddb.on(QueryCommand).resolves({
    Items: parts.map((body, n) => ({ ...keys.orderBodyPart(firstJobId, n), body })),
  });
  return parts.length;
};

describe('a kept reading of a stored order, after a redaction', () => {
  beforeEach(() => ddb.reset());

  it('reads the order again once the job says it was redacted, though its parts kept their number', async () => {
    const firstJobId = syncJobId(job.resellerStoreId, job.externalOrderId, 0);
    const before = storeParts(firstJobId, orderText('shopper@example.com'));
    expect(before).toBeGreaterThan(1);
    const unredacted = await jobOrderReading({ ...job, order: { parts: before } } as unknown as SyncJob);
    expect(unredacted?.ok && unredacted.order.email?.text).toBe('"shopper@example.com"');

    // The redaction wrote the redacted body over the same number of parts, and marked the job.
    const after = storeParts(firstJobId, orderText('redacted@example.invalid'));
    expect(after).toBe(before);
    const redactedJob = { ...job, order: { parts: after }, redactedAt: '2026-11-29T00:00:00.000Z' };
    const reading = await jobOrderReading(redactedJob as unknown as SyncJob);
    expect(reading?.ok && reading.order.email?.text).toBe('"redacted@example.invalid"');
  });
});
