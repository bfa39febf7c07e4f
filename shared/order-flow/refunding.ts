import type { Deps } from '../aws/deps.js';
import { withRereads } from '../core/concurrency.js';
import { config } from '../core/config.js';
import { derivedId, now, syncJobId } from '../core/ids.js';
import { logger } from '../core/telemetry.js';
import { recordAuditEntry, SYSTEM } from '../entities/audit-entry.js';
import type { SourceStore } from '../entities/store.js';
import {
  classify,
  type OrderEditResult,
  type PlatformReturn,
  type QuantityTarget,
  sameReturnId,
} from '../platforms/port.js';
import { shopConnection } from '../stores/connection.js';
import { loadSourceStore } from '../stores/stores.js';
import { cancelOrderJob } from './changing.js';
import {
  type AfterSale,
  creditOf,
  emptyAfterSale,
  type JobReturn,
  lineAfterSale,
  type OrderRefund,
  returnedQuantity,
} from './order-after-sale.js';
import {
  isLost,
  type JobLine,
  jobLines,
  jobOrderReading,
  keepAfterSale,
  type Lost,
  loadJob,
  loadJobs,
  loadRecord,
} from './order-repository.js';
import { fulfilledQuantities, type SyncJob } from './order-sync-job.js';
import { enqueueJobs, jobMessage, needsAttention } from './placing.js';
import { jobIdsBySupplierOrder } from './propagating.js';
import type { ApprovedReturn, EndedReturn, Refund } from './refunding-request.js';

/**
 * The reseller's refunds (CONTRACT.md §15.1). Each refund is taken once per job (`afterSale.seen`),
 * whether it came by webhook, by poll or both. Units refunded with `restock_type` cancel leave the
 * supplier order: a job not placed yet places the smaller quantities; a placed one's supplier order
 * is edited to absolute quantities by the sync worker (`purpose: 'remove'`); nothing left of it, it
 * is cancelled as §10.4 says. `return` units open a return (refunding.ts) unless the refund names
 * its return; anything else is recorded. A refund of no job's lines changes no job; every refund is
 * kept on the order's first job for the order view.
 */

export const ATTENTION_REFUNDED_UNITS_SHIPPED = 'refunded_units_shipped';

/** A copy of the job's after-sale record to change (a fresh one for its first refund or return). */
export const afterSaleToChange = async (job: SyncJob): Promise<AfterSale> => {
  const base = structuredClone(job.afterSale ?? emptyAfterSale());
  if (!base.currency) {
    const reading = await jobOrderReading(job);
    base.currency = reading?.ok ? reading.order.currency : undefined;
  }
  return { ...base, at: now() };
};

/** Each reseller line of the job by its id. */
export const linesById = async (job: SyncJob) => {
  const lines = (await jobLines(job)) ?? [];
  return new Map(
    lines.filter((line) => line.resellerLineItemId !== null).map((line) => [line.resellerLineItemId!, line]),
  );
};

/** Whether no unit of the job's lines is left to place (each refunded with `cancel`). */
const nothingLeft = (lines: Map<string, JobLine>, afterSale: AfterSale) =>
  [...lines.values()].every((line) => lineAfterSale(afterSale, line.resellerLineItemId).cut >= line.quantity);

const orderRefundOf = (refund: Refund): OrderRefund => ({
  id: refund.id,
  createdAt: refund.createdAt,
  lines: refund.lines.map((line) => ({
    resellerLineItemId: line.lineItemId,
    quantity: line.quantity,
    restockType: line.restockType,
  })),
  amount: refund.amounts.length ? sumAmounts(refund.amounts) : null,
  currency: refund.currency,
});

/** Decimal amounts added exactly (as their longest scale). */
export const sumAmounts = (amounts: string[]) => {
  const scale = Math.max(0, ...amounts.map((amount) => amount.split('.')[1]?.length ?? 0));
  const units = amounts.reduce((sum, amount) => {
    const [whole, fraction = ''] = amount.replace(/^-/, '').split('.');
    const value = BigInt(whole + fraction.padEnd(scale, '0')) * (amount.startsWith('-') ? -1n : 1n);
    return sum + value;
  }, 0n);
  const digits = (units < 0n ? -units : units).toString().padStart(scale + 1, '0');
  const text = scale ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  return units < 0n ? `-${text}` : text;
};

