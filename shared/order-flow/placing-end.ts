import type { Deps } from '../aws/deps.js';
import { legacySourceIdentifier, sameLines, sourceIdentifier } from '../domain/orders.js';
import { classify, type ShopConnection } from '../platforms/port.js';
import { shopConnection } from '../stores/connection.js';
import { loadSourceStore } from '../stores/stores.js';
import type { AttemptEnd, SyncJob } from './order-sync-job.js';
import { jobPlaced } from './placing-follow-ups.js';
import { killJob } from './placing-moves.js';
import { jobLineSummaries, sourceLinesOf } from './placing-supplier-order.js';

/**
 * A job is never `dead` while its supplier holds its order (CONTRACT.md §6). When a create call's
 * outcome is unknown, and before any job that may have been placed is made dead, the supplier is
 * asked for the order by its `source_identifier` (PLATFORM-API.md, "Lookups").
 */

export type LookupResult =
  | { kind: 'found'; orderId: string; lineItemIds?: string[] }
  | { kind: 'absent' }
  /** The lookup itself failed; `refused` when it cannot heal (401, 404…), so there is no asking. */
  | { kind: 'unknown'; reason: string; refused: boolean };

/**
 * Asks the job's supplier whether it holds the job's order: by the `source_identifier` that names the
 * job, then, found none, by the one orders placed before carry (the reseller order only, shared by the
 * order's jobs on one shop). An order found by that one is taken only when its lines are the job's
 * (`sameLines`); when they differ, or the platform did not answer them, it is not: a job that takes
 * another job's order never places its own, a loss nobody sees, while one that answers absent at worst
 * sends its create again, which the idempotency key (storeplatform_a, custom) makes the same order.
 */
export const lookUpSupplierOrder = async (deps: Deps, shop: ShopConnection, job: SyncJob): Promise<LookupResult> => {
  try {
    const platform = deps.platforms(shop.platform);
    const found = await platform.findOrder(shop, sourceIdentifier(job.resellerShopDomain, job.externalOrderId, job.id));
    if (found) return { kind: 'found', orderId: found.orderId, lineItemIds: found.lineItemIds };
    const legacy = await platform.findOrder(shop, legacySourceIdentifier(job.resellerShopDomain, job.externalOrderId));
    if (!legacy || !sameLines((await jobLineSummaries(job)) ?? [], legacy.lines)) return { kind: 'absent' };
    return { kind: 'found', orderId: legacy.orderId, lineItemIds: legacy.lineItemIds };
  } catch (error) {
    const failure = classify(error, 'internal error while looking the order up');
    return { kind: 'unknown', reason: failure.reason, refused: failure.kind === 'permanent' };
  }
};

/** The reason of a completion found by lookup: what happened to the call, and that the order is there. */
export const foundReason = (reason: string) => `${reason}; the supplier has the order (found by its source_identifier)`;

/**
 * Whether an earlier attempt may have placed the order: one that failed (the supplier may have
 * acted before failing), or a claim that never recorded how it ended (its worker died mid-call).
 * Attempts the supplier refused (429, 401, 404, 422) placed nothing. `unrecorded`: the caller's own
 * attempt, claimed but not yet in the history.
 */
export const mayHaveBeenPlaced = (job: SyncJob, unrecorded = 0) => {
  const recorded = job.attemptLog.reduce((sum, attempt) => sum + attempt.count, 0);
  if (recorded + unrecorded < job.attempts) return true;
  return job.attemptLog.some((attempt) => attempt.outcome === 'failed');
};

/**
 * Whether an earlier attempt may have sent the create to a platform that takes no idempotency key
 * (storeplatform_b): one that may have placed it, or one answered THROTTLED, which PLATFORM-API.md
 * does not count as a definite answer. Such a job is looked up before the create is sent again.
 */
export const mayHaveBeenSent = (job: SyncJob) =>
  mayHaveBeenPlaced(job, 1) || job.attemptLog.some((attempt) => attempt.outcome === 'throttled');

export type EndResult = 'dead' | 'found' | 'unknown' | 'moved';

/**
 * Ends a job that cannot go on: `dead` with `reason`, unless the supplier has its order, in which
 * case it is completed (`found_existing`) and its kept fulfillments are released. When the order
 * may have been placed and the lookup cannot tell (throttled, down), nothing is written: `unknown`,
 * and the caller keeps the job going. `moved`: another writer moved the job first.
 */
export const endJob = async (
  deps: Deps,
  job: SyncJob,
  reason: string,
  attempt: AttemptEnd,
  options: { lookUp: boolean; shop?: ShopConnection },
): Promise<EndResult> => {
  if (options.lookUp) {
    const sourceStore = options.shop ? undefined : await loadSourceStore(job.sourceStoreId);
    const shop = options.shop ?? (sourceStore ? await shopConnection(deps, sourceStore) : undefined);
    const lookup = shop ? await lookUpSupplierOrder(deps, shop, job) : ({ kind: 'absent' } as const);
    if (lookup.kind === 'found') {
      const found = { ...attempt, outcome: 'found_existing' as const, errorMessage: foundReason(reason) };
      const placed = { orderId: lookup.orderId, lines: sourceLinesOf(undefined, lookup.lineItemIds) };
      const completed = await jobPlaced(deps, 'found', job, placed, found);
      return completed ? 'found' : 'moved';
    }
    if (lookup.kind === 'unknown' && !lookup.refused) return 'unknown';
  }
  return (await killJob(job, reason, attempt)) ? 'dead' : 'moved';
};
