import { InvalidAmountError, type PricingConfig, UnknownCurrencyError } from '../domain/money.js';
import {
  buildSupplierOrder,
  JsonText,
  type LineSummary,
  type ResellerOrder,
  type SupplierOrder,
  summaryText,
} from '../domain/orders.js';
import { itemsOfVendorTag } from '../domain/routing.js';
import { lineAfterSale } from './order-after-sale.js';
import { jobItems, jobOrderReading, UnplaceableOrderError } from './order-repository.js';
import type { OrderEdits, SourceLine, SyncJob } from './order-sync-job.js';

/**
 * The supplier order a job places: the stored order read exactly as the webhook read it, the items
 * whose `vendor` is the job's tag, at the supplier's prices (CONTRACT.md §7).
 */
export const supplierOrderFor = async (
  job: SyncJob,
  resellerShopDomain: string,
  pricing: PricingConfig,
): Promise<SupplierOrder> => {
  const reading = await jobOrderReading(job);
  if (!reading) throw new UnplaceableOrderError('the job holds no order to place');
  if (!reading.ok) {
    throw new UnplaceableOrderError(`the stored order cannot be read: ${reading.param ?? ''} ${reading.message}`);
  }
  const order = withEdits(reading.order, job.orderEdits);
  const lineItems = placedItems(job, itemsOfVendorTag(order.lineItems, job.vendorTag));
  if (!lineItems.length) throw new UnplaceableOrderError('every unit of the job was refunded');
  try {
    return buildSupplierOrder({ resellerShopDomain, syncJobId: job.id, order, lineItems, pricing });
  } catch (error) {
    // Prices that cannot be computed exactly never heal by retrying.
    if (error instanceof UnknownCurrencyError || error instanceof InvalidAmountError) {
      throw new UnplaceableOrderError(error.message);
    }
    throw error;
  }
};

/**
 * The job's items less the units the reseller refunded with `restock_type` cancel before the order
 * was placed (CONTRACT.md §15.1); an item with none left is not placed.
 */
const placedItems = <T extends { id: string | null; quantity: number }>(job: SyncJob, items: T[]): T[] =>
  items
    .map((item) => ({ ...item, quantity: item.quantity - lineAfterSale(job.afterSale ?? null, item.id).cut }))
    .filter((item) => item.quantity > 0);

/**
 * The supplier's lines of a placed order laid over the job's items in their order: an item a refund
 * left out of the order (placedItems) has none.
 */
export const alignedSourceLines = async (job: SyncJob, placed: SourceLine[]): Promise<SourceLine[]> => {
  if (!job.afterSale) return placed;
  const items = await jobItems(job);
  if (!items) return placed;
  const queue = [...placed];
  return items.map((item) =>
    item.quantity - lineAfterSale(job.afterSale ?? null, item.id).cut > 0
      ? (queue.shift() ?? { id: null, price: null })
      : { id: null, price: null },
  );
};

/**
 * The lines the job places, as a lookup compares them (`sameLines`): its items of the stored order,
 * with no prices, so a change of pricing does not matter. Undefined when the order cannot be read.
 */
export const jobLineSummaries = async (job: SyncJob): Promise<LineSummary[] | undefined> =>
  (await jobItems(job))?.map((item) => ({ sku: summaryText(item.sku), quantity: item.quantity, vendor: item.vendor }));

/**
 * The job's lines as placed (CONTRACT.md §10.1): the supplier's id of each (its answer lists them in
 * the order sent; an answer of another length names no line for sure, so none is kept) and the unit
 * price each was placed at, when the supplier order is at hand.
 */
export const sourceLinesOf = (
  order: Pick<SupplierOrder, 'line_items'> | undefined,
  lineItemIds: string[] | undefined,
  count = order?.line_items.length ?? lineItemIds?.length ?? 0,
): SourceLine[] => {
  const ids = lineItemIds?.length === count ? lineItemIds : undefined;
  return Array.from({ length: count }, (_, i) => ({
    id: ids?.[i] ?? null,
    price: order?.line_items[i]?.price ?? null,
  }));
};

/** The stored order with the reseller's later edits laid over it (CONTRACT.md §10.6): the latest of each field. */
export const withEdits = (order: ResellerOrder, edits: OrderEdits | null): ResellerOrder => {
  if (!edits) return order;
  const text = (value: string | undefined, was: JsonText | null) => (value === undefined ? was : new JsonText(value));
  return {
    ...order,
    email: text(edits.email, order.email),
    shippingAddress: text(edits.shippingAddress, order.shippingAddress),
    note: text(edits.note, order.note),
    noteAttributes: text(edits.noteAttributes, order.noteAttributes),
  };
};
