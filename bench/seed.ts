import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SyncJobStatus } from '../shared/domain/orders.js';
import type { AuditEntry } from '../shared/entities/audit-entry.js';
import type { FulfillmentEntry, SyncJob } from '../shared/order-flow/order-sync-job.js';
import { newSyncJob, type OrderGroup } from '../shared/order-flow/receiving.js';

/**
 * Items written straight to a local table, for `bench:lists` and the list tests: records built
 * here, turned into items by the record modules themselves (`syncJobItem`, `auditEntryItem`), so
 * a seeded item carries exactly the index attributes the service would have given it.
 */

/** The source store every seeded job goes to. */
const SEEDED_SOURCE: OrderGroup = { sourceStoreId: 'sst_seeded00000000000000000000', vendorTag: 'Seeded' };

/**
 * A job in `status`: the job the webhook would have created (`newSyncJob`), with the fields that
 * state implies set. It keeps no order and no vendor tag: the lists never read them, and a seeded
 * item stays as small as the list benchmarks assume.
 */
export const seededJob = (
  fields: Pick<SyncJob, 'id' | 'ownerId' | 'resellerStoreId' | 'createdAt'> & { status: SyncJobStatus },
): SyncJob => {
  const { id, status, createdAt } = fields;
  const order = { ...fields, resellerShopDomain: 'seeded.myshopify.com', externalOrderId: id.slice(3) };
  return {
    ...newSyncJob(order, SEEDED_SOURCE, 0, { body: new Uint8Array() }, createdAt),
    order: null,
    vendorTag: null,
    attempts: status === 'pending' ? 0 : 1,
    sourceOrderId: status === 'completed' ? `so-${id.slice(3)}` : null,
    errorMessage: status === 'failed' || status === 'dead' ? 'supplier answered 503' : null,
    completedAt: status === 'completed' ? createdAt : null,
    failedAt: status === 'failed' ? createdAt : null,
    deadAt: status === 'dead' ? createdAt : null,
    cancelledAt: status === 'cancelled' ? createdAt : null,
    ...fields,
  };
};

/** A `sync_job.dead` or `sync_job.retried` entry about `job`. */
export const seededAuditEntry = (
  job: Pick<SyncJob, 'id' | 'ownerId' | 'resellerStoreId'>,
  fields: Pick<AuditEntry, 'id' | 'action' | 'createdAt'>,
): AuditEntry => ({
  ownerId: job.ownerId,
  resellerStoreId: job.resellerStoreId,
  resourceType: 'sync_job',
  resourceId: job.id,
  actorId: 'system',
  actor: { type: 'system', id: 'system' },
  metadata: { previousStatus: fields.action === 'sync_job.dead' ? 'failed' : 'dead' },
  ...fields,
});

/** A parcel's entry on a job (`9001`): untracked, not tried yet, received and updated at `at`. */
export const seededEntry = (
  status: FulfillmentEntry['status'],
  at: string,
  fields: Partial<FulfillmentEntry> = {},
): FulfillmentEntry => ({
  sourceFulfillmentId: '9001',
  status,
  trackingCompany: null,
  trackingNumber: null,
  trackingNumbers: [],
  trackingUrl: null,
  resellerFulfillmentId: null,
  attempts: 0,
  errorMessage: null,
  receivedAt: at,
  updatedAt: at,
  deliveredAt: null,
  ...fields,
});

/** BatchWriteItem in chunks of 25, `parallel` at a time, until every item is in. */
export const writeItems = async (
  doc: DynamoDBDocumentClient,
  tableName: string,
  items: Record<string, unknown>[],
  parallel = 4,
) => {
  const chunks: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25));
  const writeChunk = async (chunk: Record<string, unknown>[]) => {
    let requests = chunk.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; requests.length; attempt++) {
      if (attempt) await new Promise((r) => setTimeout(r, Math.min(1000, 20 * 2 ** attempt)));
      const out = await doc.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
      requests = (out.UnprocessedItems?.[tableName] ?? []) as typeof requests;
    }
  };
  let next = 0;
  const worker = async () => {
    while (next < chunks.length) await writeChunk(chunks[next++]);
  };
  await Promise.all(Array.from({ length: parallel }, worker));
};
