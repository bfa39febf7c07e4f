import type { SQSRecord } from 'aws-lambda';
import type { Deps } from '../aws/deps.js';
import { now } from '../core/ids.js';
import { addLogContext } from '../core/telemetry.js';
import { isOpen } from '../domain/orders.js';
import { type DeadLetterKind, runDeadLetter } from '../work/dead-letter.js';
import { cancellationGaveUp } from './cancelling.js';
import { updateGaveUp } from './editing.js';
import { type AttemptEnd, failedAttemptsOf } from './order-attempt.js';
import { loadJob } from './order-repository.js';
import { jobLogContext, type SyncJob } from './order-sync-job.js';
import { endJob, mayHaveBeenPlaced } from './placing-end.js';
import { type JobMessage, messageLogContext, parseJobMessage } from './placing-message.js';

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
export const processDeadSyncMessage = (deps: Deps, received: SQSRecord) => runDeadLetter(deadSyncJobs, deps, received);

/** The job a message names, read consistently, in the log context once read. */
const jobOf = async (message: JobMessage) => {
  const job = await loadJob(message.jobId, true);
  if (job) addLogContext(jobLogContext(job));
  return job;
};

/**
 * A cancellation or an update of a placed order that kept failing: the job needs a person
 * (cancelling.ts, editing.ts).
 */
const changeGaveUp = async (message: JobMessage) => {
  const job = await jobOf(message);
  if (message.purpose === 'cancel') {
    if (job?.generation === message.generation && job.cancellation?.status === 'requested')
      await cancellationGaveUp(job);
    return;
  }
  if (job?.status === 'completed' && job.orderEdits && job.orderEdits.sentAt !== job.orderEdits.updatedAt) {
    await updateGaveUp(job);
  }
};

const deadSyncJobs: DeadLetterKind<JobMessage, SyncJob> = {
  words: { item: 'job', queue: 'sync' },
  parse: parseJobMessage,
  messageContext: messageLogContext,
  itemContext: jobLogContext,
  divert: (_deps, message) => (message.purpose ? changeGaveUp(message) : undefined),
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
