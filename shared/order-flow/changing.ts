import * as v from 'valibot';
import type { Deps } from '../aws/deps.js';
import { withRereads } from '../core/concurrency.js';
import { config, MAX_RESENDS } from '../core/config.js';
import { parseInput } from '../core/errors.js';
import { derivedId, now, syncJobId } from '../core/ids.js';
import { BUSINESS_METRICS, countMetric, logger } from '../core/telemetry.js';
import {
  type JsonText,
  type ResellerOrder,
  readResellerOrder,
  resellerOrderName,
  withResellerOrder,
} from '../domain/orders.js';
import type { OrderFacts } from '../domain/routing.js';
import { recordAuditEntry, SYSTEM } from '../entities/audit-entry.js';
import type { StoreOnShop } from '../entities/store.js';
import { classify, type OrderChanges } from '../platforms/port.js';
import { shopConnection } from '../stores/connection.js';
import { loadSourceStore } from '../stores/stores.js';
import { judgeHeldAgain } from './holding.js';
import { countLateCancellation, countSourceCancellation } from './order-entries.js';
import { cancellationRequest } from './order-job-moves.js';
import {
  cancelUnroutedOrder,
  claimCancelCall,
  isLost,
  jobLines,
  jobOrderReading,
  keepEdits,
  keepOrderCancellation,
  type Lost,
  loadJob,
  loadJobs,
  loadOrderPartition,
  loadRecord,
  type MoveName,
  moveJob,
  storedOrderReading,
} from './order-repository.js';
import { type Cancellation, type OrderEdits, type SyncJob, updatePending } from './order-sync-job.js';
import { enqueueJobs, jobMessage, mayHaveBeenPlaced, needsAttention, withEdits } from './placing.js';
import { jobIdsBySupplierOrder } from './propagating.js';

const Id = v.union(
  [v.pipe(v.number(), v.integer(), v.minValue(0)), v.pipe(v.string(), v.minLength(1), v.maxLength(100))],
  'must be an id, a number or a string',
);

/** The part of `orders/cancelled` the service reads (CONTRACT.md §10.4–10.5); the rest is ignored. */
export const OrderCancelledPayload = v.pipe(
  v.looseObject({
    id: Id,
    cancel_reason: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2000)))),
    cancelled_at: v.optional(v.nullable(v.string())),
  }),
  v.transform((payload) => ({ orderId: String(payload.id), reason: payload.cancel_reason ?? null })),
);

/**
 * A verified `orders/cancelled`. The shop may be a reseller's (its order's jobs stop or are
 * cancelled) or a supplier's (the job that placed that order is cancelled): the stores whose secret
 * verified are asked in that order, and the first that has the order takes it. A shop that is both
 * finds the one that matches the order id. Answers the ids of the jobs it concerns.
 */
export const acceptCancellation = async (
  stores: { resellerStores: StoreOnShop[]; sourceStores: StoreOnShop[] },
  payload: unknown,
  requestId?: string,
): Promise<string[]> => {
  const { orderId, reason } = parseInput(OrderCancelledPayload, payload);
  for (const reseller of stores.resellerStores) {
    const ids = await cancelResellerOrder(reseller, orderId, reason, requestId);
    if (ids.length) return ids;
  }
  return stores.sourceStores.length ? cancelBySourceStore(stores.sourceStores, orderId, reason) : [];
};

/**
 * Cancellations (CONTRACT.md §10.4–10.5). The reseller's `orders/cancelled` stops every job of the
 * order: a job with no supplier order, nor any on its way, is `cancelled` at once and no supplier
 * call is ever made for it; a job whose attempt is under way, or whose earlier attempt may have
 * placed the order, is flagged and its worker ends it (cancelling what it placed); a completed job's
 * supplier order is cancelled through its platform by the sync worker, under the failure policy of
 * §6 (`purpose: 'cancel'` messages). A supplier's own `orders/cancelled` makes its job `cancelled`.
 * Every write is a move of the state machine, conditional on what was read; an audit entry goes
 * with each end, written once (`cancelMove`).
 */

type Requester = Cancellation['requestedBy'];

/** How long a cancellation that arrived before its order waits for it (CONTRACT.md §10). */
const KEEP_SECONDS = 7 * 24 * 3600;

