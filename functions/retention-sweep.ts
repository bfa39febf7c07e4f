import { lambdaHandler, metricsMiddleware } from '../shared/core/telemetry.js';
import { sweepPersonalData } from '../shared/privacy/retention.js';

/**
 * Scheduled, daily: erases the personal data of orders whose jobs all ended PERSONAL_DATA_RETENTION_DAYS
 * ago (CONTRACT.md §13). The invocation's remaining time bounds the run; the next one reads on.
 */
export const handler = lambdaHandler(
  (_event: unknown, context) => sweepPersonalData(() => context.getRemainingTimeInMillis()),
  metricsMiddleware(),
);