/**
 * A reseller's `refunds/create` (or a refund a poll found): answers the ids of the order's jobs, or
 * undefined when the store has no such order (a refund of an order that never routed changes nothing).
 */
export const refundResellerOrder = (
  reseller: { id: string },
  refund: Refund,
  requestId?: string,
): Promise<string[] | undefined> => {
  const firstJobId = syncJobId(reseller.id, refund.orderId, 0);
  return eachJobOfOrder(reseller.id, refund.orderId, 'a refund was recorded', (job) =>
    refundJob(job, refund, job.id === firstJobId, requestId),
  );
};

type Step = undefined | Lost;

/** One job's part of a refund; a lost race answers what the write met, for the next try. */
const refundJob = async (job: SyncJob, refund: Refund, first: boolean, requestId?: string): Promise<Step> => {
  const seen = `refund:${refund.id}`;
  if (job.afterSale?.seen.includes(seen)) return resendPending(job, requestId);
  const lines = await linesById(job);
  const mine = refund.lines.filter((line) => lines.has(line.lineItemId) && line.quantity > 0);
  if (!mine.length && !first) return undefined;
  const next = await afterSaleToChange(job);
  next.seen = [...next.seen, seen].slice(-100);
  if (first) next.orderRefunds = [...(next.orderRefunds ?? []), orderRefundOf(refund)];
  let cuts = false;
  for (const line of mine) {
    const entry = { ...lineAfterSale(next, line.lineItemId) };
    next.lines[line.lineItemId] = entry;
    entry.refunded += line.quantity;
    if (line.restockType !== 'cancel') continue;
    const quantity = lines.get(line.lineItemId)!.quantity;
    entry.cut = Math.min(quantity, entry.cut + line.quantity);
    cuts = true;
  }
  const returned = mine.filter((line) => line.restockType === 'return' && refund.returnId === null);
  if (returned.length && job.status === 'completed') addReturnOf(job, next, lines, `refund-${refund.id}`, returned);
  const ended = job.status === 'cancelled' || job.status === 'dead';
  const cancelAll = cuts && !ended && nothingLeft(lines, next);
  if (cuts && !ended && !cancelAll) plan(job, next);
  const written = await keepAfterSale(job, next, true);
  if (isLost(written)) return written;
  if (cancelAll) await cancelOrderJob(job.id, 'refunded', requestId);
  else await resendPending({ ...job, afterSale: next }, requestId);
  logger.info('refund recorded on the job', { refundId: refund.id, lines: mine.length, cancelled: cancelAll });
  return undefined;
};

/**
 * What a refund's cuts do to the job by its state: not placed (and no attempt under way), the units
 * are never placed (`removed` at once); under way or placed, a removal is requested, which the
 * placed job's worker sends (an attempt under way finds it once it completes).
 */
const plan = (job: SyncJob, next: AfterSale) => {
  if (job.status === 'pending' || job.status === 'failed') {
    for (const entry of Object.values(next.lines)) entry.removed = Math.max(entry.removed, entry.cut);
    return;
  }
  next.removal = { status: 'requested', at: next.v + 1, requestedAt: now(), endedAt: null };
};

/** Sends the placed job the work its record asks for (a removal, a return): again on a redelivery. */
export const resendPending = async (job: SyncJob, requestId?: string): Promise<undefined> => {
  if (job.status !== 'completed' || !job.afterSale) return undefined;
  if (job.afterSale.removal?.status === 'requested') {
    await enqueueJobs([jobMessage(job, 'webhook', requestId, 'remove')]);
  }
  await sendReturnsIfPending(job, requestId);
  return undefined;
};

// ---------- the worker's side

/** The supplier lines to set, and to what: each line's units less those refunded with `cancel`. */
const targetsOf = (lines: Map<string, JobLine>, afterSale: AfterSale): QuantityTarget[] =>
  [...lines.values()].flatMap((line) => {
    const cut = lineAfterSale(afterSale, line.resellerLineItemId).cut;
    return cut > 0 && line.sourceLineItemId ? [{ id: line.sourceLineItemId, quantity: line.quantity - cut }] : [];
  });

/**
 * A `purpose: 'remove'` message: the placed supplier order is edited to its lines' new absolute
 * quantities (convergent: an edit sent again after a lost answer removes nothing twice). What the
 * supplier had shipped meanwhile stays: the job gets `attention` `refunded_units_shipped`. 429 and
 * transient failures: `retry`.
 */
