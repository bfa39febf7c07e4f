/** The states of a sync job (SPEC 3.1, CONTRACT.md §6); shared/sync-jobs/sync-jobs.ts makes the moves. */
export const SYNC_JOB_STATUSES = ['pending', 'processing', 'completed', 'failed', 'dead'] as const;
export type SyncJobStatus = (typeof SYNC_JOB_STATUSES)[number];
