import * as v from 'valibot';
import { logger } from '../core/logger.js';
import { parseInput } from '../core/validation.js';
import type { SourceFulfillment } from '../entities/kept-fulfillment.js';
import { routeFulfillment } from './propagating.js';

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
    // Compared as instants: offsets differ between deliveries of one platform.
    updatedAt: payload.updated_at ? new Date(payload.updated_at).toISOString() : null,
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
