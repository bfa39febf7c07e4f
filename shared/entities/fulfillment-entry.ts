import { attributes } from '../dynamo/attributes.js';
import type { Item } from '../dynamo/table.js';

/**
 * The fulfillment entry (docs/reverse-sync.md): the state a source fulfillment has on the sync job
 * that placed its source order, in the job item's `fulfillments` map, keyed by source fulfillment
 * id. It is no item of its own: the job item (sync-job.ts) carries it, and its writes are updates
 * of the job item (shared/fulfillments/entries.ts).
 */

export const FULFILLMENT_STATUSES = ['pending', 'delivered', 'failed', 'dead'] as const;
export type FulfillmentStatus = (typeof FULFILLMENT_STATUSES)[number];

/** Stored as is: the map's values are these objects, attribute for field. */
export interface FulfillmentEntry {
  sourceFulfillmentId: string;
  status: FulfillmentStatus;
  trackingCompany: string | null;
  trackingNumber: string | null;
  trackingNumbers: string[];
  trackingUrl: string | null;
  resellerFulfillmentId: string | null;
  attempts: number;
  errorMessage: string | null;
  receivedAt: string;
  updatedAt: string;
  deliveredAt: string | null;
  /** Every tracking URL (`trackingUrl` is the first), for a message the reconciler sends again. */
  trackingUrls?: string[];
  /** Messages the reconciler has sent since the entry last made progress (CONTRACT.md §6). */
  resends?: number;
  /** The end of a wait the entry announced (a 429's Retry-After): its lease runs from there. */
  waitUntil?: string;
  /** When its current run of throttled (429) calls began: the throttling budget. */
  throttledSince?: string;
}

/** Entries still on their way to the reseller's platform: the reconciler watches them. */
export const isPropagating = (entry: Pick<FulfillmentEntry, 'status'>) =>
  entry.status === 'pending' || entry.status === 'failed';

/** The job item's `fulfillments` map; absent until the job's first fulfillment arrives. */
export const fulfillmentEntriesFrom = (item: Item): Record<string, FulfillmentEntry> =>
  attributes(item, 'sync job').optionalObject<Record<string, FulfillmentEntry>>('fulfillments') ?? {};
