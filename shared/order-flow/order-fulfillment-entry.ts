import { coveredQuantities, type ParcelCover, type ShipmentStatus } from '../domain/shipping.js';
import { attributes, type Item } from '../dynamo/table.js';

/**
 * The fulfillment entry (docs/propagation.md): the state a source fulfillment has on the sync job
 * that placed its supplier order, in the job item's `fulfillments` map, keyed by source fulfillment
 * id. It is no item of its own: the job item (order-sync-job.ts) carries it, and its writes are updates
 * of the job item (order-entries.ts).
 */

/**
 * `pending`/`failed`: work on its way to the reseller's order (a create, a tracking update or a
 * cancellation); `delivered`: the reseller's fulfillment is as the supplier's last said; `dead`:
 * given up; `ignored`: nothing of the job was left to ship (CONTRACT.md §10.2); `cancelled`: the
 * supplier voided the parcel and the reseller's fulfillment is cancelled too (or was never made).
 */
export const FULFILLMENT_STATUSES = ['pending', 'delivered', 'failed', 'dead', 'ignored', 'cancelled'] as const;
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
  /**
   * The reseller's line items and quantities the parcel ships (CONTRACT.md §10.2), planned when it
   * was accepted; absent: the whole job (a job whose lines have no ids, or an entry of older code).
   */
  lines?: ParcelLine[];
  /** The supplier's `updated_at` of the last version applied: an older update changes nothing. */
  sourceUpdatedAt?: string;
  /** The supplier cancelled the parcel: the reseller's fulfillment is to be cancelled. */
  cancelRequested?: boolean;
  /** The tracking the reseller's fulfillment has (`trackingKey`): a tracking update is sent once per change. */
  appliedTracking?: string;
  /** The platform's own time of the parcel (its `created_at`): when it shipped (CONTRACT.md §16.2). */
  sourceCreatedAt?: string;
  /** The carrier's progress as the supplier's platform last said it (CONTRACT.md §16.2); absent: never said. */
  shipmentStatus?: ShipmentStatus;
  /** The carrier's time of its first scan (in transit or later). */
  firstScanAt?: string;
  /** When the sweep found it reported but not scanned within its window: `fulfillment.unscanned`, once. */
  unscannedAt?: string;
}

/** One reseller line item a parcel ships, by its id on the reseller's order. */
export interface ParcelLine {
  id: string;
  quantity: number;
}

/** Entries still on their way to the reseller's platform: the reconciler watches them. */
export const isPropagating = (entry: Pick<FulfillmentEntry, 'status'>) =>
  entry.status === 'pending' || entry.status === 'failed';

/** The job item's `fulfillments` map; absent until the job's first fulfillment arrives. */
export const fulfillmentEntriesFrom = (item: Item): Record<string, FulfillmentEntry> =>
  attributes(item, 'sync job').optionalObject<Record<string, FulfillmentEntry>>('fulfillments') ?? {};

/** What a parcel covers, as its entry records it: its lines, or the whole job (entries of older code too). */
export const coverOf = (entry: FulfillmentEntry): ParcelCover => entry.lines ?? 'whole';

/** Whether the reseller's platform has the parcel's fulfillment (made, and not cancelled). */
export const isOnResellerOrder = (entry: FulfillmentEntry) =>
  entry.resellerFulfillmentId !== null && entry.status !== 'cancelled';

/**
 * Each line's `fulfilledQuantity` (CONTRACT.md §10.2): what the reseller's platform accepted of it,
 * from the job's parcels that are on the reseller's order.
 */
export const fulfilledQuantities = (
  lines: ReadonlyArray<{ resellerLineItemId: string | null; quantity: number }>,
  entries: Record<string, FulfillmentEntry>,
) => coveredQuantities(lines, Object.values(entries).filter(isOnResellerOrder).map(coverOf));

/** When a parcel shipped: the platform's time of it, else when the service heard of it (older entries). */
export const shippedTimeOf = (entry: Pick<FulfillmentEntry, 'sourceCreatedAt' | 'receivedAt'>) =>
  entry.sourceCreatedAt ?? entry.receivedAt;
