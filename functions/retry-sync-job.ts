import { logger } from '../shared/core/logger.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentSyncJob } from '../shared/http/present.js';
import { ok } from '../shared/http/types.js';
import { jobMessage } from '../shared/sync-jobs/message.js';
import { enqueueJobs } from '../shared/sync-jobs/queue.js';
import { retryJob } from '../shared/sync-jobs/sync-jobs.js';

export const handler = idempotentApiHandler(async ({ ownerId, keyId, path, requestId }) => {
  const job = await retryJob(ownerId, path.id, { type: 'api_key', id: keyId ?? 'unknown' });
  // The job is open again, so the reconciler watches it: a failed send delays it but never loses it.
  await enqueueJobs([jobMessage(job, 'retry', requestId)]).catch((error: Error) =>
    logger.error('enqueue after retry failed; the reconciler will send it', { jobId: job.id, error: error.name }),
  );
  return ok(presentSyncJob(job));
});
