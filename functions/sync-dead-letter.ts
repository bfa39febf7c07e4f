import type { SQSRecord } from 'aws-lambda';
import { sqsBatchHandler } from '../shared/aws/batch.js';
import { cipher } from '../shared/aws/kms-cipher.js';
import { lambdaHandler, metricsMiddleware } from '../shared/core/telemetry.js';
import { processDeadSyncMessage } from '../shared/order-flow/placing-dead-letter.js';
import { adapterFor } from '../shared/platforms/adapters.js';

// The supplier is asked for the order before a job is made dead (a lookup needs the shop's secrets).
const deps = { cipher, platforms: adapterFor };

const processOne = (received: SQSRecord) => processDeadSyncMessage(deps, received);

/** A message SQS gave up on: its job (if this is still its current message) ends, dead or found placed. */
export const handler = lambdaHandler(sqsBatchHandler(processOne), metricsMiddleware());
