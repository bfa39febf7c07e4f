import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { processDeadFulfillmentMessage } from '../shared/fulfillments/dead-letter.js';

const processor = new BatchProcessor(EventType.SQS);

/** A fulfillment message SQS gave up on: put back later while the reseller may recover, else `dead` on its job. */
const giveUpOrRedrive = async (record: SQSRecord) => {
  await processDeadFulfillmentMessage(record);
};

export const handler = (event: SQSEvent, context: Context) =>
  processPartialResponse(event, giveUpOrRedrive, processor, { context });
