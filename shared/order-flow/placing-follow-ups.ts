import type { Deps } from '../aws/deps.js';
import { logger } from '../core/telemetry.js';
import type { AttemptEnd } from './order-attempt.js';
import { completeJob, foundJob, type PlacedOrder } from './order-job-moves.js';
import type { SyncJob } from './order-sync-job.js';
import { type FollowUp, MOVES, type MoveRule } from './order-transitions.js';
import type { JobMessage } from './placing-message.js';
import { releaseKeptFulfillments } from './propagating.js';
import { requestTag } from './tagging-queue.js';
import { tagNow } from './tagging-try.js';

/**
 * The follow-ups of a job's moves, run from here alone: each move declares its own beside its rule
 * (`after`, order-transitions.ts), and the moves that have any are written through this module, so
 * a new follow-up (a refund's, a service level's) is one word in the table and one line below.
 */
const FOLLOW_UPS: Record<FollowUp, (deps: Deps, job: SyncJob, requestId?: string) => Promise<void>> = {
  releaseKeptFulfillments: (_deps, job) => releaseKeptFulfillments(job),
  // Tried at once, in this invocation; its message only when that does not do (tagging.ts).
  requestTag: async (deps, job, requestId) => {
    if (!(await tagNow(deps, job))) await requestTag(job, requestId);
  },
};

/** The follow-ups `move` declares, run in order for the job it wrote. */
const followUp = async (deps: Deps, move: keyof typeof MOVES, job: SyncJob, requestId?: string) => {
  const rule: MoveRule = MOVES[move];
  for (const name of rule.after ?? []) await FOLLOW_UPS[name](deps, job, requestId);
};

/**
 * → completed with the supplier order (`complete`: the supplier answered the create; `found`: a lookup
 * found it), then the move's follow-ups; undefined when the job moved meanwhile (nothing follows).
 */
export const jobPlaced = async (
  deps: Deps,
  move: 'complete' | 'found',
  job: SyncJob,
  placed: PlacedOrder,
  attempt: AttemptEnd,
  requestId?: string,
) => {
  const completed = await (move === 'complete' ? completeJob : foundJob)(job, placed, attempt);
  if (completed) await followUp(deps, move, completed, requestId);
  return completed;
};

/**
 * A message of the try that placed its job, back after its worker died between the completion's write
 * and the tag's message (or the send failed): the tag is asked for again. A message of an older
 * generation, or a job tagged already, asks nothing.
 */
export const tagIfPlacedUntagged = async (met: SyncJob | undefined, message: JobMessage) => {
  if (met?.status !== 'completed' || met.generation !== message.generation || met.tagged != null) return;
  // Its message: the claim that met the job has no platform in hand (and a redelivery is rare).
  await requestTag(met, message.requestId);
  logger.info('a message of a placed job came back; its reseller order tag asked for again');
};