/**
 * Moves the job with its cancellation fields, as one conditional UpdateItem. An end of the
 * cancellation is audited first, under an id derived from the job, the action and who asked (each
 * happens to a job at most once): a crash between the two writes leaves the entry, and the move's
 * retry (a redelivery, the reconciler) finds it written and writes the same entry no second time.
 * Not one transaction: a transaction bills every item twice, and the audit entry with its five list
 * entries is most of the cost (docs/performance.md). The entry says what was decided when it was
 * decided; a move that then loses a race to another mover is taken again from a fresh read, whose
 * end finds the same entry.
 */
const cancelMove = async (...move: Parameters<typeof cancelMoveOrLost>) => (await cancelMoveOrLost(...move)) === true;

/** `cancelMove`, answering the race it lost (the job the move met) for the caller's next try. */
const cancelMoveOrLost = async (
  job: SyncJob,
  move: MoveName,
  cancellation: Cancellation,
  audit?: 'sync_job.cancelled' | 'sync_job.cancellation_declined',
  add?: Record<string, number>,
): Promise<true | Lost> => {
  const ended = move === 'cancel' || move === 'cancelPlaced';
  const request = cancellationRequest(job, move, cancellation, add);
  if (audit) await auditOnce(job, audit, cancellation);
  const moved = await moveJob(request);
  if (isLost(moved)) return moved;
  if (ended) countMetric(BUSINESS_METRICS.jobsCancelled);
  // A late job cancelled (by either side) is no longer late now (CONTRACT.md §16.3).
  if (ended) await countLateCancellation(job);
  if (ended && cancellation.requestedBy === 'source') {
    countMetric(BUSINESS_METRICS.jobsCancelledBySource);
    await countSourceCancellation(job, (await jobLines(job)) ?? []);
  }
  if (audit === 'sync_job.cancellation_declined') countMetric(BUSINESS_METRICS.cancellationsDeclined);
  return true;
};

/** The audit entry of a cancellation's end, written once whatever the number of tries. */
const auditOnce = async (
  job: SyncJob,
  action: 'sync_job.cancelled' | 'sync_job.cancellation_declined',
  cancellation: Cancellation,
) => {
  // An entry written already (an earlier try of the same end) is the one wanted.
  await recordAuditEntry({
    id: derivedId('aud', job.id, action, cancellation.requestedBy),
    action,
    job,
    actor: SYSTEM,
    metadata: {
      previousStatus: job.status,
      requestedBy: cancellation.requestedBy,
      ...(cancellation.reason ? { reason: cancellation.reason } : {}),
    },
  });
};

const requested = (requestedBy: Requester, reason: string | null, at = now()): Cancellation => ({
  requestedBy,
  status: 'requested',
  reason,
  requestedAt: at,
  endedAt: null,
});

const done = (cancellation: Cancellation, reason = cancellation.reason): Cancellation => ({
  ...cancellation,
  status: 'done',
  reason,
  endedAt: now(),
});

/** Ends a job with no supplier order (nor any on its way): `cancelled`, audited. */
export const cancelNow = (job: SyncJob, cancellation: Cancellation) =>
  cancelMove(job, 'cancel', done(cancellation), 'sync_job.cancelled');

const cancelNowOrLost = (job: SyncJob, cancellation: Cancellation) =>
  cancelMoveOrLost(job, 'cancel', done(cancellation), 'sync_job.cancelled');

/** Asks the sync worker to cancel a completed job's supplier order (a new generation, its message). */
export const requestSupplierOrderCancel = async (job: SyncJob, cancellation: Cancellation, requestId?: string) => {
  if (!(await cancelMove(job, 'requestCancel', { ...cancellation, status: 'requested' }))) return false;
  const generation = job.generation + 1;
  await enqueueJobs([jobMessage({ ...job, generation }, 'webhook', requestId, 'cancel')]);
  return true;
};

/**
 * What one job of a cancelled order becomes, by the state it is in (CONTRACT.md §10.4's table).
 * A lost race when the job moved between the read and the write: the caller tries again.
 */
