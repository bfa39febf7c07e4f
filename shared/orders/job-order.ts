import { syncJobId } from '../core/ids.js';
import { InvalidAmountError, UnknownCurrencyError } from '../domain/money.js';
import type { PricingConfig } from '../domain/pricing.js';
import { readResellerOrder } from '../domain/reseller-order.js';
import { itemsOfVendorTag } from '../domain/routing.js';
import { buildSupplierOrder, type SupplierOrder } from '../domain/supplier-order.js';
import type { SyncJob } from '../sync-jobs/record.js';
import { decompressBody, readBodyParts } from './stored-order.js';

/**
 * An order no retry can place: its currency has no exponent in the ISO 4217 table, or what is
 * stored cannot be read. The worker makes the job `dead` at once with this message as the reason.
 */
export class UnplaceableOrderError extends Error {
  override readonly name = 'UnplaceableOrderError';
}

/** The reseller order's raw JSON, however the job keeps it. */
const orderText = async (job: SyncJob): Promise<string> => {
  const order = job.order;
  if (!order) throw new UnplaceableOrderError('the job holds no order to place');
  if ('body' in order) return decompressBody(order.body);
  if ('parts' in order) {
    const firstJobId = syncJobId(job.resellerStoreId, job.externalOrderId, 0);
    return decompressBody(await readBodyParts(firstJobId, order.parts));
  }
  // A job written by older code keeps its own items as a map: the same reading applies.
  return JSON.stringify({ id: job.externalOrderId, ...order.legacy });
};

/**
 * The reseller's line items a job carries, by their ids on the reseller's order, with their
 * quantities: what a parcel of the job's supplier may ship there, never another supplier's items.
 * Undefined when a line has no id (the order is then fulfilled without line items, as before).
 */
export const jobLineItems = async (job: SyncJob): Promise<Array<{ id: string; quantity: number }> | undefined> => {
  let text: string;
  try {
    text = await orderText(job);
  } catch (error) {
    if (error instanceof UnplaceableOrderError) return undefined;
    throw error;
  }
  const reading = readResellerOrder(text);
  if (!reading.ok) return undefined;
  const lines = itemsOfVendorTag(reading.order.lineItems, job.vendorTag);
  if (lines.length === 0 || lines.some((line) => line.id === null)) return undefined;
  return lines.map((line) => ({ id: line.id!, quantity: line.quantity }));
};

/**
 * The supplier order a job places: the stored order read exactly as the webhook read it, the items
 * whose `vendor` is the job's tag, at the supplier's prices (CONTRACT.md §7).
 */
export const supplierOrderFor = async (
  job: SyncJob,
  resellerShopDomain: string,
  pricing: PricingConfig,
): Promise<SupplierOrder> => {
  const reading = readResellerOrder(await orderText(job));
  if (!reading.ok) {
    throw new UnplaceableOrderError(`the stored order cannot be read: ${reading.param ?? ''} ${reading.message}`);
  }
  const { order } = reading;
  const lineItems = itemsOfVendorTag(order.lineItems, job.vendorTag);
  try {
    return buildSupplierOrder({ resellerShopDomain, order, lineItems, pricing });
  } catch (error) {
    // Prices that cannot be computed exactly never heal by retrying.
    if (error instanceof UnknownCurrencyError || error instanceof InvalidAmountError) {
      throw new UnplaceableOrderError(error.message);
    }
    throw error;
  }
};
