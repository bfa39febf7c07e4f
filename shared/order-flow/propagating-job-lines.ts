import { jobItems } from './order-repository.js';
import type { SyncJob } from './order-sync-job.js';

/**
 * The reseller's line items a job carries, by their ids on the reseller's order, with their
 * quantities: what a parcel of the job's supplier may ship there, never another supplier's items.
 * Undefined when a line has no id (the order is then fulfilled without line items, as before).
 */
export const jobLineItems = async (job: SyncJob): Promise<Array<{ id: string; quantity: number }> | undefined> => {
  const lines = await jobItems(job);
  if (!lines || lines.length === 0 || lines.some((line) => line.id === null)) return undefined;
  return lines.map((line) => ({ id: line.id!, quantity: line.quantity }));
};
