import type { SQSRecord } from 'aws-lambda';
import { logger } from '../core/logger.js';
import { parseJobMessage } from './message.js';
import { killJob } from './sync-jobs.js';

/**
 * A sync message SQS gave up on after `maxReceiveCount` receives: its job, if this is still its
 * current enqueue, becomes `dead` with a `sync_job.dead` audit entry. A stale message (the job
 * was retried or settled since) changes nothing.
 */
export const processDeadSyncMessage = async (record: SQSRecord) => {
  const message = parseJobMessage(record.body);
  if (!message) return logger.error('malformed message in the sync DLQ', { messageId: record.messageId });
  // The last failure's reason stays the headline: it is what the on-call engineer needs.
  const killed = await killJob(message, (job) =>
    [job.errorMessage, `gave up after ${job.attempts} attempts`].filter(Boolean).join('; '),
  );
  if (!killed) logger.info('stale DLQ message ignored', { ...message });
};