export const removeUnits = async (deps: Deps, job: SyncJob): Promise<'done' | 'retry'> => {
  const removal = job.afterSale?.removal;
  if (job.status !== 'completed' || removal?.status !== 'requested' || !job.sourceOrderId) return 'done';
  const sourceStore = await loadSourceStore(job.sourceStoreId);
  if (!sourceStore) return 'done';
  const shop = await shopConnection(deps, sourceStore);
  const lines = await linesById(job);
  let result: OrderEditResult;
  try {
    const targets = targetsOf(lines, job.afterSale!);
    const key = `edit:${job.id}:${removal.at}`;
    result = await deps.platforms(shop.platform).editOrderQuantities(shop, job.sourceOrderId, targets, key);
  } catch (error) {
    const failure = classify(error, 'internal error while editing the order');
    if (failure.kind !== 'permanent') return 'retry';
    await endRemoval(job, 'refused', new Map());
    await needsAttention(job, ATTENTION_REFUNDED_UNITS_SHIPPED);
    logger.warn('the supplier refused the edit', { reason: failure.reason });
    return 'done';
  }
  const current = new Map(result.lines.map((line) => [line.id, line.currentQuantity]));
  const short = await endRemoval(job, 'done', current, lines);
  if (short) await needsAttention(job, ATTENTION_REFUNDED_UNITS_SHIPPED);
  return 'done';
};

/**
 * Ends the removal: each line's `removed` from what the supplier order still holds. Audited once
 * per removal. Answers whether units refunded with `cancel` are still on the order (shipped).
 */
const endRemoval = async (
  job: SyncJob,
  status: 'done' | 'refused',
  current: Map<string, number>,
  lines: Map<string, JobLine> = new Map(),
): Promise<boolean> => {
  const next = await afterSaleToChange(job);
  let short = false;
  for (const line of lines.values()) {
    const id = line.resellerLineItemId!;
    const held = line.sourceLineItemId === null ? undefined : current.get(line.sourceLineItemId);
    const entry = lineAfterSale(next, id);
    if (held === undefined || entry.cut === 0) continue;
    next.lines[id] = { ...entry, removed: Math.max(0, line.quantity - held) };
    short ||= held > line.quantity - entry.cut;
  }
  next.removal = { ...next.removal!, status, endedAt: now() };
  if (status === 'done') await auditRemoval(job, next);
  const written = await keepAfterSale(job, next);
  if (isLost(written)) logger.warn('the job moved while its removal ended; its next message ends it');
  return short;
};

const auditRemoval = async (job: SyncJob, next: AfterSale) => {
  await recordAuditEntry({
    id: derivedId('aud', job.id, 'sync_job.units_removed', String(next.removal?.at ?? 0)),
    action: 'sync_job.units_removed',
    job,
    actor: SYSTEM,
    metadata: {
      lines: Object.entries(next.lines).map(([id, line]) => ({ resellerLineItemId: id, removed: line.removed })),
    },
  });
};

/** A removal message that used up its receives: never silent, the job says so. */
export const removalGaveUp = (job: SyncJob) =>
  needsAttention(job, 'the supplier order could not be edited: every attempt failed');

/**
 * Returns reach the supplier (CONTRACT.md §15.2). A reseller's `returns/approve` opens, for each job
 * carrying any of its lines, one return on that job's supplier order (`pending` until the sync
 * worker has opened it, `purpose: 'return'`), with the reason; units the supplier has not shipped
 * take §15.1's cancel path instead. A reseller's `returns/cancel` cancels the supplier's return
 * while it is open; the supplier's `returns/close` closes it, its `returns/cancel` cancels it (with
 * `attention`), and its `refunds/create` is the job's credit.
 */

export const ATTENTION = {
  cancelRefused: 'return_cancel_refused',
  cancelledBySource: 'return_cancelled_by_source',
  currencyMismatch: 'credit_currency_mismatch',
} as const;

/** Whether the job's closed returns are worth more than the supplier refunded: it is owed credit. */
export const withCredit = (next: AfterSale, lines: Map<string, JobLine>) => {
  const credit = creditOf(next, next.currency ?? 'USD', (id) => lines.get(id)?.sourcePrice ?? null);
  next.creditDue = credit?.due ?? false;
  return next;
};

/**
 * Adds to `next` a return of the job for a reseller return (or a refund with restock type return):
 * the units the supplier shipped and no live return covers yet; the rest leaves the supplier order
 * as §15.1's cancel path says. Answers whether anything was added.
 */
