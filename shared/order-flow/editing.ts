import * as v from 'valibot';
import type { Deps } from '../aws/deps.js';
import { withRereads } from '../core/concurrency.js';
import { MAX_RESENDS } from '../core/config.js';
import { parseInput } from '../core/errors.js';
import { now, syncJobId } from '../core/ids.js';
import { logger } from '../core/telemetry.js';
import {
  type JsonText,
  type ResellerOrder,
  readResellerOrder,
  resellerOrderName,
  withResellerOrder,
} from '../domain/orders.js';
import type { OrderFacts } from '../domain/routing.js';
import type { StoreOnShop } from '../entities/store.js';
import { classify, type OrderChanges } from '../platforms/port.js';
import { shopConnection } from '../stores/connection.js';
import { loadSourceStore } from '../stores/stores.js';
import { judgeHeldAgain } from './holding.js';
import { jobOrderReading, keepEdits, loadJob, loadOrderPartition, storedOrderReading } from './order-repository.js';
import { type OrderEdits, type SyncJob, updatePending } from './order-sync-job.js';
import { jobMessage } from './placing-message.js';
import { needsAttention } from './placing-moves.js';
import { enqueueJobs } from './placing-queue.js';
import { withEdits } from './placing-supplier-order.js';

/** The part of `orders/updated` read besides the order itself (CONTRACT.md §10.6). */
export const OrderUpdatedPayload = v.looseObject({
  id: v.union([v.pipe(v.number(), v.integer(), v.minValue(0)), v.pipe(v.string(), v.minLength(1), v.maxLength(100))]),
  updated_at: v.optional(v.nullable(v.pipe(v.string(), v.isoTimestamp('must be an ISO 8601 time')))),
});

/**
 * A verified `orders/updated` (CONTRACT.md §10.6): the order as it is now, from a reseller's shop.
 * Its versions apply in the order of `updated_at` (compared as instants; one without is the
 * latest). A supplier's own edits of its orders are not the service's to apply: nothing is done.
 */
export const acceptEdit = async (
  resellerStores: StoreOnShop[],
  payload: unknown,
  rawBody: Buffer,
  requestId?: string,
): Promise<string[]> => {
  const { updated_at } = parseInput(OrderUpdatedPayload, payload);
  const updatedAt = new Date(updated_at ?? Date.now()).toISOString();
  for (const reseller of resellerStores) {
    const ids = await editResellerOrder(reseller, rawBody, updatedAt, requestId);
    if (!ids.length) continue;
    // Its held jobs judged again on the order as it is now (CONTRACT.md §11): paid, they go on.
    const reading = readResellerOrder(rawBody.toString('utf8'));
    if (reading.ok) await judgeHeldAgain(reseller.id, reading.order.externalOrderId, factsOf(reading.order, payload));
    return ids;
  }
  return [];
};

/** What an update says of the order's payment, risk (a REST poll's `risk_recommendation`) and test. */
const factsOf = (order: ResellerOrder, payload: unknown): OrderFacts => {
  const risk = (payload as { risk_recommendation?: unknown } | null)?.risk_recommendation;
  return {
    financialStatus: order.financialStatus,
    riskRecommendation: typeof risk === 'string' ? risk.toLowerCase() : null,
    test: order.test,
  };
};

/**
 * Edits by the reseller (CONTRACT.md §10.6): `orders/updated`. A changed shipping address, email,
 * note or note attributes is kept on each job of the order (`orderEdits`, laid over the stored
 * order, which stays as it was signed): a job not placed yet places the latest; a placed supplier
 * order is updated through its platform by the sync worker (`purpose: 'update'`), unless something
 * of it has shipped, which the job then says (`attention`). Changed line items are never applied
 * to a supplier on their own: every job of the order gets `attention`, audited. An update older
 * (by `updated_at`) than the last applied changes nothing.
 */

const FIELDS = ['email', 'shippingAddress', 'note', 'noteAttributes'] as const;
type EditedField = (typeof FIELDS)[number];

const textOf = (value: JsonText | null) => (value === null ? 'null' : value.text);

/** The line items as an edit compares them: which item, how many, from whom. */
const linesOf = (order: ResellerOrder) =>
  JSON.stringify(order.lineItems.map((line) => [line.id, line.quantity, line.vendor, line.giftCard]));

/** Whether anything of the job's supplier order has shipped (a parcel on its way or delivered). */
const hasShipped = (job: SyncJob) => Object.values(job.fulfillments).some((entry) => entry.status !== 'ignored');

/**
 * A verified `orders/updated` of a reseller store. Answers the ids of the order's jobs; none when
 * the order never reached the service (the update then waits for no one: its create carries the
 * order as it is then).
 */
export const editResellerOrder = async (
  reseller: { id: string },
  rawBody: Buffer,
  updatedAt: string,
  requestId?: string,
): Promise<string[]> => {
  const reading = readResellerOrder(rawBody.toString('utf8'));
  if (!reading.ok) return [];
  const latest = reading.order;
  // The order's record and its body's parts, in one Query of its partition.
  const firstJobId = syncJobId(reseller.id, latest.externalOrderId, 0);
  const partition = await loadOrderPartition(firstJobId);
  const first = partition.record?.kind === 'job' ? partition.record.job : undefined;
  if (!first) return [];
  const stored = await storedOrderReading(
    first.order,
    firstJobId,
    first.externalOrderId,
    partition.parts,
    first.redactedAt,
  );
  if (!stored?.ok) return [];
  const ids = first.orderJobIds ?? [first.id];
  const linesChanged = linesOf(stored.order) !== linesOf(latest);
  for (const id of ids) {
    // Read again after each lost race (core/concurrency.ts); the first job was just read, consistently.
    await withRereads(
      () => loadJob(id, true),
      async (job) =>
        !job || (await editJob(job, stored.order, latest, updatedAt, linesChanged, requestId)) ? undefined : 'again',
      `job ${id}, while it was being edited,`,
      id === first.id ? first : undefined,
    );
  }
  return ids;
};

