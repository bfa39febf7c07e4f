import type { SQSRecord } from 'aws-lambda';
import { sqsBatchHandler } from '../shared/aws/batch.js';
import { cipher } from '../shared/aws/cipher.js';
import { lambdaHandler } from '../shared/core/lambda-handler.js';
import { metricsMiddleware } from '../shared/core/metrics.js';
import { processFulfillmentMessage } from '../shared/fulfillments/worker.js';
import { adapterFor } from '../shared/platforms/adapters.js';

const deps = { cipher, platforms: adapterFor };

const deliver = async (received: SQSRecord) => {
  if ((await processFulfillmentMessage(deps, received)) === 'retry')
    throw new Error('fulfillment failed; left for SQS to deliver again');
};

/** The fulfillment queue's consumer: each failed message is reported on its own (ReportBatchItemFailures). */
export const handler = lambdaHandler(sqsBatchHandler(deliver), metricsMiddleware());
