import type { SQSRecord } from 'aws-lambda';
import { addLogContext, logger, withLogContext } from '../core/logger.js';
import { isOpen } from '../domain/sync-job-status.js';
import { messageLogContext, parseJobMessage } from './message.js';
import { killJob, loadJob } from './sync-jobs.js';

/**
 * A sync message SQS gave up on after `maxReceiveCount` receives: its job, if this is still its
 * current message, becomes `dead` with a `sync_job.dead` audit entry. A stale message (the job
 * was retried, deferred or re-sent since, or has ended) changes nothing. Every line names the job,
 * its order and the request that sent the message.
 */
export const processDeadSyncMessage = async (record: SQSRecord) => {
  const message = parseJobMessage(record.body);
  if (!message) return logger.error('malformed message in the sync DLQ', { messageId: record.messageId });
  await withLogContext(messageLogContext(message), async () => {
    const job = await loadJob(message.jobId, true);
    if (job) addLogContext({ resellerStoreId: job.resellerStoreId, externalOrderId: job.externalOrderId });
    if (!job || job.generation !== message.generation || !isOpen(job.status))
      return logger.info('stale DLQ message ignored', { generation: message.generation });
    // The last failure's reason stays the headline: it is what the on-call engineer needs.
    const reason = [job.errorMessage, `gave up after ${job.attempts} attempts`].filter(Boolean).join('; ');
    if (await killJob(job, reason)) logger.warn('sync job is dead: its receives ran out', { reason });
    else logger.info('job moved before the DLQ handler could end it', { generation: message.generation });
  });
};
