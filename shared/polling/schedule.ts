import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import * as v from 'valibot';
import { sqs } from '../aws/batch.js';
import { config } from '../core/config.js';
import { logger } from '../core/telemetry.js';
import type { StoreKind } from '../entities/store.js';
import { findActiveStoresPage } from '../entities/store-poll.js';

/**
 * The fan-out of every run (CONTRACT.md §10.7): the scheduled function reads the active stores'
 * keys (GSI5 `STORES#ACTIVE`, keys only: never a Scan of a table that grows with orders) and puts
 * one message per store on the poll queue, ten per SendMessageBatch; the poll queue's consumer
 * polls each (./poll-store.ts). Each message is delayed by a spread of the store's id over most of
 * the interval, so the stores' polls come steadily rather than all at the start of a run.
 */

export interface PollMessage {
  kind: StoreKind;
  id: string;
}

const PollMessageSchema = v.object({
  kind: v.picklist(['reseller', 'source']),
  id: v.pipe(v.string(), v.minLength(1)),
});

/** The store a poll message names; undefined for a message that is not one (logged, dropped). */
export const pollMessageOf = (received: Pick<SQSRecord, 'body'>): PollMessage | undefined => {
  try {
    const parsed = v.safeParse(PollMessageSchema, JSON.parse(received.body));
    return parsed.success ? parsed.output : undefined;
  } catch {
    return undefined;
  }
};

/** Keys read per Query of the active stores (keys only: 1,000 is well within a 1 MB page). */
const PAGE = 1000;
/** SendMessageBatch calls in flight at once. */
const BATCHES_IN_FLIGHT = 10;
/** SQS's longest message delay. */
const MAX_SPREAD_SECONDS = 900;

/** A stable spread of store ids over `seconds` (FNV-1a), the same every run: each store's polls stay evenly apart. */
export const spreadSeconds = (id: string, seconds: number) => {
  if (seconds < 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % Math.floor(seconds);
};

const send = async (messages: PollMessage[], spread: number) => {
  const out = await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: config.pollQueueUrl(),
      Entries: messages.map((message, index) => ({
        Id: String(index),
        MessageBody: JSON.stringify(message),
        DelaySeconds: spreadSeconds(message.id, spread),
      })),
    }),
  );
  if (out.Failed?.length) throw new Error(`${out.Failed.length} poll messages were not accepted`);
};

/**
 * One run: a message for every active store. `intervalSeconds` is the polling interval; the
 * messages are spread over two thirds of it (at most SQS's 15 minutes), so a run ends well before
 * the next one starts. Answers how many stores it enqueued.
 */
export const enqueueStorePolls = async (intervalSeconds: number) => {
  const spread = Math.min(MAX_SPREAD_SECONDS, Math.floor((intervalSeconds * 2) / 3));
  let enqueued = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await findActiveStoresPage(PAGE, startKey);
    const messages = page.stores;
    const batches: PollMessage[][] = [];
    for (let i = 0; i < messages.length; i += 10) batches.push(messages.slice(i, i + 10));
    for (let i = 0; i < batches.length; i += BATCHES_IN_FLIGHT)
      await Promise.all(batches.slice(i, i + BATCHES_IN_FLIGHT).map((batch) => send(batch, spread)));
    enqueued += messages.length;
    startKey = page.lastKey;
  } while (startKey);
  logger.info('store polls enqueued', { stores: enqueued, spreadSeconds: spread });
  return enqueued;
};
