import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent } from 'aws-lambda';
import { lambdaHandler } from '../shared/core/lambda-handler.js';
import { metricsMiddleware } from '../shared/core/metrics.js';
import { processDeadSyncMessage } from '../shared/sync-jobs/dead-letter.js';

const processor = new BatchProcessor(EventType.SQS);

/** A message SQS gave up on: its job (if this is still its current enqueue) becomes `dead`. */
export const handler = lambdaHandler(
  (event: SQSEvent, context) => processPartialResponse(event, processDeadSyncMessage, processor, { context }),
  metricsMiddleware(),
);
