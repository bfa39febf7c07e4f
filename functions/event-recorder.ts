import { streamBatchHandler } from '../shared/aws/batch.js';
import { lambdaHandler } from '../shared/core/lambda-handler.js';
import { metricsMiddleware } from '../shared/core/metrics.js';
import type { Subject } from '../shared/events/changes.js';
import { recordStreamRecord } from '../shared/events/recorder.js';
import { presentOrder, presentSyncJob } from '../shared/http/present.js';
import { unroutedLineItems } from '../shared/orders/orders.js';
import { linesOf } from '../shared/sync-jobs/sync-jobs.js';

/** The object of an event, as its GET answers it (functions/get-sync-job.ts, functions/get-order.ts). */
const present = async (subject: Subject) =>
  subject.kind === 'syncJob'
    ? presentSyncJob(subject.job, await linesOf(subject.job))
    : presentOrder(subject.order, await unroutedLineItems(subject.order));

/** The table's change stream consumer: the events the writes report (CONTRACT.md §14). */
export const handler = lambdaHandler(
  streamBatchHandler((record) => recordStreamRecord(record, present)),
  metricsMiddleware(),
);
