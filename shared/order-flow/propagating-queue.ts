import { MAX_DELAY_SECONDS } from '../aws/batch.js';
import { config } from '../core/config.js';
import { logger } from '../core/telemetry.js';
import type { Tracking } from '../platforms/port.js';
import { type Fields, isText, parseWith, sendWork, type WorkMessage, workFields } from '../work/runner.js';
import { readTagMessage, type TagMessage } from './tagging-queue.js';

/**
 * What a fulfillment-queue message carries: which job's reseller order gets which source
 * fulfillment, with its tracking. `redrives` counts the times the dead-letter handler has put it
 * back on the queue after a reseller outage outlasted `maxReceiveCount` receives.
 */
export interface FulfillmentMessage extends WorkMessage {
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

/** What a message tells the log lines of its handler, before anything is read. */
export const propagationLogContext = (message: FulfillmentMessage) => ({
  jobId: message.jobId,
  sourceFulfillmentId: message.sourceFulfillmentId,
  request_id: message.requestId,
});

export const sendFulfillmentMessage = (message: FulfillmentMessage | RecheckMessage, delaySeconds = 0) =>
  sendWork(config.fulfillmentQueueUrl(), [message], delaySeconds);

const texts = (value: unknown): value is string[] => Array.isArray(value) && value.every(isText);
const textOrNull = (value: unknown) => value === null || isText(value);

const isTracking = (value: unknown): value is Tracking => {
  const t = value as Record<string, unknown> | null;
  return !!t && textOrNull(t.company) && textOrNull(t.number) && textOrNull(t.url) && texts(t.numbers) && texts(t.urls);
};

const readFulfillmentMessage = (parsed: Fields): FulfillmentMessage | undefined => {
  if (!isText(parsed.jobId) || !isText(parsed.sourceFulfillmentId) || !isTracking(parsed.tracking)) return undefined;
  return {
    jobId: parsed.jobId,
    sourceFulfillmentId: parsed.sourceFulfillmentId,
    tracking: parsed.tracking,
    redrives: Number.isInteger(parsed.redrives) ? Number(parsed.redrives) : 0,
    ...workFields(parsed),
  };
};

export const parseFulfillmentMessage = (body: string) => parseWith(body, readFulfillmentMessage);

const readRecheckMessage = ({ recheck }: Fields): RecheckMessage | undefined => {
  const r = recheck as Fields | null | undefined;
  if (!isText(r?.sourceStoreId) || !isText(r.sourceOrderId) || !isText(r.sourceFulfillmentId)) return undefined;
  return {
    recheck: {
      sourceStoreId: r.sourceStoreId,
      sourceOrderId: r.sourceOrderId,
      sourceFulfillmentId: r.sourceFulfillmentId,
    },
  };
};

/**
 * The fulfillment queue's one message type: a fulfillment to propagate, a kept fulfillment's
 * recheck, or a reseller order's tag (tagging-queue.ts). The body names its kind by its key field
 * (`recheck`, `tagJobId`, else a fulfillment's `jobId`), read once, here, at the queue's door.
 */
export type FulfillmentQueueMessage =
  | { kind: 'propagation'; message: FulfillmentMessage }
  | { kind: 'recheck'; message: RecheckMessage }
  | { kind: 'tag'; message: TagMessage };

const readFulfillmentQueueMessage = (parsed: Fields): FulfillmentQueueMessage | undefined => {
  if ('recheck' in parsed) {
    const message = readRecheckMessage(parsed);
    return message && { kind: 'recheck', message };
  }
  if ('tagJobId' in parsed) {
    const message = readTagMessage(parsed);
    return message && { kind: 'tag', message };
  }
  const message = readFulfillmentMessage(parsed);
  return message && { kind: 'propagation', message };
};

export const parseFulfillmentQueueMessage = (body: string) => parseWith(body, readFulfillmentQueueMessage);

/**
 * The dead-letter handlers' redrive of a fulfillment-queue message (a fulfillment's, a tag's): back
 * on the queue 15 minutes later, up to `redrives` times, as long as the reseller's platform may still
 * recover; false once they are spent.
 */
export const redriveLater =
  <M extends WorkMessage & { redrives?: number }>(redrives: number, what: string) =>
  async (message: M) => {
    const done = message.redrives ?? 0;
    if (done >= redrives) return false;
    await sendWork(config.fulfillmentQueueUrl(), [{ ...message, redrives: done + 1 }], MAX_DELAY_SECONDS);
    logger.warn(`${what} put back on the queue after its receives ran out`, { redrives: done + 1 });
    return true;
  };
