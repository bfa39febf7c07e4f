import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { lambdaHandler } from '../shared/core/lambda-handler.js';
import { metricsMiddleware } from '../shared/core/metrics.js';
import { processDeadFulfillmentMessage } from '../shared/fulfillments/dead-letter.js';

const processor = new BatchProcessor(EventType.SQS);

/** A fulfillment message SQS gave up on: put back later while the reseller may recover, else `dead` on its job. */
const giveUpOrRedrive = async (record: SQSRecord) => {
  await processDeadFulfillmentMessage(record);
};

export const handler = lambdaHandler(
  (event: SQSEvent, context) => processPartialResponse(event, giveUpOrRedrive, processor, { context }),
  metricsMiddleware(),
);