export const addReturnOf = (
  job: SyncJob,
  next: AfterSale,
  lines: Map<string, JobLine>,
  resellerReturnId: string,
  requested: Array<{ lineItemId: string; quantity: number; reason?: string }>,
) => {
  const all = [...lines.values()];
  const shipped = fulfilledQuantities(all, job.fulfillments);
  const returnLines: JobReturn['lines'] = [];
  for (const line of requested) {
    const at = all.findIndex((l) => l.resellerLineItemId === line.lineItemId);
    const open = Math.max(0, shipped[at] - returnedQuantity(next, line.lineItemId));
    const quantity = Math.min(open, line.quantity);
    if (quantity > 0) {
      const sourceLineItemId = all[at].sourceLineItemId;
      returnLines.push({
        resellerLineItemId: line.lineItemId,
        sourceLineItemId,
        quantity,
        reason: line.reason ?? 'unknown',
      });
    }
    if (line.quantity > quantity) cutUnshipped(next, all[at], line.quantity - quantity);
  }
  if (!returnLines.length) return false;
  const id = derivedId('ret', job.id, resellerReturnId);
  next.returns = [...next.returns, newReturn(id, resellerReturnId, returnLines)];
  return true;
};

const newReturn = (id: string, resellerReturnId: string, lines: JobReturn['lines']): JobReturn => ({
  id,
  resellerReturnId,
  sourceReturnId: null,
  status: 'pending',
  lines,
  error: null,
  sentAt: null,
  openedAt: null,
  closedAt: null,
});

/** Units of a return the supplier never shipped: they leave its order instead (CONTRACT.md §15.2). */
const cutUnshipped = (next: AfterSale, line: JobLine, units: number) => {
  const id = line.resellerLineItemId!;
  const entry = lineAfterSale(next, id);
  next.lines[id] = { ...entry, cut: Math.min(line.quantity, entry.cut + units) };
  next.removal = { status: 'requested', at: next.v + 1, requestedAt: now(), endedAt: null };
};

/** The placed job is sent its pending returns (or a cancellation of one) by the sync worker. */
export const sendReturnsIfPending = async (job: SyncJob, requestId?: string) => {
  const returns = job.afterSale?.returns ?? [];
  if (job.status !== 'completed' || !returns.some(needsSending)) return;
  await enqueueJobs([jobMessage(job, 'webhook', requestId, 'return')]);
};

/** A return the supplier is still to be told of: to open, or to cancel. */
export const needsSending = (r: JobReturn) =>
  r.status === 'pending' || (r.status === 'open' && r.cancelRequested === true);

/** Each job of the reseller's order, through `step` (read again after a lost race); undefined: no such order. */
const eachJobOfOrder = async (
  resellerStoreId: string,
  orderId: string,
  what: string,
  step: (job: SyncJob) => Promise<undefined | Lost>,
): Promise<string[] | undefined> => {
  const firstJobId = syncJobId(resellerStoreId, orderId, 0);
  const record = await loadRecord(firstJobId, true);
  // Only refunds or returns kept for it (order-items.ts): the order is not known yet.
  if (record?.kind !== 'job') return record && record.kind !== 'earlyAfterSale' ? [] : undefined;
  const ids = record.job.orderJobIds ?? [record.job.id];
  for (const id of ids) {
    await withRereads(
      () => loadJob(id, true),
      async (job) => (job ? step(job) : undefined),
      `job ${id}, while ${what},`,
      id === firstJobId ? record.job : undefined,
    );
  }
  return ids;
};

/** A reseller's `returns/approve` (or an open return a poll found). */
export const approveReturn = (reseller: { id: string }, approved: ApprovedReturn, requestId?: string) =>
  eachJobOfOrder(reseller.id, approved.orderId, 'a return was recorded', async (job) => {
    const seen = `return:${approved.id}`;
    if (job.afterSale?.seen.includes(seen)) return resendPending(job, requestId);
    const lines = await linesById(job);
    const mine = approved.lines.filter((line) => lines.has(line.lineItemId) && line.quantity > 0);
    if (!mine.length || job.status === 'cancelled' || job.status === 'dead') return undefined;
    const next = await afterSaleToChange(job);
    next.seen = [...next.seen, seen].slice(-100);
    addReturnOf(job, next, lines, approved.id, mine);
    const written = await keepAfterSale(job, next, true);
    if (isLost(written)) return written;
    return resendPending({ ...job, afterSale: next }, requestId);
  });

