import { streamBatchHandler } from '../shared/aws/batch.js';
import { lambdaHandler, metricsMiddleware } from '../shared/core/telemetry.js';
import type { Subject } from '../shared/events/changes.js';
import { recordStreamWrite } from '../shared/events/recorder.js';
import { presentOrder, presentResellerStore, presentSourceStore, presentSyncJob } from '../shared/http/present.js';
import { linesOf, unroutedLineItems } from '../shared/order-flow/reading.js';

/** The object of an event, as its GET answers it (functions/get-sync-job.ts, get-order.ts, get-*-store.ts). */
const present = async (subject: Subject): Promise<Record<string, unknown>> => {
  switch (subject.kind) {
    case 'syncJob':
      return presentSyncJob(subject.job, await linesOf(subject.job));
    case 'order':
      return presentOrder(subject.order, await unroutedLineItems(subject.order));
    case 'resellerStore':
      return presentResellerStore(subject.store);
    case 'sourceStore':
      return presentSourceStore(subject.store);
  }
};

/** The table's change stream consumer: the events the writes report (CONTRACT.md §14). */
export const handler = lambdaHandler(
  streamBatchHandler((written) => recordStreamWrite(written, present)),
  metricsMiddleware(),
);