/** One job's part of an edit; false when the job moved meanwhile (the caller reads it again). */
const editJob = async (
  job: SyncJob,
  stored: ResellerOrder,
  latest: ResellerOrder,
  updatedAt: string,
  linesChanged: boolean,
  requestId?: string,
): Promise<boolean> => {
  if (job.orderEdits && updatedAt <= job.orderEdits.updatedAt) return true; // older, or the same again
  if (job.status === 'cancelled' || job.status === 'dead') return true;
  if (linesChanged && !job.attention) {
    if (!(await needsAttention(job, "the order's line items changed: apply them on the supplier by hand")))
      return false;
  }
  const current = withEdits(stored, job.orderEdits);
  const changed = FIELDS.filter((field) => textOf(current[field]) !== textOf(latest[field]));
  const edits: OrderEdits = { ...(job.orderEdits ?? {}), updatedAt };
  for (const field of changed) edits[field] = textOf(latest[field]);
  if (!changed.length && !job.orderEdits) return true;
  // Placed and nothing shipped: the supplier order is sent the edits, watched until they are through.
  const sends = changed.length > 0 && job.status === 'completed' && !hasShipped(job);
  if (sends) Object.assign(edits, { keptAt: now(), resends: 0 });
  if (!(await keepEdits(job, edits, sends))) return false;
  if (!changed.length || job.status !== 'completed') return true; // not placed yet: it places the latest
  if (!sends) {
    await needsAttention(job, `the order was edited (${changed.join(', ')}) after its supplier shipped: not applied`);
    return true;
  }
  await enqueueJobs([jobMessage(job, 'webhook', requestId, 'update')]);
  return true;
};

/**
 * The reconciler's part: a placed job whose update message was lost (its edits not through past the
 * lease from when it was sent) is sent a fresh one; after MAX_RESENDS, the job needs a person.
 * Answers whether it acted.
 */
export const resendUpdate = async (job: SyncJob) => {
  const edits = job.orderEdits;
  if (!edits || !updatePending(job)) return false;
  if ((edits.resends ?? 0) >= MAX_RESENDS) {
    await updateGaveUp(job);
    return true;
  }
  if (!(await keepEdits(job, { ...edits, keptAt: now(), resends: (edits.resends ?? 0) + 1 }))) return false;
  await enqueueJobs([jobMessage(job, 'reconciler', undefined, 'update')]);
  logger.warn('stalled update of the supplier order sent a new message', { resends: (edits.resends ?? 0) + 1 });
  return true;
};

const parsed = (text: string | undefined) => (text === undefined ? undefined : JSON.parse(text));

/**
 * The platform's changes of an edit: the fields it changed, as values. Edited note attributes keep
 * `reseller_order` (`orderName`: CONTRACT.md §12.5), which the create set, at their end.
 */
const changesOf = (edits: OrderEdits, orderName: string): OrderChanges => {
  const changes: OrderChanges = {};
  const fields: Record<EditedField, (value: unknown) => void> = {
    email: (v) => typeof v === 'string' && Object.assign(changes, { email: v }),
    shippingAddress: (v) => v && typeof v === 'object' && Object.assign(changes, { shippingAddress: v }),
    note: (v) => (typeof v === 'string' || v === null) && Object.assign(changes, { note: v }),
    noteAttributes: (v) =>
      Array.isArray(v) && Object.assign(changes, { noteAttributes: parsed(withResellerOrder(v, orderName).text) }),
  };
  for (const field of FIELDS) if (edits[field] !== undefined) fields[field](parsed(edits[field]));
  return changes;
};

/**
 * A `purpose: 'update'` message: the placed supplier order gets the job's latest edits through its
 * platform, with a key per version. Refused (it has shipped or is cancelled, 422): the job says so
 * (`attention`). 429 and transient failures: `retry`.
 */
export const updateSupplierOrder = async (deps: Deps, job: SyncJob): Promise<'done' | 'retry'> => {
  const edits = job.orderEdits;
  if (job.status !== 'completed' || !edits || edits.sentAt === edits.updatedAt || !job.sourceOrderId) return 'done';
  const sourceStore = await loadSourceStore(job.sourceStoreId);
  if (!sourceStore) return 'done';
  const shop = await shopConnection(deps, sourceStore);
  const reading = edits.noteAttributes === undefined ? undefined : await jobOrderReading(job);
  const orderName = reading?.ok ? resellerOrderName(reading.order) : job.externalOrderId;
  try {
    await deps
      .platforms(shop.platform)
      .updateOrder(shop, job.sourceOrderId, changesOf(edits, orderName), `update:${job.id}:${edits.updatedAt}`);
  } catch (error) {
    const failure = classify(error, 'internal error while updating the order');
    if (failure.kind !== 'permanent') return 'retry';
    await needsAttention(job, `the supplier order could not be updated: ${failure.reason}`);
    return 'done';
  }
  await keepEdits(job, { ...edits, sentAt: edits.updatedAt });
  logger.info('supplier order updated with the reseller’s edits');
  return 'done';
};

/** An update message that used up its receives: never silent, the job says so (`attention`). */
export const updateGaveUp = (job: SyncJob) =>
  needsAttention(job, 'the supplier order could not be updated with the reseller’s edits: every attempt failed');
