import { InvalidAmountError, UnknownCurrencyError } from '../domain/money.js';
import type { PricingConfig } from '../domain/pricing.js';
import { readResellerOrder } from '../domain/reseller-order.js';
import { itemsOfVendorTag } from '../domain/routing.js';
import { buildSupplierOrder, type SupplierOrder } from '../domain/supplier-order.js';
import { orderText, UnplaceableOrderError } from '../entities/order-body.js';
import type { SyncJob } from '../entities/sync-job.js';

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
