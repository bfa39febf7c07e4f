import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { seededJob } from '../../bench/seed.js';
import { logger } from '../../shared/core/telemetry.js';
import { emptyAfterSale, type JobReturn } from '../../shared/order-flow/order-after-sale.js';
import { type SyncJob, syncJobItem } from '../../shared/order-flow/order-sync-job.js';
import { processDeadSyncMessage } from '../../shared/order-flow/placing-dead-letter.js';
import { dynamo, sqs } from './aws-mocks.js';
import { fakeDeps } from './fake-deps.js';

/**
 * The sync DLQ's door (shared/order-flow/placing-dead-letter.ts): each kind of the sync queue's one
 * message type, read from its `purpose`, goes to its own end. A change of a placed order that kept
 * failing leaves its job to a person only while the job still waits for that change.
 */

const AT = '2026-11-29T10:00:00.000Z';
const deps = fakeDeps({});
const completed = (fields: Partial<SyncJob>): SyncJob => ({
  ...seededJob({ id: 'sj_1', ownerId: 'owner_a', resellerStoreId: 'rst_1', createdAt: AT, status: 'completed' }),
  sourceOrderId: '9001',
  ...fields,
});
const aReturn = (status: JobReturn['status']): JobReturn => ({
  id: 'ret_1',
  resellerReturnId: '555',
  sourceReturnId: null,
  status,
  lines: [{ resellerLineItemId: '1', sourceLineItemId: '9', quantity: 1, reason: 'unwanted' }],
  error: null,
  sentAt: null,
  openedAt: null,
  closedAt: null,
});
const received = (job: SyncJob, purpose?: string): SQSRecord =>
  ({
    messageId: 'm-1',
    receiptHandle: 'rh-1',
    body: JSON.stringify({ jobId: job.id, generation: job.generation, trigger: 'webhook', purpose }),
    attributes: { ApproximateReceiveCount: '3' },
  }) as unknown as SQSRecord;

/** The attention reasons the dead message wrote on the job (one TransactWriteItems each). */
const attentionReasons = () =>
  dynamo.commandCalls(TransactWriteCommand).map((call) => {
    const update = call.args[0].input.TransactItems?.[0]?.Update;
    return Object.values(update?.ExpressionAttributeValues ?? {}).find(
      (value): value is { reason: string } => typeof value === 'object' && value !== null && 'reason' in value,
    )?.reason;
  });

describe("the sync DLQ: each message to its kind's end", () => {
  beforeEach(() => {
    dynamo.reset();
    sqs.reset();
    dynamo.on(TransactWriteCommand).resolves({});
  });
  afterEach(() => jest.restoreAllMocks());
  const stored = (job: SyncJob) => dynamo.on(GetCommand).resolves({ Item: syncJobItem(job) });

  it('leaves a job to a person when its removal of refunded units used up its receives', async () => {
    const job = completed({
      afterSale: { ...emptyAfterSale(), removal: { status: 'requested', at: 1, requestedAt: AT, endedAt: null } },
    });
    stored(job);
    await processDeadSyncMessage(deps, received(job, 'remove'));
    expect(attentionReasons()).toEqual([expect.stringContaining('could not be edited')]);
  });

  it('leaves a job to a person when its return used up its receives', async () => {
    const job = completed({ afterSale: { ...emptyAfterSale(), returns: [aReturn('pending')] } });
    stored(job);
    await processDeadSyncMessage(deps, received(job, 'return'));
    expect(attentionReasons()).toEqual([expect.stringContaining('a return could not be opened')]);
  });

  it('changes nothing for a removal, a return or an update the job no longer waits for', async () => {
    const job = completed({
      afterSale: {
        ...emptyAfterSale(),
        removal: { status: 'done', at: 1, requestedAt: AT, endedAt: AT },
        returns: [aReturn('open')],
      },
    });
    stored(job);
    for (const purpose of ['remove', 'return', 'update', 'cancel'])
      await processDeadSyncMessage(deps, received(job, purpose));
    expect(dynamo.commandCalls(TransactWriteCommand)).toEqual([]);
  });

  it('leaves a release to the reconciler and never ends a held job as a placement would', async () => {
    const warn = jest.spyOn(logger, 'warn');
    const job = completed({ status: 'pending' });
    stored(job);
    await processDeadSyncMessage(deps, received(job, 'release'));
    expect(dynamo.calls()).toEqual([]);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('the reconciler'));
  });

  it('drops a malformed body with one error line, and reads nothing', async () => {
    const error = jest.spyOn(logger, 'error');
    await processDeadSyncMessage(deps, { messageId: 'm-2', body: 'not a job message' } as SQSRecord);
    expect(error).toHaveBeenCalledWith('dropping a malformed sync DLQ message', { messageId: 'm-2' });
    expect(dynamo.calls()).toEqual([]);
  });
});
