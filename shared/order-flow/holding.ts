import type { MessageOutcome } from '../aws/batch.js';
import type { Deps } from '../aws/deps.js';
import { config } from '../core/config.js';
import { InvalidStateError } from '../core/errors.js';
import { now, syncJobId } from '../core/ids.js';
import { BUSINESS_METRICS, countHeld, countMetric, latencyMetric, logger } from '../core/telemetry.js';
import type { Owner } from '../domain/owner.js';
import { type Hold, type HoldReason, judgeAgain, type OrderFacts } from '../domain/routing.js';
import { type Actor, auditPut } from '../entities/audit-entry.js';
import type { ResellerStore } from '../entities/store.js';
import { classify, MAX_DEFERRAL_SECONDS, type OrderRead, secondsUntil } from '../platforms/port.js';
import { shopConnection } from '../stores/connection.js';
import { loadResellerStore } from '../stores/stores.js';
import { cancelNow, editResellerOrder } from './changing.js';
import { HOLD_EXPIRED, holdRequest, releaseRequest } from './order-job-moves.js';
import { isLost, loadJob, loadJobs, moveItem, moveJob, updateJobWith } from './order-repository.js';
import type { SyncJob } from './order-sync-job.js';
import { enqueueJobs, type JobMessage, jobMessage, needsAttention } from './placing.js';
import { findSyncJob } from './reading.js';

/**
 * Held jobs (CONTRACT.md §11, docs/design.md "Held jobs"): an order's jobs created `pending` with a
 * `hold`, which the claim refuses, so nothing reaches a supplier while one stands. A hold ends by:
 * - its delay's end: one `release` message per order, sent with the order (hops of at most SQS's 15
 *   minutes, as a long Retry-After), whose handler reads the order again from the reseller's platform,
 *   once, and judges every held job of the order on what it read;
 * - the platform's word: an `orders/updated` or a poll judges the payment, risk and test holds again;
 * - an operator: `POST /v1/sync_jobs/{id}/release`;
 * - the order's cancellation (changing.ts): a held job has never been tried, so it is `cancelled` at once.
 * A released job takes a new generation and its one message, as a retried job does.
 */

/** The trigger a released job's attempt records: how its order came. */
const triggerOf = (job: SyncJob) => (job.receivedVia === 'poll' ? 'poll' : 'webhook');

/** Counts a new hold's reasons (one count per job and reason). */
export const countHolds = (hold: Hold, jobs: number) => {
  for (const reason of hold.reasons) countHeld(reason, jobs);
};

/**
 * Sends an order's release message, to arrive when the delay of `job` (any job of the order) ends:
 * at most 15 minutes at once; a longer delay carries `notBefore`, and each arrival before it is sent on.
 */
export const sendRelease = async (job: SyncJob, requestId?: string, afterSeconds?: number) => {
  const until = job.hold?.until ? Date.parse(job.hold.until) : Date.now();
  const waitSeconds = afterSeconds ?? Math.max(0, Math.ceil((until - Date.now()) / 1000));
  const message: JobMessage = {
    ...jobMessage(job, triggerOf(job), requestId, 'release'),
    ...(waitSeconds > MAX_DEFERRAL_SECONDS ? { notBefore: until } : {}),
  };
  await enqueueJobs([message], Math.min(waitSeconds, MAX_DEFERRAL_SECONDS));
};

/** The jobs of the order `job` belongs to, read from its first job's list. */
const orderJobs = async (job: SyncJob): Promise<SyncJob[]> => {
  const firstId = syncJobId(job.resellerStoreId, job.externalOrderId, 0);
  const first = job.id === firstId ? job : await loadJob(firstId, true);
  const ids = first?.orderJobIds ?? [job.id];
  const others = await loadJobs(ids.filter((id) => id !== first?.id));
  return [...(first ? [first] : []), ...others];
};

const isHeld = (job: SyncJob): job is SyncJob & { hold: Hold } => job.status === 'pending' && job.hold !== null;

