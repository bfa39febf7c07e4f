import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../dynamo/client.js';
import { config } from '../core/config.js';
import { sendFulfillmentMessage, type RecheckMessage } from './queue.js';
import { now } from '../core/ids.js';
import { logger } from '../core/logger.js';
import type { Tracking } from '../platforms/index.js';
import { restOrderId } from '../platforms/storeplatform-a.js';
import { orderGid } from '../platforms/storeplatform-b.js';
import { fulfillmentOrder, INDEX, keys, lookups } from '../dynamo/keys.js';
import { getItem, isConditionFailure, TABLE, type Item } from '../dynamo/table.js';
import type { SyncJob } from '../sync-jobs/sync-jobs.js';

/**
 * Reverse sync (SPEC 4.8, CONTRACT.md §5, docs/reverse-sync.md): a source store's
 * `fulfillments/create` carries its tracking to the reseller order of the sync job that placed
 * the source order. The state of each propagation lives on that job, in `fulfillments`, a map
 * keyed by the source fulfillment id, so every parcel of a split shipment keeps its own state.
 * A fulfillment whose job has not recorded `sourceOrderId` yet is kept (with a TTL) and released
 * when the job completes.
 */

// ---------- source order ids

/**
 * A GraphQL platform answers `orderCreate` with `gid://platform/Order/7002` (the job records
 * that), while its webhooks name the order `7002`. Kept items use the bare form; job lookups try
 * both, so either spelling finds the job.
 */
export const canonicalOrderId = (orderId: string) => restOrderId(orderId);
const orderIdForms = (orderId: string) => [
  ...new Set([orderId, canonicalOrderId(orderId), orderGid(canonicalOrderId(orderId))]),
];

/** The platform's idempotency key: one per source fulfillment, and source stores never share ids. */
export const fulfillmentIdempotencyKey = (sourceStoreId: string, sourceFulfillmentId: string) =>
  `ful:${sourceStoreId}:${sourceFulfillmentId}`;

/** How long a fulfillment waits for its job, and a completed job's release mark waits for late fulfillments. */
export const KEEP_SECONDS = 7 * 24 * 3600;
const expiresAt = () => Math.floor(Date.now() / 1000) + KEEP_SECONDS;

// ---------- the state on the job

export type FulfillmentStatus = 'pending' | 'delivered' | 'failed' | 'dead';

export interface FulfillmentState {
  sourceFulfillmentId: string;
  status: FulfillmentStatus;
  trackingCompany: string | null;
  trackingNumber: string | null;
  trackingNumbers: string[];
  trackingUrl: string | null;
  resellerFulfillmentId: string | null;
  attempts: number;
  errorMessage: string | null;
  receivedAt: string;
  updatedAt: string;
  deliveredAt: string | null;
}

export type JobWithFulfillments = SyncJob & { fulfillments?: Record<string, FulfillmentState> };

/** Every attribute name goes through a placeholder: `status`, `url` and friends are reserved words. */
const entryNames = (sourceFulfillmentId: string, fields: string[]) => ({
  '#fulfillments': 'fulfillments',
  '#fid': sourceFulfillmentId,
  ...Object.fromEntries(fields.map((field) => [`#${field}`, field])),
});
const ENTRY = '#fulfillments.#fid';

/** `<entry>.#status = :status, …` and the values `{':status': …}` for setting fields of one entry. */
const entryAssignments = (fields: Record<string, unknown>) => ({
  assignments: Object.keys(fields).map((field) => `${ENTRY}.#${field} = :${field}`),
  values: Object.fromEntries(Object.entries(fields).map(([field, value]) => [`:${field}`, value])),
});

const trackingFields = (tracking: Tracking) => ({
  trackingCompany: tracking.company,
  trackingNumber: tracking.number ?? tracking.numbers[0] ?? null,
  trackingNumbers: tracking.numbers.length ? tracking.numbers : tracking.number ? [tracking.number] : [],
  trackingUrl: tracking.url ?? tracking.urls[0] ?? null,
});

/**
 * Records that a source fulfillment is on its way to the reseller order: a new entry, or an
 * entry that is not delivered yet set back to `pending` (a redelivered webhook re-arms a dead
 * one). Answers false, and writes nothing, when that fulfillment was already delivered: a
 * redelivered webhook then has nothing left to do. The map is created by the first fulfillment
 * of the job; each write is conditional on what was read, and re-read when someone else wrote first.
 */
