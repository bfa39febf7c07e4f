import { config } from '../shared/core/config.js';
import { sweepPendingJobs } from '../shared/sync-jobs/sweep.js';

/** Scheduled: enqueues again the jobs left `pending` for longer than SWEEP_AFTER_SECONDS. */
export const handler = async () => ({ requeued: await sweepPendingJobs(config.sweepAfterSeconds()) });
