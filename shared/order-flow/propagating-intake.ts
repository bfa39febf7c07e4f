import * as v from 'valibot';
import { parseInput } from '../core/errors.js';
import { logger } from '../core/telemetry.js';
import { type CarrierReport, shipmentStatusOf } from '../domain/shipping.js';
import type { SourceFulfillment } from '../entities/kept-fulfillment.js';
import { routeCarrierReport, routeFulfillment } from './propagating.js';

/**
 * The fulfillments webhook's side of propagation: reads the payload, then hands the tracking to
 * `routeFulfillment`. Kept apart from shared/order-flow/propagating.ts so the sync worker, which
 * releases kept fulfillments, does not bundle the webhook's schema library.
 */

const Id = v.union(
  [v.pipe(v.number(), v.integer(), v.minValue(0)), v.pipe(v.string(), v.minLength(1), v.maxLength(100))],
  'must be an id, a number or a string',
);
const Text = v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2000))));
const Texts = v.optional(v.nullable(v.pipe(v.array(v.pipe(v.string(), v.maxLength(2000))), v.maxLength(50))));
const Quantity = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1_000_000));
/** The parcel's lines: the supplier's line item ids and quantities (CONTRACT.md §10.2). */
const LineItems = v.optional(
  v.nullable(v.pipe(v.array(v.looseObject({ id: Id, quantity: Quantity })), v.maxLength(1000))),
);
/** An ISO 8601 time with its offset, as the platform writes `updated_at`. */
const Time = v.optional(v.nullable(v.pipe(v.string(), v.isoTimestamp('must be an ISO 8601 time'))));

/** A carrier status as platforms spell it; one the service does not know is read as none (never an error). */
const Status = v.optional(v.nullable(v.pipe(v.string(), v.maxLength(100))));

/** Compared as instants: offsets differ between deliveries of one platform. */
const instant = (time: string | null | undefined) => (time ? new Date(time).toISOString() : null);

/** A status reported, with its time (CONTRACT.md §16.2); null when none, or one the service does not know. */
const reportOf = (raw: string | null | undefined, at: string | null | undefined): CarrierReport | null => {
  const status = shipmentStatusOf(raw);
  return status ? { status, at: instant(at) } : null;
};

/** Statuses of a fulfillment that ships nothing: a cancelled (voided) parcel, or one that failed. */
const NOT_SHIPPED = new Set(['cancelled', 'error', 'failure']);

/** The part of `fulfillments/create` the service reads (CONTRACT.md §5), in its own terms; the rest is ignored. */
export const FulfillmentPayload = v.pipe(
  v.looseObject({
    id: Id,
    order_id: Id,
    status: v.optional(v.nullable(v.string())),
    tracking_company: Text,
    tracking_number: Text,
    tracking_numbers: Texts,
    tracking_url: Text,
    tracking_urls: Texts,
    line_items: LineItems,
    updated_at: Time,
    created_at: Time,
    shipment_status: Status,
    /** Not Shopify's: the poll's time the parcel went into transit (GraphQL `inTransitAt`), the scan's time. */
    in_transit_at: Time,
  }),
  v.transform((payload): SourceFulfillment & { status: string | null } => ({
    sourceFulfillmentId: String(payload.id),
    sourceOrderId: String(payload.order_id),
    status: payload.status ?? null,
    // A payload that names no lines (none, or an empty list) ships every item not yet fulfilled.
    lines: payload.line_items?.length
      ? payload.line_items.map((line) => ({ id: String(line.id), quantity: line.quantity }))
      : null,
    cancelled: NOT_SHIPPED.has(payload.status ?? ''),
    updatedAt: instant(payload.updated_at),
    createdAt: instant(payload.created_at),
    report: reportOf(payload.shipment_status, payload.in_transit_at ?? payload.updated_at),
    tracking: {
      company: payload.tracking_company ?? null,
      number: payload.tracking_number ?? null,
      numbers: payload.tracking_numbers ?? [],
      url: payload.tracking_url ?? null,
      urls: payload.tracking_urls ?? [],
    },
  })),
);

/**
 * A verified `fulfillments/create` or `fulfillments/update` of the source stores `sourceStores` (every
 * one whose secret verified). A create that shipped nothing passes nothing on; an update that
 * cancels a parcel cancels the reseller's fulfillment of it (CONTRACT.md §10.3).
 */
export const acceptFulfillment = async (
  sourceStores: { id: string }[],
  payload: unknown,
  requestId?: string,
  topic: 'fulfillments/create' | 'fulfillments/update' = 'fulfillments/create',
) => {
  const { status, ...fulfillment } = parseInput(FulfillmentPayload, payload);
  if (topic === 'fulfillments/create' && fulfillment.cancelled) {
    logger.info('fulfillment shipped nothing; not propagated', {
      sourceFulfillmentId: fulfillment.sourceFulfillmentId,
      status,
    });
    return;
  }
  await routeFulfillment(sourceStores, fulfillment, requestId);
};

/**
 * `fulfillment_events/create` (CONTRACT.md §16.2): a carrier's event on a supplier's parcel, its time
 * the carrier's (`happened_at`, else the event's `updated_at` or `created_at`).
 */
export const FulfillmentEventPayload = v.pipe(
  v.looseObject({
    id: Id,
    fulfillment_id: Id,
    order_id: Id,
    status: Status,
    happened_at: Time,
    updated_at: Time,
    created_at: Time,
  }),
  v.transform((payload) => ({
    sourceFulfillmentId: String(payload.fulfillment_id),
    sourceOrderId: String(payload.order_id),
    report: reportOf(payload.status, payload.happened_at ?? payload.updated_at ?? payload.created_at),
  })),
);

/**
 * A verified `fulfillment_events/create`: the parcel's status and first scan, on each job of the
 * stores that placed its supplier order. A status the service does not know changes nothing.
 */
export const acceptFulfillmentEvent = async (sourceStores: { id: string }[], payload: unknown) => {
  const { report, ...parcel } = parseInput(FulfillmentEventPayload, payload);
  if (!report) {
    logger.info('fulfillment event with no status the service knows; nothing to record', parcel);
    return;
  }
  await routeCarrierReport(sourceStores, parcel, report);
};