/** Moves a held job on: released (its message sent) or held for what is left. Answers whether it was released. */
const applyJudgement = async (job: SyncJob & { hold: Hold }, next: Hold | null, requestId?: string) => {
  if (next === null) return (await releaseNow(job, requestId)) !== undefined;
  if (JSON.stringify(next) !== JSON.stringify(job.hold)) await moveJob(holdRequest(job, next));
  return false;
};

/** A held job released and sent its message; undefined when it moved meanwhile. */
const releaseNow = async (job: SyncJob & { hold: Hold }, requestId?: string) => {
  const released = await moveJob(releaseRequest(job));
  if (!released || isLost(released)) return undefined;
  countReleased(job);
  await enqueueJobs([jobMessage(released, triggerOf(job), requestId)]).catch((error: Error) =>
    logger.error('enqueue after a release failed; the reconciler will send it', { jobId: job.id, error: error.name }),
  );
  return released;
};

const countReleased = (job: SyncJob) => {
  countMetric(BUSINESS_METRICS.jobsReleased);
  latencyMetric(BUSINESS_METRICS.receiptToReleaseLatency, Date.now() - Date.parse(job.createdAt));
};

/** What the release learnt of the order from its platform. */
type Reading =
  | { kind: 'found'; read: OrderRead }
  | { kind: 'gone' }
  /** Not read (custom, or a refusal): judged on the webhooks alone, the delay dropped. */
  | { kind: 'unread' }
  | { kind: 'later' };

/** The order read again from the reseller's platform (PLATFORM-API.md, "Before the order goes"). */
const readAgain = async (deps: Deps, reseller: ResellerStore | undefined, externalOrderId: string) => {
  if (!reseller) return { kind: 'unread' } as const;
  try {
    const shop = await shopConnection(deps, reseller);
    const result = await deps.platforms(shop.platform).readOrder(shop, externalOrderId);
    if (result.kind === 'found') return { kind: 'found', read: result.order } as const;
    return result.kind === 'not_found' ? ({ kind: 'gone' } as const) : ({ kind: 'unread' } as const);
  } catch (error) {
    const failure = classify(error, 'internal error while reading the order');
    if (failure.kind !== 'permanent') {
      logger.warn('the order could not be read again; its release is tried later', { reason: failure.reason });
      return { kind: 'later' } as const;
    }
    logger.warn('the platform refused to read the order again: judged on its webhooks', { reason: failure.reason });
    return { kind: 'unread' } as const;
  }
};

const factsOf = (read: OrderRead): OrderFacts => ({
  financialStatus: read.financialStatus,
  riskRecommendation: read.riskRecommendation,
  test: read.test,
});

/** A hold without its delay, once the delay is over: what a release judges when the order could not be read. */
const withoutEndedDelay = (hold: Hold, at: string): Hold | null => {
  const delayed = hold.until !== null && Date.parse(hold.until) > Date.parse(at);
  const reasons = hold.reasons.filter((reason) => reason !== 'delay' || delayed);
  return reasons.length ? { ...hold, reasons, until: delayed ? hold.until : null } : null;
};

/** The order's held jobs cancelled (no supplier call: none was ever tried), with the reason. */
const cancelHeld = async (jobs: SyncJob[], reason: string) => {
  const at = now();
  for (const job of jobs.filter(isHeld)) {
    await cancelNow(job, { requestedBy: 'reseller', status: 'requested', reason, requestedAt: at, endedAt: null });
  }
  logger.info('held jobs cancelled', { reason });
};

/**
 * A `purpose: 'release'` message: the delay of the order's jobs has ended (or a hop of it). The order is
 * read again once, its edits kept (the jobs place the order as it is now), and every held job of the
 * order judged on it: released, held for what still applies, or cancelled (`order_deleted`) when the
 * platform no longer has the order.
 */
