import { KMSClient } from '@aws-sdk/client-kms';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { BatchGetCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { syncJobId } from '../../shared/core/ids.js';
import { processSyncMessage } from '../../shared/order-flow/placing-worker.js';
import { dynamo, sqs } from './aws-mocks.js';
import { fakeDeps } from './fake-deps.js';
import { jobFields } from './job-fixtures.js';

/**
 * The release message of a held order (shared/order-flow/holding.ts), with mocked AWS clients: a delay
 * longer than SQS's 15 minutes is served in hops, each arrival before its time sent on without a read
 * of the order; a message for an order no longer held does nothing.
 */

mockClient(KMSClient);
const readOrder = jest.fn();
const deps = fakeDeps({ readOrder });

const jobId = syncJobId('rst_1', '5551234', 0);
const record = (body: unknown): SQSRecord =>
  ({
    messageId: 'm-1',
    receiptHandle: 'rh-1',
    body: JSON.stringify(body),
    attributes: { ApproximateReceiveCount: '1' },
  }) as unknown as SQSRecord;

const heldItem = (until: string | null) => ({
  PK: `SJ#${jobId}`,
  SK: 'SJ',
  e: 'J',
  ...jobFields(),
  resellerShopDomain: 'reseller.myshopify.com',
  GSI7PK: 'RST#rst_1#ORD',
  createdAt: '2026-11-27T12:00:00.000Z',
  updatedAt: '2026-11-27T12:00:00.000Z',
  hold: { reasons: until ? ['delay'] : ['payment'], since: '2026-11-27T12:00:00.000Z', until },
});

const release = (extra: Record<string, unknown> = {}) =>
  processSyncMessage(deps, record({ jobId, generation: 1, purpose: 'release', ...extra }));

describe('the release message of a held order', () => {
  beforeEach(() => {
    dynamo.reset();
    sqs.reset();
    readOrder.mockReset();
    sqs.on(SendMessageCommand).resolves({});
    dynamo.on(BatchGetCommand).resolves({ Responses: {} });
  });

  it('is sent on, at most 15 minutes at a time, while its delay has more than that to run', async () => {
    const until = Date.now() + 2 * 3600 * 1000;
    dynamo.on(GetCommand).resolves({ Item: heldItem(new Date(until).toISOString()) });
    expect(await release({ notBefore: until })).toBe('done');
    const sent = sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
    expect(sent).toHaveLength(1);
    expect(sent[0].DelaySeconds).toBe(900);
    expect(JSON.parse(sent[0].MessageBody!)).toMatchObject({ jobId, purpose: 'release', notBefore: until });
    expect(readOrder).not.toHaveBeenCalled();
    expect(dynamo.commandCalls(UpdateCommand)).toEqual([]);
  });

  it('is sent again for the rest of the delay when it arrives early without `notBefore`', async () => {
    const until = Date.now() + 60_000;
    dynamo.on(GetCommand).resolves({ Item: heldItem(new Date(until).toISOString()) });
    expect(await release()).toBe('done');
    const [sent] = sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
    expect(sent.DelaySeconds).toBeGreaterThanOrEqual(59);
    expect(sent.DelaySeconds).toBeLessThanOrEqual(60);
    expect(readOrder).not.toHaveBeenCalled();
  });

  it('does nothing for an order with no delay left (released, cancelled, or held for payment alone)', async () => {
    dynamo.on(GetCommand).resolves({ Item: heldItem(null) });
    expect(await release()).toBe('done');
    expect(sqs.commandCalls(SendMessageCommand)).toEqual([]);
    expect(readOrder).not.toHaveBeenCalled();
    expect(dynamo.commandCalls(UpdateCommand)).toEqual([]);
  });
});
