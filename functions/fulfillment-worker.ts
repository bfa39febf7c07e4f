import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { cipher } from '../shared/aws/cipher.js';
import { lambdaHandler } from '../shared/core/lambda-handler.js';
import { metricsMiddleware } from '../shared/core/metrics.js';
import { processFulfillmentMessage } from '../shared/fulfillments/worker.js';
import { adapterFor } from '../shared/platforms/adapters.js';

const deps = { cipher, platforms: adapterFor };
const processor = new BatchProcessor(EventType.SQS);

const deliver = async (record: SQSRecord) => {
  if ((await processFulfillmentMessage(deps, record)) === 'retry')
    throw new Error('fulfillment failed; left for SQS to deliver again');
};

/** The fulfillment queue's consumer: each failed message is reported on its own (ReportBatchItemFailures). */
export const handler = lambdaHandler(
  (event: SQSEvent, context) => processPartialResponse(event, deliver, processor, { context }),
  metricsMiddleware(),
);