export const releaseAfterDelay = async (deps: Deps, message: JobMessage): Promise<MessageOutcome> => {
  const job = await loadJob(message.jobId, true);
  if (!job) return 'done';
  const early = secondsUntil(message.notBefore);
  if (early > 0) {
    await enqueueJobs([message], Math.min(early, MAX_DEFERRAL_SECONDS));
    logger.info('held order still in its delay; release message sent on', { waitSeconds: early });
    return 'done';
  }
  const jobs = (await orderJobs(job)).filter(isHeld);
  const delayed = jobs.filter((held) => held.hold.reasons.includes('delay') && held.hold.until !== null);
  if (!delayed.length) return 'done'; // released, cancelled or placed meanwhile: nothing to do
  const latest = delayed.reduce((a, b) => (Date.parse(a.hold.until!) >= Date.parse(b.hold.until!) ? a : b));
  if (secondsUntil(Date.parse(latest.hold.until!)) > 0) {
    await sendRelease(latest, message.requestId);
    return 'done';
  }
  return judgeOrder(deps, job, message.requestId);
};

/** The order of `job` read again and its held jobs judged on it (the end of a delay). */
const judgeOrder = async (deps: Deps, job: SyncJob, requestId?: string): Promise<MessageOutcome> => {
  const reseller = await loadResellerStore(job.resellerStoreId);
  const reading: Reading = await readAgain(deps, reseller, job.externalOrderId);
  if (reading.kind === 'later') {
    await sendRelease(job, requestId, config.backoffSeconds()[0]);
    return 'done';
  }
  if (reading.kind === 'gone') {
    await cancelHeld(await orderJobs(job), 'order_deleted');
    return 'done';
  }
  if (reading.kind === 'found' && reading.read.cancelledAt !== null) {
    await cancelHeld(await orderJobs(job), 'order_cancelled');
    return 'done';
  }
  if (reading.kind === 'found' && reseller) {
    // The order as it is now goes to the suppliers: its edits are kept on every job (changing.ts).
    const body = Buffer.from(JSON.stringify(reading.read.payload));
    await editResellerOrder(reseller, body, reading.read.updatedAt ?? now(), requestId);
  }
  const at = now();
  const policy = reseller?.routingPolicy;
  let released = 0;
  for (const held of (await orderJobs(job)).filter(isHeld)) {
    const next =
      reading.kind === 'found' && policy
        ? judgeAgain(policy, held.hold, factsOf(reading.read), at)
        : withoutEndedDelay(held.hold, at);
    if (await applyJudgement(held, next, requestId)) released++;
  }
  logger.info('held order judged after its delay', { read: reading.kind, released });
  return 'done';
};

/**
 * The platform's new word on an order (an `orders/updated`, a poll that saw it changed): its held jobs'
 * payment, risk and test holds judged again (a delay, or an operator's hold, stays). The reseller store
 * is read only for an order with a held job. Answers how many were released.
 */
export const judgeHeldAgain = async (
  resellerStoreId: string,
  externalOrderId: string,
  facts: OrderFacts,
  requestId?: string,
) => {
  const first = await loadJob(syncJobId(resellerStoreId, externalOrderId, 0), true);
  if (!first) return 0;
  const held = (await orderJobs(first)).filter(isHeld);
  const reseller = held.length ? await loadResellerStore(resellerStoreId) : undefined;
  if (!reseller) return 0;
  const at = now();
  let released = 0;
  for (const job of held) {
    // A webhook that carries no risk recommendation leaves a risk hold as it was judged.
    const known: OrderFacts = {
      ...facts,
      riskRecommendation: facts.riskRecommendation ?? (job.hold.reasons.includes('risk') ? 'cancel' : null),
    };
    if (await applyJudgement(job, judgeAgain(reseller.routingPolicy, job.hold, known, at), requestId)) released++;
  }
  if (released) logger.info('held jobs released by the platform’s word on the order', { released });
  return released;
};

// ---------- operators

