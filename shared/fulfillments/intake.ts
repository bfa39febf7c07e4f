import * as v from 'valibot';
import { routeFulfillment } from './propagation.js';
import { parseInput } from '../core/validation.js';
import { logger } from '../core/logger.js';
import type { Tracking } from '../platforms/index.js';
import type { Item } from '../dynamo/table.js';

/**
 * The fulfillments webhook's side of reverse sync: reads the payload, then hands the tracking to
 * `routeFulfillment`. Kept apart from shared/fulfillments/propagation.ts so the sync worker, which releases
 * kept fulfillments, does not bundle the webhook's schema library.
 */

const Id = v.union(
  [v.pipe(v.number(), v.integer(), v.minValue(0)), v.pipe(v.string(), v.minLength(1), v.maxLength(100))],
  'must be an id, a number or a string',
);
const Text = v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2000))));
const Texts = v.optional(v.nullable(v.pipe(v.array(v.pipe(v.string(), v.maxLength(2000))), v.maxLength(50))));

/** The part of `fulfillments/create` the service reads (CONTRACT.md §5); the rest is ignored. */
export const FulfillmentPayload = v.looseObject({
  id: Id,
  order_id: Id,
  status: v.optional(v.nullable(v.string())),
  tracking_company: Text,
  tracking_number: Text,
  tracking_numbers: Texts,
  tracking_url: Text,
  tracking_urls: Texts,
});
export type FulfillmentPayload = v.InferOutput<typeof FulfillmentPayload>;

/** Statuses of a fulfillment that shipped nothing: there is no tracking to pass on. */
const NOT_SHIPPED = new Set(['cancelled', 'error', 'failure']);

export const trackingOf = (payload: FulfillmentPayload): Tracking => ({
  company: payload.tracking_company ?? null,
  number: payload.tracking_number ?? null,
  numbers: payload.tracking_numbers ?? [],
  url: payload.tracking_url ?? null,
  urls: payload.tracking_urls ?? [],
});

export const acceptFulfillment = async (sources: Item[], payload: unknown) => {
  const fulfillment = parseInput(FulfillmentPayload, payload);
  const sourceFulfillmentId = String(fulfillment.id);
  if (fulfillment.status && NOT_SHIPPED.has(fulfillment.status)) {
    logger.info('fulfillment shipped nothing; not propagated', { sourceFulfillmentId, status: fulfillment.status });
    return;
  }
  await routeFulfillment(sources, {
    sourceFulfillmentId,
    sourceOrderId: String(fulfillment.order_id),
    tracking: trackingOf(fulfillment),
  });
};