/** A reseller's `returns/cancel`: the supplier's return is cancelled while it is open. */
export const cancelResellerReturn = (reseller: { id: string }, ended: EndedReturn, requestId?: string) =>
  ended.orderId === null
    ? Promise.resolve(undefined)
    : eachJobOfOrder(reseller.id, ended.orderId, 'a return was cancelled', async (job) => {
        const found = job.afterSale?.returns.find((r) => r.resellerReturnId === ended.id);
        if (!found || found.status === 'cancelled' || found.status === 'failed' || found.cancelRequested)
          return found?.cancelRequested ? resendPending(job, requestId) : undefined;
        if (found.status === 'closed') {
          await needsAttention(job, ATTENTION.cancelRefused);
          return undefined;
        }
        const next = await afterSaleToChange(job);
        next.returns = next.returns.map((r) =>
          r.id !== found.id
            ? r
            : r.status === 'pending' && r.sentAt === null
              ? endReturn(r, 'cancelled')
              : { ...r, cancelRequested: true },
        );
        const written = await keepAfterSale(job, withCredit(next, await linesById(job)), true);
        if (isLost(written)) return written;
        return resendPending({ ...job, afterSale: next }, requestId);
      });

const endReturn = (
  r: JobReturn,
  status: 'closed' | 'cancelled' | 'failed',
  error: string | null = null,
): JobReturn => ({
  ...r,
  status,
  cancelRequested: undefined,
  error,
  closedAt: status === 'closed' ? now() : r.closedAt,
});

// ---------- the supplier's side

/** The jobs that placed a supplier order, of any of the verified source stores. */
const jobsOfSupplierOrder = async (sourceStores: { id: string }[], sourceOrderId: string) =>
  loadJobs((await Promise.all(sourceStores.map((store) => jobIdsBySupplierOrder(store.id, sourceOrderId)))).flat());

/** One job's change, read again after a lost race. */
const onJob = (job: SyncJob, what: string, step: (job: SyncJob) => Promise<undefined | Lost>) =>
  withRereads(
    () => loadJob(job.id, true),
    async (read) => (read ? step(read) : undefined),
    `job ${job.id}, while ${what},`,
    job,
  );

/** The supplier's `returns/close` or `returns/cancel` of a return the service opened. */
export const endSourceReturn = async (
  sourceStores: { id: string }[],
  ended: EndedReturn,
  status: 'closed' | 'cancelled',
): Promise<string[]> => {
  if (ended.orderId === null) return [];
  const jobs = await jobsOfSupplierOrder(sourceStores, ended.orderId);
  for (const job of jobs) {
    await onJob(job, `its return was ${status}`, async (read) => {
      const found = read.afterSale?.returns.find((r) => r.sourceReturnId && sameReturnId(r.sourceReturnId, ended.id));
      if (!found || found.status === status || found.status === 'cancelled') return undefined;
      const next = await afterSaleToChange(read);
      next.returns = next.returns.map((r) => (r.id === found.id ? endReturn(r, status) : r));
      const written = await keepAfterSale(read, withCredit(next, await linesById(read)));
      if (isLost(written)) return written;
      if (status === 'cancelled') await needsAttention(read, ATTENTION.cancelledBySource);
      return undefined;
    });
  }
  return jobs.map((job) => job.id);
};

/**
 * The supplier's `refunds/create` on its order: its refund, once, with the return it most likely
 * pays for (a live return of the same lines, closed first). In another currency than the order's,
 * it is recorded, left out of the credit, and the job needs a person.
 */
export const refundBySource = async (sourceStores: { id: string }[], refund: Refund): Promise<string[]> => {
  const jobs = await jobsOfSupplierOrder(sourceStores, refund.orderId);
  for (const job of jobs) await onJob(job, 'its supplier refunded', (read) => recordSourceRefund(read, refund));
  return jobs.map((job) => job.id);
};

/** The return a supplier's refund most likely pays for: a live one of the same lines, closed first. */
const paidReturn = (next: AfterSale, lines: Array<{ sourceLineItemId: string }>) =>
  next.returns
    .filter((r) => r.status === 'closed' || r.status === 'open')
    .sort((a, b) => Number(b.status === 'closed') - Number(a.status === 'closed'))
    .find((r) => r.lines.some((l) => lines.some((line) => line.sourceLineItemId === l.sourceLineItemId)));

