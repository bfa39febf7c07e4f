import * as v from 'valibot';
import { logger } from '../core/logger.js';
import { parseInput } from '../core/validation.js';
import { routeLineItems } from '../domain/routing.js';
import type { ResellerOrder } from '../domain/supplier-order.js';
import type { StoreOnShop } from '../stores/records.js';
import { activeVendorTags } from '../stores/source-stores.js';
import { enqueueJobs } from '../sync-jobs/queue.js';
import { createJobsForOrder } from '../sync-jobs/sync-jobs.js';

/** The part of the platform's `orders/create` payload the service reads (CONTRACT.md §5); the rest is ignored. */
const Money = v.pipe(
  v.string('must be a decimal string'),
  v.regex(/^\d+(\.\d+)?$/, 'must be a non-negative decimal string'),
);
const Text = v.optional(v.nullable(v.string()));

export const OrderPayload = v.pipe(
  v.looseObject({
    id: v.union(
      [v.pipe(v.number(), v.integer(), v.minValue(0)), v.pipe(v.string(), v.minLength(1), v.maxLength(100))],
      'must be the order id, a number or a string',
    ),
    currency: v.pipe(v.string('must be a currency code'), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code')),
    email: Text,
    line_items: v.array(
      v.looseObject({
        title: Text,
        sku: Text,
        variant_id: v.optional(v.nullable(v.union([v.string(), v.number()]))),
        quantity: v.pipe(
          v.number('must be a number'),
          v.integer('must be an integer'),
          v.minValue(1, 'must be at least 1'),
        ),
        price: Money,
        vendor: Text,
      }),
      'must be an array',
    ),
    shipping_lines: v.optional(v.nullable(v.array(v.looseObject({ title: Text, price: Money })))),
    shipping_address: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
  }),
  // Only what the service reads goes on: the rest of a loose payload is dropped here.
  v.transform(
    (payload): IncomingOrder => ({
      externalOrderId: String(payload.id),
      order: {
        currency: payload.currency,
        email: payload.email ?? null,
        line_items: payload.line_items.map((item) => ({
          title: item.title ?? null,
          sku: item.sku ?? null,
          variant_id: item.variant_id ?? null,
          quantity: item.quantity,
          price: item.price,
          vendor: item.vendor ?? '',
        })),
        shipping_lines: (payload.shipping_lines ?? []).map((line) => ({
          title: line.title ?? null,
          price: line.price,
        })),
        shipping_address: payload.shipping_address ?? null,
      },
    }),
  ),
);

/** A reseller's order as the service keeps it: the platform's order id, and the order in its own format. */
export interface IncomingOrder {
  externalOrderId: string;
  order: ResellerOrder;
}

/**
 * Routes an `orders/create` of a verified reseller store: one pending job per supplier, written
 * atomically (the first job is the dedup record), then one queue message per job. The jobs are
 * durable, and among the open jobs the reconciler watches, before the answer: if the enqueue fails,
 * or the function dies before it, the reconciler sends them their message once their lease is up.
 */
export const acceptOrder = async (
  reseller: Pick<StoreOnShop, 'id' | 'ownerId' | 'shopDomain' | 'deletedAt'>,
  payload: unknown,
): Promise<string[]> => {
  const { externalOrderId, order } = parseInput(OrderPayload, payload);
  if (reseller.deletedAt) return [];

  const groups = routeLineItems(order.line_items, await activeVendorTags(reseller.id));
  if (!groups.length) return [];

  const result = await createJobsForOrder({
    ownerId: reseller.ownerId,
    resellerStoreId: reseller.id,
    resellerShopDomain: reseller.shopDomain,
    externalOrderId,
    order,
    groups,
  });

  // A redelivery sends nothing: its jobs' messages went out with the first delivery, and a job
  // whose message was lost is the reconciler's (a second message here would be a second live one).
  if (result.jobs.length) {
    try {
      await enqueueJobs(result.jobs.map((job) => ({ jobId: job.id, generation: job.generation })));
    } catch (error) {
      logger.error('enqueue failed; the reconciler will send these jobs their message', {
        jobIds: result.jobs.map((j) => j.id),
        error: (error as Error).name,
      });
    }
  }
  return result.jobIds;
};