const actorMetadata = (note: string | undefined) => (note === undefined ? {} : { note });

/**
 * `POST /v1/sync_jobs/{id}/hold` (CONTRACT.md §11): a `pending` job held (`manual`, beside any other
 * reason it has), with its `sync_job.held` audit entry in the same transaction; 409 `invalid_state` for
 * any other status. A job already held by an operator answers as it is.
 */
export const holdByOperator = async (owner: Owner, id: string, actor: Actor, note?: string) => {
  const job = await findSyncJob(owner, id);
  if (job.status !== 'pending')
    throw new InvalidStateError(`Only pending sync jobs can be held; this one is ${job.status}.`);
  if (job.hold?.reasons.includes('manual')) return job;
  const at = now();
  const reasons: HoldReason[] = [...(job.hold?.reasons ?? []), 'manual'];
  const hold: Hold = { reasons, since: job.hold?.since ?? at, until: job.hold?.until ?? null };
  const written = await updateJobWith(moveItem(holdRequest(job, hold)), [
    auditPut({ action: 'sync_job.held', job, actor, metadata: { reasons, ...actorMetadata(note) } }),
  ]);
  if (written !== true) {
    const current = written.met ?? (await loadJob(job.id, true));
    throw new InvalidStateError(`Only pending sync jobs can be held; this one is ${current?.status ?? 'unknown'}.`);
  }
  countHeld('manual', 1);
  return { ...job, hold, updatedAt: at };
};

/**
 * `POST /v1/sync_jobs/{id}/release`: every hold of a held job ended (an operator's decision overrides
 * them all), with its `sync_job.released` audit entry (the reasons ended) in the same transaction; the
 * job goes on at once. 409 `invalid_state` when it is not held.
 */
export const releaseByOperator = async (owner: Owner, id: string, actor: Actor, requestId?: string) => {
  const job = await findSyncJob(owner, id);
  if (!isHeld(job)) throw new InvalidStateError(`Only held sync jobs can be released; this one is not held.`);
  const request = releaseRequest(job);
  const written = await updateJobWith(moveItem(request), [
    auditPut({ action: 'sync_job.released', job, actor, metadata: { reasons: job.hold.reasons } }),
  ]);
  if (written !== true) throw new InvalidStateError(`Only held sync jobs can be released; this one is not held.`);
  countReleased(job);
  const released: SyncJob = {
    ...job,
    hold: null,
    attention: job.attention?.reason === HOLD_EXPIRED ? null : job.attention,
    generation: job.generation + 1,
    updatedAt: request.at,
  };
  await enqueueJobs([jobMessage(released, triggerOf(job), requestId)]).catch((error: Error) =>
    logger.error('enqueue after a release failed; the reconciler will send it', { jobId: job.id, error: error.name }),
  );
  return released;
};

// ---------- the reconciler's part

/**
 * A held job as the reconciler sees it: past MAX_HOLD_SECONDS it gets `attention` `hold_expired` (and
 * stays held); a delay long over whose release message was lost gets a new one. Answers what it did.
 */
export const watchHeld = async (job: SyncJob, leaseSeconds: number, at = Date.now()) => {
  if (!isHeld(job)) return undefined;
  if (!job.attention && at - Date.parse(job.hold.since) > config.maxHoldSeconds() * 1000) {
    if (await needsAttention(job, HOLD_EXPIRED)) {
      countMetric(BUSINESS_METRICS.holdsExpired);
      logger.warn('sync job held past MAX_HOLD_SECONDS: it needs a person', { reasons: job.hold.reasons });
      return 'expired';
    }
  }
  const until = job.hold.until ? Date.parse(job.hold.until) : undefined;
  if (job.hold.reasons.includes('delay') && until !== undefined && at - until > leaseSeconds * 1000) {
    await sendRelease(job);
    logger.warn('held job past its delay sent a new release message');
    return 'release_resent';
  }
  return undefined;
};