const cancelOne = async (job: SyncJob, reason: string | null, requestId?: string): Promise<boolean | Lost> => {
  // A redelivery while the supplier's cancellation is on its way sends its message again (the send
  // that followed the first webhook call may have failed); the platform's key makes it one cancellation.
  if (job.status === 'completed' && job.cancellation?.status === 'requested') {
    await enqueueJobs([jobMessage(job, 'webhook', requestId, 'cancel')]);
    return true;
  }
  if (job.status === 'cancelled' || job.cancellation) return true; // a redelivery, or one in hand
  const cancellation = requested('reseller', reason);
  if (job.status === 'completed') return requestSupplierOrderCancel(job, cancellation, requestId);
  // No supplier order, nor any that an earlier attempt may have placed: cancelled at once. A job
  // under way, or one that may have been placed, is flagged: its worker ends it (moves cannot race:
  // each is conditional on the state read, and the claim reads the flag).
  if (job.status === 'dead' || (job.status !== 'processing' && !mayHaveBeenPlaced(job))) {
    return cancelNowOrLost(job, cancellation);
  }
  if (job.status === 'processing') return cancelMoveOrLost(job, 'flagCancel', cancellation);
  // pending or failed, and an earlier attempt may have placed the order: a fresh message, whose
  // claim finds the flag and looks the order up before it ends the job (placing-worker.ts).
  const flagged = await cancelMoveOrLost(job, 'flagResend', cancellation);
  if (flagged !== true) return flagged;
  await enqueueJobs([jobMessage({ ...job, generation: job.generation + 1 }, 'webhook', requestId)]);
  return true;
};

/**
 * `cancelOne`, read again after each lost race (a worker moved the job meanwhile; core/concurrency.ts).
 * `read`: the job as the caller just read it (consistently), taken for the first try.
 */
const cancelJob = (id: string, reason: string | null, requestId?: string, read?: SyncJob) =>
  withRereads(
    () => loadJob(id, true),
    async (job) => {
      const cancelled = job && (await cancelOne(job, reason, requestId));
      return cancelled === false ? 'again' : cancelled === undefined || cancelled === true ? undefined : cancelled;
    },
    `job ${id}, while it was being cancelled,`,
    read,
  );

/** One job of the order cancelled as §10.4 says (a refund left nothing of it, CONTRACT.md §15.1). */
export const cancelOrderJob = (id: string, reason: string | null, requestId?: string) =>
  cancelJob(id, reason, requestId);

/**
 * The reseller's `orders/cancelled` (CONTRACT.md §10.4): every job of the order stops or is
 * cancelled. Answers the ids of the order's jobs; none when the order never reached the service.
 */
export const cancelResellerOrder = async (
  reseller: { id: string },
  externalOrderId: string,
  reason: string | null,
  requestId?: string,
): Promise<string[]> => {
  const firstJobId = syncJobId(reseller.id, externalOrderId, 0);
  return cancelRecorded(reseller, externalOrderId, reason, requestId, await loadRecord(firstJobId, true));
};

/** The cancellation of the order whose record (or the cancellation kept for it) is `found`. */
const cancelRecorded = async (
  reseller: { id: string },
  externalOrderId: string,
  reason: string | null,
  requestId: string | undefined,
  found: Awaited<ReturnType<typeof loadRecord>>,
): Promise<string[]> => {
  const firstJobId = syncJobId(reseller.id, externalOrderId, 0);
  if (found?.kind === 'unroutedOrder') {
    if (await cancelUnroutedOrder(firstJobId, now())) {
      logger.info('cancellation of an order none of whose items routed: recorded on it');
    }
    return [];
  }
  if (found?.kind === 'orderCancellation') return [];
  const first = found?.kind === 'job' ? found.job : undefined;
  if (!first) {
    // Before its order: kept (7 days) where the order's first job will be, which the order's create
    // then finds in its way and writes the jobs cancelled (order-flow/receiving.ts). An order that
    // arrived meanwhile makes the write fail: the cancellation is then taken, as the write met the order.
    const kept = { firstJobId, reason, cancelledAt: now(), expiresAt: Math.floor(Date.now() / 1000) + KEEP_SECONDS };
    const written = await keepOrderCancellation(kept);
    if (written === true) {
      logger.info('cancellation of an order not received yet: kept for its create');
      return [];
    }
    if (!written.met || written.met.kind === 'orderCancellation') return [];
    return cancelRecorded(reseller, externalOrderId, reason, requestId, written.met);
  }
  const ids = first.orderJobIds ?? [first.id];
  for (const id of ids) await cancelJob(id, reason, requestId, id === first.id ? first : undefined);
  return ids;
};

/**
 * A supplier's own `orders/cancelled` (CONTRACT.md §10.5): the job that placed that order is
 * `cancelled`, requested by the source store (`source`), with the supplier's reason. The reseller's order is left to
 * the merchant; the metric `JobsCancelledBySource` (and its alarm) makes sure someone sees it.
 */
