import { config } from '../shared/core/config.js';
import { lambdaHandler, metricsMiddleware } from '../shared/core/telemetry.js';
import { enqueueStorePolls } from '../shared/polling/schedule.js';

/** Scheduled every POLL_INTERVAL_SECONDS: one message per active store on the poll queue (CONTRACT.md §10.7). */
export const handler = lambdaHandler(() => enqueueStorePolls(config.pollIntervalSeconds()), metricsMiddleware());
