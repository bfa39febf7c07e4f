/** The states of a sync job (SPEC 3.1, CONTRACT.md §6); shared/order-flow/order-transitions.ts holds the moves. */
/** `cancelled` (CONTRACT.md §10.4): final; no supplier order exists for the job any more, or none ever will. */
export const SYNC_JOB_STATUSES = ['pending', 'processing', 'completed', 'failed', 'dead', 'cancelled'] as const;
export type SyncJobStatus = (typeof SYNC_JOB_STATUSES)[number];

/** The states of a job that has not ended: the reconciler watches these (CONTRACT.md §6). */
export const OPEN_STATUSES = ['pending', 'processing', 'failed'] as const satisfies readonly SyncJobStatus[];
export const isOpen = (status: SyncJobStatus) => (OPEN_STATUSES as readonly SyncJobStatus[]).includes(status);

/**
 * The states a job has ended in: only a manual retry (of a dead job) leaves one. A job in one of them
 * carries `expiresAt`, the table's TTL (docs/design.md, "Day one").
 */
export const ENDED_STATUSES = ['completed', 'dead', 'cancelled'] as const satisfies readonly SyncJobStatus[];
export const isEnded = (status: SyncJobStatus) => (ENDED_STATUSES as readonly SyncJobStatus[]).includes(status);
