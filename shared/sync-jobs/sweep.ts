import { logger } from '../core/logger.js';
import { INDEX, pending } from '../dynamo/keys.js';
import { batchGet, queryKeys, type Item } from '../dynamo/table.js';
import { enqueueJobs } from './queue.js';
import { syncJobFrom } from './record.js';
import { markForSweep } from './sync-jobs.js';

/**
 * The safety net under "no accepted order is left un-enqueued": pending jobs whose message may be
 * missing (their enqueue failed, or they were retried or deferred, which marks them in the same
 * write) are enqueued again once they have waited `olderThanSeconds`. Only the sparse pending
 * index is read. A function that died between writing new jobs and enqueueing them never answered
 * 200, so the platform's redelivery enqueues those (shared/orders/accept-order.ts).
 */
export const sweepPendingJobs = async (olderThanSeconds: number) => {
  const cutoff = new Date(Date.now() - olderThanSeconds * 1000).toISOString();
  const shards = pending.allShards().map((shard) => sweepShard(shard, cutoff));
  const requeued = (await Promise.all(shards)).reduce((sum, n) => sum + n, 0);
  if (requeued) logger.warn('sweep re-enqueued pending jobs', { count: requeued });
  return requeued;
};

const sweepShard = async (shard: string, cutoff: string) => {
  let requeued = 0;
  let startKey: Item | undefined;
  do {
    const page = await queryKeys({
      index: INDEX.pending,
      pkName: 'GSI3PK',
      skName: 'GSI3SK',
      pk: shard,
      before: cutoff,
      limit: 100,
      forward: true,
      exclusiveStartKey: startKey,
    });
    const jobs = (await batchGet(page.keys, syncJobFrom)).filter((job) => job.status === 'pending');
    const marked = await markForSweep(jobs);
    const due = jobs.filter((_, i) => marked[i]);
    if (due.length) await enqueueJobs(due.map((job) => ({ jobId: job.id, generation: job.generation })));
    requeued += due.length;
    startKey = page.lastKey;
  } while (startKey);
  return requeued;
};
