import type { SQSRecord } from 'aws-lambda';
import type { Deps } from '../aws/deps.js';
import { now } from '../core/ids.js';
import { addLogContext, logger, withLogContext } from '../core/telemetry.js';
import { isOpen } from '../domain/orders.js';
import { type DeadLetterKind, deadLetterParsed } from '../work/dead-letter.js';
import { openDoor, type QueueDoor } from '../work/runner.js';
import { cancellationGaveUp, updateGaveUp } from './changing.js';
import { loadJob } from './order-repository.js';
import { type AttemptEnd, failedAttemptsOf, jobLogContext, type SyncJob } from './order-sync-job.js';
import {
  endJob,
  type JobMessage,
  mayHaveBeenPlaced,
  messageLogContext,
  parseSyncQueueMessage,
  type SyncQueueMessage,
} from './placing.js';
import { needsSending, removalGaveUp, returnsGaveUp } from './refunding.js';

/**
 * A sync message SQS gave up on after `maxReceiveCount` receives (shared/work/dead-letter.ts). If it
 * is still its job's current message and its attempts failed, the job ends: `dead` with the last
 * failure's reason and a `sync_job.dead` audit entry, unless the supplier has the order (then
 * `completed`). A stale message (the job was retried, deferred or re-sent since, or has ended)
 * changes nothing.
 *
 * Receives that never reached an outcome (a throttled Lambda, a worker that died) are not
 * attempts: a message whose receives were all of that kind does not make its job dead. The job
 * stays open, and the reconciler sends it a new message once its lease is up.
 */
export const processDeadSyncMessage = (deps: Deps, received: SQSRecord) => openDoor(deadSyncDoor, deps, received);

/** The job a message names, read consistently, in the log context once read. */
const jobOf = async (message: JobMessage) => {
  const job = await loadJob(message.jobId, true);
  if (job) addLogContext(jobLogContext(job));
  return job;
};

/**
 * A change of a placed order that kept failing (its message used up its receives): if the job still
 * waits for it (`waits`), the job needs a person (`gaveUp`: changing.ts, refunding.ts,
 * refunding.ts). Otherwise it went through meanwhile, or another message ended it: nothing changes.
 */
const changeGaveUp =
  (waits: (job: SyncJob, message: JobMessage) => boolean, gaveUp: (job: SyncJob) => Promise<unknown>) =>
  (_deps: Deps, { message }: { message: JobMessage }) =>
    withLogContext(messageLogContext(message), async () => {
      const job = await jobOf(message);
      if (!job || !waits(job, message)) return logger.info('stale DLQ message ignored');
      await gaveUp(job);
    });

/**
 * The sync DLQ's door (shared/work/runner.ts): each kind of the sync queue's one message type, parsed
 * once, to its end. A placement ends its job (below); a change of a placed order that kept failing
 * leaves the job to a person; a release left over is the reconciler's (`watchHeld` sends a delay long
 * over a new one).
 */
const deadSyncDoor: QueueDoor<SyncQueueMessage, Deps, void> = {
  queue: 'sync DLQ',
  parse: parseSyncQueueMessage,
  malformed: undefined,
  handlers: {
    place: (deps, { message }) => deadLetterParsed(deadSyncJobs, deps, message),
    cancel: changeGaveUp(
      (job, message) => job.generation === message.generation && job.cancellation?.status === 'requested',
      cancellationGaveUp,
    ),
    update: changeGaveUp(
      (job) => job.status === 'completed' && !!job.orderEdits && job.orderEdits.sentAt !== job.orderEdits.updatedAt,
      updateGaveUp,
    ),
    remove: changeGaveUp(
      (job) => job.status === 'completed' && job.afterSale?.removal?.status === 'requested',
      removalGaveUp,
    ),
    return: changeGaveUp(
      (job) => job.status === 'completed' && (job.afterSale?.returns ?? []).some(needsSending),
      returnsGaveUp,
    ),
    release: async (_deps, { message }) =>
      withLogContext(messageLogContext(message), async () => {
        logger.warn('a release message used up its receives; the reconciler sends the held order another');
      }),
  },
};

const deadSyncJobs: DeadLetterKind<JobMessage, SyncJob> = {
  words: { item: 'job', queue: 'sync' },
  messageContext: messageLogContext,
  itemContext: jobLogContext,
  current: async (message) => {
    const job = await jobOf(message);
    return job?.generation === message.generation && isOpen(job.status) ? job : undefined;
  },
  failedAttempts: (job) => failedAttemptsOf(job.attemptLog, job.generation),
  lastError: (job) => job.errorMessage,
  untriedToReconciler: true,
  end: (deps, job, reason) => {
    const attempt: AttemptEnd = {
      trigger: 'redelivery',
      outcome: 'dead',
      platformStatus: null,
      errorMessage: reason,
      startedAt: now(),
    };
    return endJob(deps, job, reason, attempt, { lookUp: mayHaveBeenPlaced(job) });
  },
};
