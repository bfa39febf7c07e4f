import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '../shared/core/logger.js';
import { killJob } from '../shared/sync-jobs/sync-jobs.js';
import { parseJobMessage } from '../shared/sync-jobs/message.js';

const processor = new BatchProcessor(EventType.SQS);

/** A message SQS gave up on: its job (if this is still its current enqueue) becomes `dead`. */
const markDead = async (record: SQSRecord) => {
  const message = parseJobMessage(record.body);
  if (!message) return logger.error('malformed message in the sync DLQ', { messageId: record.messageId });
  // The last failure's reason stays the headline: it is what the on-call engineer needs.
  const killed = await killJob(message, (job) =>
    [job.errorMessage, `gave up after ${job.attempts} attempts`].filter(Boolean).join('; '),
  );
  if (!killed) logger.info('stale DLQ message ignored', { ...message });
};

export const handler = (event: SQSEvent, context: Context) =>
  processPartialResponse(event, markDead, processor, { context });
