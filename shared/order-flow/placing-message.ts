import { type Fields, isText, optionalText, parseWith, type WorkMessage, workFields } from '../work/runner.js';
import { ATTEMPT_TRIGGERS, type AttemptTrigger } from './order-sync-job.js';

/**
 * What a sync-queue message carries: which job, which generation of it (an older one is stale),
 * what sent it (for the attempt history), and, for the log lines of whoever handles it (before the
 * job is even read), the request that sent it (the order's webhook, or the manual retry) and the
 * job's order. No SDK here: the DLQ handler reads messages without sending any.
 */
export interface JobMessage extends WorkMessage {
  jobId: string;
  generation: number;
  /** Absent in messages from before the history: they came from the webhook. */
  trigger?: AttemptTrigger;
  /**
   * The `request_id` of the webhook or retry that enqueued the job. Optional, as the two below:
   * messages sent before they existed have none, and the reconciler's re-sends no request id.
   */
  requestId?: string;
  resellerStoreId?: string;
  externalOrderId?: string;
  /**
   * Epoch ms before which the job is not to be tried: a 429's wait longer than one message delay
   * (15 minutes). A message that arrives earlier is sent on again, without a claim.
   */
  notBefore?: number;
  /**
   * `cancel`: the message cancels the job's supplier order (CONTRACT.md §10.4); `update`: it gives it
   * the reseller's edits (§10.6); `release`: the delay of its held order has ended (§11, holding.ts): the
   * order is read again and its held jobs judged; `remove`: refunded units leave the placed supplier order
   * (§15.1, refunding.ts); `return`: the job's returns reach the supplier (§15.2, returning.ts); absent: it
   * places it.
   */
  purpose?: 'cancel' | 'update' | 'release' | 'remove' | 'return';
}

/**
 * The message of a job's current generation, sent by `trigger` (request `requestId`, if any);
 * `purpose`: what it does to a placed order, when it does not place one.
 */
export const jobMessage = (
  job: { id: string; generation: number; resellerStoreId: string; externalOrderId: string },
  trigger: AttemptTrigger,
  requestId?: string,
  purpose?: JobMessage['purpose'],
): JobMessage => ({
  jobId: job.id,
  generation: job.generation,
  trigger,
  requestId,
  resellerStoreId: job.resellerStoreId,
  externalOrderId: job.externalOrderId,
  ...(purpose ? { purpose } : {}),
});

/** What a message tells the log lines of its handler, before anything is read. */
export const messageLogContext = (message: JobMessage) => ({
  jobId: message.jobId,
  request_id: message.requestId,
  resellerStoreId: message.resellerStoreId,
  externalOrderId: message.externalOrderId,
});

const PURPOSES = ['cancel', 'update', 'release', 'remove', 'return'] as const;

/** What a sync-queue message asks: a placement (no `purpose` on the wire), or its purpose. */
export type SyncQueueKind = 'place' | (typeof PURPOSES)[number];

/**
 * The sync queue's one message type, a union tagged by `kind`, parsed once at its door (`openDoor`,
 * shared/work/runner.ts). The wire format is unchanged: the kind is read from `purpose`.
 */
export type SyncQueueMessage = { [K in SyncQueueKind]: { kind: K; message: JobMessage } }[SyncQueueKind];

const readJobMessage = (parsed: Fields): JobMessage | undefined => {
  if (!isText(parsed.jobId) || !Number.isInteger(parsed.generation)) return undefined;
  const trigger = ATTEMPT_TRIGGERS.find((t) => t === parsed.trigger);
  const purpose = PURPOSES.find((p) => p === parsed.purpose);
  return {
    jobId: parsed.jobId,
    generation: Number(parsed.generation),
    ...(trigger ? { trigger } : {}),
    ...workFields(parsed),
    ...optionalText(parsed, 'resellerStoreId'),
    ...optionalText(parsed, 'externalOrderId'),
    ...(purpose ? { purpose } : {}),
  };
};

export const parseJobMessage = (body: string) => parseWith(body, readJobMessage);

const readSyncQueueMessage = (parsed: Fields): SyncQueueMessage | undefined => {
  const message = readJobMessage(parsed);
  return message && ({ kind: message.purpose ?? 'place', message } as SyncQueueMessage);
};

export const parseSyncQueueMessage = (body: string) => parseWith(body, readSyncQueueMessage);
