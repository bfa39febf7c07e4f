import type { Deps } from '../aws/deps.js';
import { withRereads } from '../core/concurrency.js';
import { derivedId, now, syncJobId } from '../core/ids.js';
import { logger } from '../core/telemetry.js';
import { recordAuditEntry, SYSTEM } from '../entities/audit-entry.js';
import { classify, type OrderEditResult, type QuantityTarget } from '../platforms/port.js';
import { shopConnection } from '../stores/connection.js';
import { loadSourceStore } from '../stores/stores.js';
import { cancelOrderJob } from './cancelling.js';
import { type AfterSale, emptyAfterSale, lineAfterSale, type OrderRefund } from './order-after-sale.js';
import { type JobLine, jobLines, jobOrderReading } from './order-body.js';
import { isLost, keepAfterSale, type Lost, loadJob, loadRecord } from './order-repository.js';
import type { SyncJob } from './order-sync-job.js';
import { jobMessage } from './placing-message.js';
import { needsAttention } from './placing-moves.js';
import { enqueueJobs } from './placing-queue.js';
import type { Refund } from './refunding-request.js';
import { addReturnOf, sendReturnsIfPending } from './returning.js';

/**
 * The reseller's refunds (CONTRACT.md §15.1). Each refund is taken once per job (`afterSale.seen`),
 * whether it came by webhook, by poll or both. Units refunded with `restock_type` cancel leave the
 * supplier order: a job not placed yet places the smaller quantities; a placed one's supplier order
 * is edited to absolute quantities by the sync worker (`purpose: 'remove'`); nothing left of it, it
 * is cancelled as §10.4 says. `return` units open a return (returning.ts) unless the refund names
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
export const refundResellerOrder = async (
  reseller: { id: string },
  refund: Refund,
  requestId?: string,
): Promise<string[] | undefined> => {
  const firstJobId = syncJobId(reseller.id, refund.orderId, 0);
  const record = await loadRecord(firstJobId, true);
  // Only refunds or returns kept for it (order-early-after-sale.ts): the order is not known yet.
  if (record?.kind !== 'job') return record && record.kind !== 'earlyAfterSale' ? [] : undefined;
  const ids = record.job.orderJobIds ?? [record.job.id];
  for (const id of ids) {
    await withRereads(
      () => loadJob(id, true),
      async (job) => (job ? refundJob(job, refund, id === firstJobId, requestId) : undefined),
      `job ${id}, while a refund was recorded,`,
      id === firstJobId ? record.job : undefined,
    );
  }
  return ids;
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
