import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent } from 'aws-lambda';
import { processDeadSyncMessage } from '../shared/sync-jobs/dead-letter.js';

const processor = new BatchProcessor(EventType.SQS);

/** A message SQS gave up on: its job (if this is still its current enqueue) becomes `dead`. */
export const handler = (event: SQSEvent, context: Context) =>
  processPartialResponse(event, processDeadSyncMessage, processor, { context });
