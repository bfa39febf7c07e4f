import type { SQSRecord } from 'aws-lambda';
import type { Deps } from '../aws/deps.js';
import { now } from '../core/ids.js';
import { addLogContext, logger, withLogContext } from '../core/logger.js';
import { gaveUpReason } from '../core/work-policy.js';
import { isOpen } from '../domain/sync-job-status.js';
import type { AttemptEnd } from '../order/attempt.js';
import { failedAttemptsOf } from '../order/attempt.js';
import { jobLogContext } from '../order/sync-job.js';
import { cancellationGaveUp } from './cancel.js';
import { updateGaveUp } from './edit.js';
import { endJob, mayHaveBeenPlaced } from './end.js';
import { type JobMessage, messageLogContext, parseJobMessage } from './message.js';
import { loadJob } from './sync-jobs.js';

/**
 * A sync message SQS gave up on after `maxReceiveCount` receives. If it is still its job's current
 * message and its attempts failed, the job ends: `dead` with the last failure's reason and a
 * `sync_job.dead` audit entry, unless the supplier has the order (then `completed`). A stale
 * message (the job was retried, deferred or re-sent since, or has ended) changes nothing.
 *
 * Receives that never reached an outcome (a throttled Lambda, a worker that died) are not
 * attempts: a message whose receives were all of that kind does not make its job dead. The job
 * stays open, and the reconciler sends it a new message once its lease is up. Every line names the
 * job, its order and the request that sent the message.
 */
export const processDeadSyncMessage = async (deps: Deps, received: SQSRecord) => {
  const message = parseJobMessage(received.body);
  if (!message) return logger.error('malformed message in the sync DLQ', { messageId: received.messageId });
  await withLogContext(messageLogContext(message), () => endFromDeadMessage(deps, message));
};

const endFromDeadMessage = async (deps: Deps, message: JobMessage) => {
  const job = await loadJob(message.jobId, true);
  if (job) addLogContext(jobLogContext(job));
  // A cancellation of a placed order that kept failing: the job needs a person (cancel.ts).
  if (message.purpose === 'cancel') {
    if (job?.generation === message.generation && job.cancellation?.status === 'requested') {
      await cancellationGaveUp(job);
    }
    return;
  }
  if (message.purpose === 'update') {
    if (job?.status === 'completed' && job.orderEdits && job.orderEdits.sentAt !== job.orderEdits.updatedAt) {
      await updateGaveUp(job);
    }
    return;
  }
  if (!job || job.generation !== message.generation || !isOpen(job.status))
    return logger.info('stale DLQ message ignored', { generation: message.generation });

  const attempts = failedAttemptsOf(job.attemptLog, job.generation);
  if (!attempts)
    return logger.warn('no attempt of this message reached an outcome; left to the reconciler', {
      generation: message.generation,
    });
  // The last failure's reason stays the headline: it is what the on-call engineer needs.
  const reason = gaveUpReason(job.errorMessage, attempts);
  const attempt: AttemptEnd = {
    trigger: 'redelivery',
    outcome: 'dead',
    platformStatus: null,
    errorMessage: reason,
    startedAt: now(),
  };
  const ended = await endJob(deps, job, reason, attempt, { lookUp: mayHaveBeenPlaced(job) });
  // The supplier could not say whether it has the order: this message comes back, and asks again.
  if (ended === 'unknown') throw new Error(`job ${job.id}: the supplier could not be asked for its order`);
  logger.warn('sync DLQ message ended its job', { ended, reason });
};
