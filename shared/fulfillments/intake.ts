import * as v from 'valibot';
import { logger } from '../core/logger.js';
import { parseInput } from '../core/validation.js';
import { type IncomingFulfillment, routeFulfillment } from './propagation.js';

/**
 * The fulfillments webhook's side of reverse sync: reads the payload, then hands the tracking to
 * `routeFulfillment`. Kept apart from shared/fulfillments/propagation.ts so the sync worker, which
 * releases kept fulfillments, does not bundle the webhook's schema library.
 */

const Id = v.union(
  [v.pipe(v.number(), v.integer(), v.minValue(0)), v.pipe(v.string(), v.minLength(1), v.maxLength(100))],
  'must be an id, a number or a string',
);
const Text = v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2000))));
const Texts = v.optional(v.nullable(v.pipe(v.array(v.pipe(v.string(), v.maxLength(2000))), v.maxLength(50))));

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
  }),
  v.transform((payload): IncomingFulfillment & { status: string | null } => ({
    sourceFulfillmentId: String(payload.id),
    sourceOrderId: String(payload.order_id),
    status: payload.status ?? null,
    tracking: {
      company: payload.tracking_company ?? null,
      number: payload.tracking_number ?? null,
      numbers: payload.tracking_numbers ?? [],
      url: payload.tracking_url ?? null,
      urls: payload.tracking_urls ?? [],
    },
  })),
);

/** Statuses of a fulfillment that shipped nothing: there is no tracking to pass on. */
const NOT_SHIPPED = new Set(['cancelled', 'error', 'failure']);

/** A verified `fulfillments/create` of the source stores `sources` (every one whose secret verified). */
export const acceptFulfillment = async (sources: { id: string }[], payload: unknown, requestId?: string) => {
  const { status, ...fulfillment } = parseInput(FulfillmentPayload, payload);
  if (status && NOT_SHIPPED.has(status)) {
    logger.info('fulfillment shipped nothing; not propagated', {
      sourceFulfillmentId: fulfillment.sourceFulfillmentId,
      status,
    });
    return;
  }
  await routeFulfillment(sources, fulfillment, requestId);
};
