import { now, syncJobId } from '../core/ids.js';
import type { UnroutedLine } from '../domain/routing.js';
import { bodyPartItems, bodyStorage, compressBody, writeOrderRecord } from './order-repository.js';
import {
  type ReceivedVia,
  type UnroutedOrder,
  unroutedOrderExpiresAt,
  unroutedOrderItem,
  unroutedOrderMarkItem,
} from './order-sync-job.js';

export interface NewUnroutedOrder {
  ownerId: string;
  resellerStoreId: string;
  externalOrderId: string;
  rawBody: Buffer;
  receivedVia: ReceivedVia;
  /** Every line of the order, none of which routes. */
  unroutedLines: UnroutedLine[];
}

/**
 * Records an order none of whose items routes (CONTRACT.md §10.8): its record at its first job's key
 * with its body (inline, or in parts when large) and its mark, all or nothing. The key makes it
 * the order's dedup record, as a first job is: a redelivery finds it and changes nothing, whatever
 * the routing is now, and answers the jobs of an order that routed when it first came. An order
 * whose cancellation came first is recorded cancelled, in place of the cancellation kept there.
 */
export const recordUnroutedOrder = async (input: NewUnroutedOrder): Promise<{ created: boolean; jobIds: string[] }> => {
  const firstJobId = syncJobId(input.resellerStoreId, input.externalOrderId, 0);
  const receivedAt = now();
  // A record written once: its body inline while it fits one part (order-repository.ts `bodyStorage`).
  const stored = bodyStorage(compressBody(input.rawBody));
  const record: UnroutedOrder = {
    firstJobId,
    ownerId: input.ownerId,
    resellerStoreId: input.resellerStoreId,
    externalOrderId: input.externalOrderId,
    receivedAt,
    receivedVia: input.receivedVia,
    unroutedLines: input.unroutedLines,
    cancelledAt: null,
    order: stored.order,
  };
  // The record's end is its mark's and its parts' (the table's TTL, JOB_RETENTION_DAYS after its receipt).
  const expiresAt = unroutedOrderExpiresAt(receivedAt);
  const others = [
    ...bodyPartItems(firstJobId, stored.parts, expiresAt),
    unroutedOrderMarkItem({ firstJobId, resellerStoreId: input.resellerStoreId, receivedAt, expiresAt }),
  ];
  const written = await writeOrderRecord(unroutedOrderItem(record), others);
  if (written === true) return { created: true, jobIds: [] };
  const found = written.met;
  if (found?.kind === 'orderCancellation') {
    const { cancelledAt } = found.cancellation;
    const replaced = await writeOrderRecord(unroutedOrderItem({ ...record, cancelledAt }), others, 'cancellation');
    if (replaced !== true) throw new Error("the order's cancellation changed under its create"); // redelivered
    return { created: true, jobIds: [] };
  }
  if (found?.kind === 'earlyAfterSale') {
    // Refunds or returns kept for it change no job: none of its items routed.
    if ((await writeOrderRecord(unroutedOrderItem(record), others, 'kept')) !== true) {
      throw new Error("the order's kept refunds changed under its create"); // redelivered
    }
    return { created: true, jobIds: [] };
  }
  if (found?.kind === 'unroutedOrder') return { created: false, jobIds: [] };
  const job = found?.kind === 'job' ? found.job : undefined;
  if (!job?.orderJobIds) throw new Error("the order's first write was cancelled with no order at its key");
  return { created: false, jobIds: job.orderJobIds };
};