const recordSourceRefund = async (job: SyncJob, refund: Refund): Promise<undefined | Lost> => {
  if (job.afterSale?.sourceRefunds.some((r) => r.id === refund.id)) return undefined;
  const next = await afterSaleToChange(job);
  const currency = refund.currency ?? next.currency ?? 'USD';
  const lines = refund.lines.map((line) => ({ sourceLineItemId: line.lineItemId, quantity: line.quantity }));
  const amount = refund.amounts.length ? sumAmounts(refund.amounts) : '0';
  const returnId = paidReturn(next, lines)?.id ?? null;
  next.sourceRefunds = [
    ...next.sourceRefunds,
    { id: refund.id, amount, currency, returnId, lines, createdAt: refund.createdAt },
  ];
  const written = await keepAfterSale(job, withCredit(next, await linesById(job)));
  if (isLost(written)) return written;
  if (currency !== next.currency) await needsAttention(job, ATTENTION.currencyMismatch);
  return undefined;
};

// ---------- the worker's side

/** The text that names a return on the supplier (each line's note): what finds it again. No personal data. */
const markerOf = (job: SyncJob, r: JobReturn) => `${r.id} (reseller return ${r.resellerReturnId}, ${job.id})`;

type ReturnOutcome = { kind: 'opened'; found: PlatformReturn } | { kind: 'failed'; reason: string } | 'retry';

/** Opens one return on the supplier, once: a create whose outcome is unknown is looked up by its marker first. */
const openOnSupplier = async (
  deps: Deps,
  job: SyncJob,
  r: JobReturn,
  sourceStore: SourceStore,
): Promise<ReturnOutcome> => {
  const shop = await shopConnection(deps, sourceStore);
  const lines = r.lines.flatMap((line) =>
    line.sourceLineItemId ? [{ lineItemId: line.sourceLineItemId, quantity: line.quantity, reason: line.reason }] : [],
  );
  if (!lines.length) return { kind: 'failed', reason: "the supplier's lines are not known" };
  const request = { marker: markerOf(job, r), lines };
  try {
    const platform = deps.platforms(shop.platform);
    const opened = await platform.createReturn(shop, job.sourceOrderId!, request, `return:${r.id}`, {
      resend: r.sentAt !== null,
    });
    return { kind: 'opened', found: opened };
  } catch (error) {
    const failure = classify(error, 'internal error while opening the return');
    return failure.kind === 'permanent' ? { kind: 'failed', reason: failure.reason } : 'retry';
  }
};

/** Cancels an open return on the supplier; refused (something was received), the job needs a person. */
const cancelOnSupplier = async (deps: Deps, job: SyncJob, r: JobReturn): Promise<'cancelled' | 'refused' | 'retry'> => {
  const sourceStore = await loadSourceStore(job.sourceStoreId);
  if (!sourceStore || !r.sourceReturnId) return 'refused';
  const shop = await shopConnection(deps, sourceStore);
  try {
    const platform = deps.platforms(shop.platform);
    const done = await platform.cancelReturn(shop, job.sourceOrderId!, r.sourceReturnId, `return-cancel:${r.id}`);
    return done === 'unsupported' ? 'refused' : 'cancelled';
  } catch (error) {
    return classify(error, 'internal error while cancelling the return').kind === 'permanent' ? 'refused' : 'retry';
  }
};

/**
 * Writes one return's new state (read again after a lost race); true when written. `change` answers
 * null to leave the return as the read found it: nothing is written.
 */
const updateReturn = async (job: SyncJob, id: string, change: (r: JobReturn) => JobReturn | null) => {
  let written = false;
  await onJob(job, 'its return was sent', async (read) => {
    const next = await afterSaleToChange(read);
    const changed = next.returns.find((r) => r.id === id);
    const into = changed && change(changed);
    if (!into) return undefined;
    next.returns = next.returns.map((r) => (r.id === id ? into : r));
    const out = await keepAfterSale(read, withCredit(next, await linesById(read)));
    if (isLost(out)) return out;
    written = true;
    return undefined;
  });
  return written;
};

const auditOpened = async (job: SyncJob, r: JobReturn, sourceReturnId: string) => {
  await recordAuditEntry({
    id: derivedId('aud', job.id, 'sync_job.return_opened', r.id),
    action: 'sync_job.return_opened',
    job,
    actor: SYSTEM,
    metadata: { returnId: r.id, resellerReturnId: r.resellerReturnId, sourceReturnId },
  });
};

