import type { Deps } from '../aws/deps.js';
import { logger } from '../core/telemetry.js';
import { completeJob, foundJob, type PlacedOrder } from './order-job-moves.js';
import { type FollowUp, MOVES, type MoveRule } from './order-repository.js';
import type { AttemptEnd, SyncJob } from './order-sync-job.js';
import type { JobMessage } from './placing-message.js';
import { releaseKeptFulfillments } from './propagating.js';
import { requestTag } from './tagging-queue.js';
import { type TagTried, tagNow } from './tagging-try.js';

/** What the moves' follow-ups learnt before the move's write: the tag's try, whose outcome the write records. */
interface Before {
  tag?: TagTried;
}

/**
 * The follow-ups of a job's moves, run from here alone: each move declares its own beside its rule
 * (`after`, order-repository.ts), and the moves that have any are written through this module, so
 * a new follow-up (a refund's, a service level's) is one word in the table and one line below.
 */
const FOLLOW_UPS: Record<FollowUp, (deps: Deps, job: SyncJob, before: Before, requestId?: string) => Promise<void>> = {
  releaseKeptFulfillments: (_deps, job) => releaseKeptFulfillments(job),
  // Tried at once before the write (`tagBefore`), which records it; its message only when that did not do (tagging.ts).
  requestTag: async (_deps, job, before, requestId) => {
    if (before.tag?.message ?? true) await requestTag(job, requestId);
  },
};

/**
 * What the follow-ups `move` declares try before its write: the reseller order's tag, tried at once
 * once the supplier order is placed, so that the completion's one conditional UpdateItem records
 * `tagged` (docs/performance.md, "Fewer calls per order"); a tag never fails the job.
 */
const tagBefore = async (deps: Deps, move: keyof typeof MOVES, job: SyncJob): Promise<Before> => {
  const rule: MoveRule = MOVES[move];
  return rule.after?.includes('requestTag') ? { tag: await tagNow(deps, job) } : {};
};

/** The follow-ups `move` declares, run in order for the job it wrote. */
const followUp = async (deps: Deps, move: keyof typeof MOVES, job: SyncJob, before: Before, requestId?: string) => {
  const rule: MoveRule = MOVES[move];
  for (const name of rule.after ?? []) await FOLLOW_UPS[name](deps, job, before, requestId);
};

/**
 * → completed with the supplier order (`complete`: the supplier answered the create; `found`: a lookup
 * found it), recording the reseller order's tag tried just before, then the move's follow-ups;
 * undefined when the job moved meanwhile (nothing follows).
 */
export const jobPlaced = async (
  deps: Deps,
  move: 'complete' | 'found',
  job: SyncJob,
  placed: PlacedOrder,
  attempt: AttemptEnd,
  requestId?: string,
) => {
  const before = await tagBefore(deps, move, job);
  const tagged = { ...placed, tagged: before.tag?.tagged };
  const completed = await (move === 'complete' ? completeJob : foundJob)(job, tagged, attempt);
  if (completed) await followUp(deps, move, completed, before, requestId);
  return completed;
};

/**
 * A message of the try that placed its job, back after its worker died between the completion's write
 * and the tag's message (the tag left to it: its try failed, or came too late; or the send failed):
 * the tag is asked for again. A message of an older
 * generation, or a job tagged already, asks nothing.
 */
export const tagIfPlacedUntagged = async (met: SyncJob | undefined, message: JobMessage) => {
  if (met?.status !== 'completed' || met.generation !== message.generation || met.tagged != null) return;
  // Its message: the claim that met the job has no platform in hand (and a redelivery is rare).
  await requestTag(met, message.requestId);
  logger.info('a message of a placed job came back; its reseller order tag asked for again');
};
