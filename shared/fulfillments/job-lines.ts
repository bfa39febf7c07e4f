import { readResellerOrder } from '../domain/reseller-order.js';
import { itemsOfVendorTag } from '../domain/routing.js';
import { orderText, UnplaceableOrderError } from '../entities/order-body.js';
import type { SyncJob } from '../entities/sync-job.js';

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