export const cancelBySourceStore = async (
  sourceStores: { id: string }[],
  sourceOrderId: string,
  reason: string | null,
) => {
  const ids = (await Promise.all(sourceStores.map((store) => jobIdsBySupplierOrder(store.id, sourceOrderId)))).flat();
  for (const job of await loadJobs(ids)) {
    if (job.status !== 'completed') continue;
    // The echo of the reseller's own cancellation, which the service asked the supplier for (its
    // webhook, or a poll, can beat the worker's record of it): the reseller's cancellation is done.
    const echo = job.cancellation?.status === 'requested' && job.cancellation.requestedBy === 'reseller';
    const cancellation = echo && job.cancellation ? job.cancellation : requested('source', reason);
    await cancelMove(job, 'cancelPlaced', done(cancellation), 'sync_job.cancelled');
    if (!echo) {
      logger.warn('the source store cancelled a supplier order; the reseller order needs the merchant', {
        jobId: job.id,
      });
    }
  }
  return ids;
};

// ---------- the worker's side

/**
 * A `purpose: 'cancel'` message: cancels the completed job's supplier order through its platform,
 * with the job's own idempotency key. Accepted: `cancelled`, done. Refused because it has shipped
 * (422, or another refusal): the job stays `completed`, its cancellation `declined` with the
 * platform's reason, audited. 429 and transient failures: `retry` (the message comes back; a
 * platform without keys reads the order's state before cancelling again).
 */
export const cancelSupplierOrder = async (deps: Deps, job: SyncJob, messageId: string): Promise<'done' | 'retry'> => {
  const cancellation = job.cancellation;
  if (job.status !== 'completed' || cancellation?.status !== 'requested' || !job.sourceOrderId) return 'done';
  const sourceStore = await loadSourceStore(job.sourceStoreId);
  if (!sourceStore) {
    await cancelMove(job, 'declineCancel', { ...cancellation, status: 'declined', reason: 'the source store is gone' });
    return 'done';
  }
  // One message calls: two of one cancellation (a second webhook's) met in flight would call twice.
  // The claim lapses with the reconciler's lease, when a fresh message may take the call over.
  if (isLost(await claimCancelCall(job, messageId, config.leaseSeconds()))) {
    logger.info('another message of this cancellation holds its call (or it ended): left to it');
    return 'done';
  }
  const shop = await shopConnection(deps, sourceStore);
  try {
    await deps
      .platforms(shop.platform)
      .cancelOrder(shop, job.sourceOrderId, cancellation.reason ?? 'customer', `cancel:${job.id}`);
  } catch (error) {
    const failure = classify(error, 'internal error while cancelling the order');
    if (failure.kind !== 'permanent') {
      logger.warn('cancelling the supplier order failed; SQS will retry', { failure: failure.kind });
      return 'retry';
    }
    const declined: Cancellation = { ...cancellation, status: 'declined', reason: failure.reason, endedAt: now() };
    await cancelMove(job, 'declineCancel', declined, 'sync_job.cancellation_declined');
    logger.warn('the supplier declined the cancellation', { reason: failure.reason });
    return 'done';
  }
  await cancelMove(job, 'cancelPlaced', done(cancellation), 'sync_job.cancelled');
  logger.info('supplier order cancelled');
  return 'done';
};

/**
 * A cancellation that keeps failing (its message used up its receives): never silent. The job
 * keeps `cancellation.status` `requested` and gets `attention` with why, audited
 * (`sync_job.attention_required`), for a person to finish on the supplier's shop.
 */
export const cancellationGaveUp = async (job: SyncJob) => {
  const reason =
    'the supplier order could not be cancelled: every attempt failed (see the failures logged for the job)';
  if (await needsAttention(job, reason)) {
    logger.error('cancelling the supplier order kept failing; the job needs a person', { reason });
  }
};

/**
 * The reconciler's part: a completed job whose cancellation stayed `requested` past its lease (its
 * message lost: a send that failed with no redelivery of the webhook after it) is sent a fresh one;
 * after MAX_RESENDS without an end, the job needs a person. Answers whether it acted.
 */
export const resendCancellation = async (job: SyncJob) => {
  const cancellation = job.cancellation;
  if (job.status !== 'completed' || cancellation?.status !== 'requested' || job.attention) return false;
  if (job.resends >= MAX_RESENDS) {
    await cancellationGaveUp(job);
    return true;
  }
  if (!(await cancelMove(job, 'requestCancel', cancellation, undefined, { resends: 1 }))) return false;
  await enqueueJobs([jobMessage({ ...job, generation: job.generation + 1 }, 'reconciler', undefined, 'cancel')]);
  logger.warn('stalled cancellation sent a new message', { resends: job.resends + 1 });
  return true;
};

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
