import { Logger } from '@aws-lambda-powertools/logger';

/** Structured JSON logs. Nothing secret is ever passed to it: store objects are logged by id only. */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'reseller-routing' });
