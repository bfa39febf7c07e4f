import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqs, sqsDelay } from '../aws/sqs.js';
import { config } from '../core/config.js';
import type { Tracking } from '../platforms/port.js';

/**
 * What a fulfillment-queue message carries: which job's reseller order gets which source
 * fulfillment, with its tracking. `redrives` counts the times the dead-letter handler has put it
 * back on the queue after a reseller outage outlasted `maxReceiveCount` receives.
 */
export interface FulfillmentMessage {
  jobId: string;
  sourceFulfillmentId: string;
  tracking: Tracking;
  redrives?: number;
  /** The `request_id` of the fulfillments webhook that sent it, for the worker's log lines; optional. */
  requestId?: string;
  /** Epoch ms before which it is not to be delivered: a 429's wait longer than one message delay. */
  notBefore?: number;
}

/**
 * A second look at a kept fulfillment, a while after it was kept: if its job completed around the
 * moment it was kept (the job's lookup index lags behind the completion), it is sent now.
 */
export interface RecheckMessage {
  recheck: { sourceStoreId: string; sourceOrderId: string; sourceFulfillmentId: string };
}

export const sendFulfillmentMessage = async (message: FulfillmentMessage | RecheckMessage, delaySeconds = 0) => {
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: config.fulfillmentQueueUrl(),
      MessageBody: JSON.stringify(message),
      DelaySeconds: sqsDelay(delaySeconds),
    }),
  );
};

const text = (value: unknown): value is string => typeof value === 'string';
const texts = (value: unknown): value is string[] => Array.isArray(value) && value.every(text);
const textOrNull = (value: unknown) => value === null || text(value);

const isTracking = (value: unknown): value is Tracking => {
  const t = value as Record<string, unknown> | null;
  return !!t && textOrNull(t.company) && textOrNull(t.number) && textOrNull(t.url) && texts(t.numbers) && texts(t.urls);
};

export const parseFulfillmentMessage = (body: string): FulfillmentMessage | undefined => {
  try {
    const parsed = JSON.parse(body);
    if (!text(parsed?.jobId) || !text(parsed?.sourceFulfillmentId) || !isTracking(parsed?.tracking)) return undefined;
    const redrives = Number.isInteger(parsed.redrives) ? (parsed.redrives as number) : 0;
    return {
      jobId: parsed.jobId,
      sourceFulfillmentId: parsed.sourceFulfillmentId,
      tracking: parsed.tracking,
      redrives,
      ...(text(parsed.requestId) ? { requestId: parsed.requestId } : {}),
      ...(Number.isSafeInteger(parsed.notBefore) ? { notBefore: parsed.notBefore as number } : {}),
    };
  } catch {
    // fall through: a malformed message can never be processed
  }
  return undefined;
};

export const parseRecheckMessage = (body: string): RecheckMessage | undefined => {
  try {
    const recheck = JSON.parse(body)?.recheck;
    if (text(recheck?.sourceStoreId) && text(recheck?.sourceOrderId) && text(recheck?.sourceFulfillmentId)) {
      return {
        recheck: {
          sourceStoreId: recheck.sourceStoreId,
          sourceOrderId: recheck.sourceOrderId,
          sourceFulfillmentId: recheck.sourceFulfillmentId,
        },
      };
    }
  } catch {
    // not a recheck
  }
  return undefined;
};