export const recordAccepted = async (
  jobId: string,
  sourceFulfillmentId: string,
  tracking: Tracking,
  receivedAt: string,
) => {
  for (let attempt = 0; attempt < 5; attempt++) {
    const job = await getItem<JobWithFulfillments>(keys.syncJob(jobId), true);
    if (!job) return false;
    const current = job.fulfillments?.[sourceFulfillmentId];
    if (current?.status === 'delivered') return false;
    const at = now();
    const entry: FulfillmentState = {
      sourceFulfillmentId,
      status: 'pending',
      ...trackingFields(tracking),
      resellerFulfillmentId: null,
      attempts: 0,
      errorMessage: null,
      receivedAt,
      updatedAt: at,
      deliveredAt: null,
    };
    const rearmed = { status: 'pending', errorMessage: null, updatedAt: at, ...trackingFields(tracking) };
    const update = !job.fulfillments
      ? {
          UpdateExpression: 'SET #fulfillments = :map',
          ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(#fulfillments)',
          ExpressionAttributeNames: { '#fulfillments': 'fulfillments' },
          ExpressionAttributeValues: { ':map': { [sourceFulfillmentId]: entry } },
        }
      : !current
        ? {
            UpdateExpression: `SET ${ENTRY} = :entry`,
            ConditionExpression: `attribute_exists(#fulfillments) AND attribute_not_exists(${ENTRY})`,
            ExpressionAttributeNames: entryNames(sourceFulfillmentId, []),
            ExpressionAttributeValues: { ':entry': entry },
          }
        : {
            // Attempts, receipt time and any reseller id stay: this is the same fulfillment again.
            UpdateExpression: `SET ${entryAssignments(rearmed).assignments.join(', ')}`,
            ConditionExpression: `${ENTRY}.#status <> :delivered`,
            ExpressionAttributeNames: entryNames(sourceFulfillmentId, Object.keys(rearmed)),
            ExpressionAttributeValues: { ...entryAssignments(rearmed).values, ':delivered': 'delivered' },
          };
    try {
      await dynamo.send(new UpdateCommand({ TableName: TABLE(), Key: keys.syncJob(jobId), ...update }));
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
  throw new Error(`fulfillment state of job ${jobId} kept changing under the writer`);
};

export type FulfillmentOutcome =
  | { status: 'delivered'; resellerFulfillmentId: string }
  | { status: 'failed'; errorMessage: string }
  | { status: 'dead'; errorMessage: string; attempted: boolean };

/**
 * The worker's (and the dead-letter handler's) move of one entry. Conditional on the entry
 * existing and not being delivered: `delivered` is final, so a late or duplicate message never
 * turns a delivered fulfillment back into a failure. Answers whether the entry moved.
 */
export const recordOutcome = async (jobId: string, sourceFulfillmentId: string, outcome: FulfillmentOutcome) => {
  const at = now();
  const sets: Record<string, unknown> = { status: outcome.status, updatedAt: at };
  if (outcome.status === 'delivered') {
    Object.assign(sets, { resellerFulfillmentId: outcome.resellerFulfillmentId, deliveredAt: at, errorMessage: null });
  } else {
    sets.errorMessage = outcome.errorMessage;
  }
  const counts = outcome.status !== 'dead' || outcome.attempted;
  const { assignments, values } = entryAssignments(sets);
  if (counts) assignments.push(`${ENTRY}.#attempts = ${ENTRY}.#attempts + :one`);
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: keys.syncJob(jobId),
        UpdateExpression: `SET ${assignments.join(', ')}`,
        ConditionExpression: `attribute_exists(${ENTRY}) AND ${ENTRY}.#status <> :delivered`,
        ExpressionAttributeNames: entryNames(sourceFulfillmentId, [
          ...Object.keys(sets),
          ...(counts ? ['attempts'] : []),
        ]),
        ExpressionAttributeValues: {
          ...values,
          ...(counts ? { ':one': 1 } : {}),
          // `:status` may already be 'delivered'; the condition needs the literal on its own.
          ':delivered': 'delivered',
        },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
};

// ---------- propagation

/**
 * The state first, then the message: a message always finds its entry, and a failed send fails
 * the webhook, which the platform redelivers.
 */
const propagate = async (jobId: string, sourceFulfillmentId: string, tracking: Tracking, receivedAt: string) => {
  if (!(await recordAccepted(jobId, sourceFulfillmentId, tracking, receivedAt))) {
    logger.info('fulfillment already delivered (or its job is gone); nothing to send', { jobId, sourceFulfillmentId });
    return;
  }
  await sendFulfillmentMessage({ jobId, sourceFulfillmentId, tracking });
};

/** Jobs of a source store that placed this source order (GSI2, written when the job completed), under either id spelling. */
const jobIdsBySourceOrder = async (sourceStoreId: string, sourceOrderId: string) => {
  const pages = await Promise.all(
    orderIdForms(sourceOrderId).map((form) =>
      dynamo.send(
        new QueryCommand({
          TableName: TABLE(),
          IndexName: INDEX.lookups,
          KeyConditionExpression: 'GSI2PK = :pk AND begins_with(GSI2SK, :job)',
          ExpressionAttributeValues: { ':pk': lookups.sourceOrder(sourceStoreId, form), ':job': 'SJ#' },
        }),
      ),
    ),
  );
  return [...new Set(pages.flatMap((page) => (page?.Items ?? []).map((item) => item.id as string)))];
};

/** The fulfillments kept for a source order, read consistently, unexpired. */
const keptFor = async (sourceStoreId: string, sourceOrderId: string) => {
  const items: Item[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: TABLE(),
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': fulfillmentOrder(sourceStoreId, sourceOrderId), ':prefix': 'KEPT#' },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page?.Items ?? []));
    startKey = page?.LastEvaluatedKey;
  } while (startKey);
  // TTL deletes lazily (up to days late), so an expired item is treated as gone.
  const nowSeconds = Math.floor(Date.now() / 1000);
  return items.filter((item) => typeof item.expiresAt !== 'number' || item.expiresAt > nowSeconds);
};

const deleteItem = (key: { PK: string; SK: string }) =>
  dynamo.send(new DeleteCommand({ TableName: TABLE(), Key: key }));

/**
 * Keeps a fulfillment that matches no job yet: the job's worker releases it when it records the
 * source order. One case is left: the job completed just before this was kept, while the lookup
 * index (GSI2) did not show it yet, and its worker read the kept fulfillments before this write.
 * A delayed recheck covers it: by then GSI2 shows any completion from before the keep. So the
 * cost of the race falls on kept fulfillments, not on every order.
 */
const keepFulfillment = async (
  sourceStoreId: string,
  sourceOrderId: string,
  sourceFulfillmentId: string,
  tracking: Tracking,
  receivedAt: string,
) => {
  const orderId = canonicalOrderId(sourceOrderId);
  const key = keys.keptFulfillment(sourceStoreId, orderId, sourceFulfillmentId);
  await dynamo.send(
    new PutCommand({
      TableName: TABLE(),
      Item: {
        ...key,
        sourceStoreId,
        sourceOrderId: orderId,
        sourceFulfillmentId,
        tracking,
        receivedAt,
        expiresAt: expiresAt(),
      },
    }),
  );
  await sendFulfillmentMessage(
    { recheck: { sourceStoreId, sourceOrderId: orderId, sourceFulfillmentId } },
    config.keptRecheckSeconds(),
  );
  logger.info('fulfillment kept until its job records the source order', {
    sourceStoreId,
    sourceOrderId,
    sourceFulfillmentId,
  });
};

/** The delayed second look at a kept fulfillment (see keepFulfillment). */
export const recheckKeptFulfillment = async ({ recheck }: RecheckMessage) => {
  const key = keys.keptFulfillment(recheck.sourceStoreId, recheck.sourceOrderId, recheck.sourceFulfillmentId);
  const kept = await getItem<Item>(key, true);
  if (!kept) return; // released meanwhile
  const jobIds = await jobIdsBySourceOrder(recheck.sourceStoreId, recheck.sourceOrderId);
  if (!jobIds.length) return; // still no job: its worker will release it
  for (const jobId of jobIds)
    await propagate(jobId, recheck.sourceFulfillmentId, kept.tracking as Tracking, kept.receivedAt as string);
  await deleteItem(key);
};

/** A shipped source fulfillment, as the webhook carried it. */
export interface IncomingFulfillment {
  sourceFulfillmentId: string;
  sourceOrderId: string;
  tracking: Tracking;
}

/**
 * `fulfillments/create` from verified source stores (every store under the shop domain whose
 * secret verified: resellers may share a supplier). Each store whose job placed that order gets
 * its own propagation; if none has one yet, the fulfillment is kept for each of them.
 */
export const routeFulfillment = async (
  sources: Item[],
  { sourceFulfillmentId, sourceOrderId, tracking }: IncomingFulfillment,
) => {
  const receivedAt = now();
  const matches = await Promise.all(
    sources.map(async (store) => ({ store, jobIds: await jobIdsBySourceOrder(store.id as string, sourceOrderId) })),
  );

  if (matches.some((match) => match.jobIds.length)) {
    for (const { jobIds } of matches) {
      for (const jobId of jobIds) await propagate(jobId, sourceFulfillmentId, tracking, receivedAt);
    }
    return;
  }
  for (const { store } of matches)
    await keepFulfillment(store.id as string, sourceOrderId, sourceFulfillmentId, tracking, receivedAt);
};

/**
 * Called by the sync worker right after a job records its `sourceOrderId`: sends the fulfillments
 * kept for that source order to the job's reseller order and deletes them. Never throws: the order
 * is placed and the job completed whatever happens here; a kept fulfillment that could not be
 * released stays kept, its recheck or a redelivery of its webhook finds the job through GSI2
 * (docs/reverse-sync.md).
 */
export const releaseKeptFulfillments = async (job: Pick<SyncJob, 'id' | 'sourceStoreId' | 'sourceOrderId'>) => {
  if (!job.sourceOrderId) return;
  try {
    const kept = await keptFor(job.sourceStoreId, canonicalOrderId(job.sourceOrderId));
    for (const item of kept) {
      await propagate(job.id, item.sourceFulfillmentId as string, item.tracking as Tracking, item.receivedAt as string);
      await deleteItem({ PK: item.PK as string, SK: item.SK as string });
    }
    if (kept.length) logger.info('kept fulfillments released', { jobId: job.id, count: kept.length });
  } catch (error) {
    logger.error('releasing kept fulfillments failed; they stay kept', { jobId: job.id, error: (error as Error).name });
  }
};