/**
 * Where the platform takes no key (Shopify), the create of a return is claimed by one message before
 * it is sent (`sentAt`, `sentBy`, conditional on the job as read again): two messages of one return (a
 * webhook's redelivery, a poll, met in flight) would each open one, a lookup by marker finding neither
 * while both creates are on their way. Another message's claim within the lease: this one leaves the
 * return to it. This message's own (its redelivery after a crash): it sends again, looking first. A claim
 * past the lease (its message gone): taken over, looking first. True when this message sends it.
 */
const claimSend = async (job: SyncJob, r: JobReturn, messageId: string) => {
  const leaseMs = config.leaseSeconds() * 1000;
  // A claim with no `sentBy` (written before claims had one) is taken as this message's: looked up, sent.
  const heldByAnother = (was: JobReturn) =>
    was.sentAt !== null &&
    was.sentBy !== undefined &&
    was.sentBy !== messageId &&
    Date.now() - Date.parse(was.sentAt) < leaseMs;
  if (heldByAnother(r)) return false;
  if (r.sentAt !== null && (r.sentBy === undefined || r.sentBy === messageId)) return true;
  return updateReturn(job, r.id, (was) =>
    was.status !== 'pending' || heldByAnother(was) ? null : { ...was, sentAt: now(), sentBy: messageId },
  );
};

/**
 * One pending return opened (or failed). Where the platform takes no key (Shopify), it is claimed
 * first (`claimSend`), so that only one message sends it and a later try looks for it before opening
 * another; with a key, the key is enough.
 */
const sendOne = async (deps: Deps, job: SyncJob, r: JobReturn, messageId: string): Promise<'done' | 'retry'> => {
  const sentAt = r.sentAt ?? now();
  const sourceStore = await loadSourceStore(job.sourceStoreId);
  if (!sourceStore) {
    await updateReturn(job, r.id, (was) => endReturn(was, 'failed', 'the source store is gone'));
    return 'done';
  }
  const keyed = deps.platforms(sourceStore.platform).takesIdempotencyKeys;
  if (!keyed && !(await claimSend(job, r, messageId))) {
    logger.info('another message of this return holds its create (or it is no longer pending): left to it');
    return 'done';
  }
  const outcome = await openOnSupplier(deps, job, { ...r, sentAt: r.sentAt }, sourceStore);
  if (outcome === 'retry') return 'retry';
  if (outcome.kind === 'failed') {
    await updateReturn(job, r.id, (was) => endReturn(was, 'failed', outcome.reason));
    logger.warn('the supplier refused the return', { reason: outcome.reason });
    return 'done';
  }
  const sourceReturnId = outcome.found.id;
  await auditOpened(job, r, sourceReturnId);
  await updateReturn(job, r.id, (was) => ({ ...was, sentAt, status: 'open', sourceReturnId, openedAt: now() }));
  logger.info('return opened on the supplier', { returnId: r.id });
  return 'done';
};

/**
 * A `purpose: 'return'` message: each pending return of the job is opened on the supplier (at most
 * one per reseller return and job), each open one the reseller cancelled is cancelled there.
 */
export const sendReturns = async (deps: Deps, job: SyncJob, messageId: string): Promise<'done' | 'retry'> => {
  if (job.status !== 'completed' || !job.sourceOrderId) return 'done';
  for (const r of job.afterSale?.returns ?? []) {
    if (r.status === 'pending' && (await sendOne(deps, job, r, messageId)) === 'retry') return 'retry';
    if (r.status !== 'open' || !r.cancelRequested) continue;
    const cancelled = await cancelOnSupplier(deps, job, r);
    if (cancelled === 'retry') return 'retry';
    if (cancelled === 'cancelled') await updateReturn(job, r.id, (was) => endReturn(was, 'cancelled'));
    else {
      await updateReturn(job, r.id, (was) => ({ ...was, cancelRequested: undefined }));
      await needsAttention(job, ATTENTION.cancelRefused);
    }
  }
  return 'done';
};

/** A return message that used up its receives: its returns `failed`, the job says so. */
export const returnsGaveUp = (job: SyncJob) =>
  needsAttention(job, 'a return could not be opened on the supplier: every attempt failed');
