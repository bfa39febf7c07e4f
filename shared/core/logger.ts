import { AsyncLocalStorage } from 'node:async_hooks';
import { LogFormatter, Logger, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';

/**
 * What one piece of work is about (a received message's job: `jobId`, `resellerStoreId`,
 * `externalOrderId`, the `request_id` that sent it). A queue consumer works on its batch's messages
 * side by side in one invocation, so this cannot live on the logger, which the messages share: it
 * follows each message's own asynchronous calls instead, whatever module logs.
 */
const workContext = new AsyncLocalStorage<LogAttributes>();

/** Powertools' own line (its standard keys, in its order), plus the attributes of the work in hand. */
class WorkContextFormatter extends LogFormatter {
  formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    const lambda = attributes.lambdaContext;
    return new LogItem({
      attributes: {
        level: attributes.logLevel,
        message: attributes.message,
        timestamp: this.formatTimestamp(attributes.timestamp),
        service: attributes.serviceName,
        cold_start: lambda?.coldStart,
        function_arn: lambda?.invokedFunctionArn,
        function_memory_size: lambda?.memoryLimitInMB,
        function_name: lambda?.functionName,
        function_request_id: lambda?.awsRequestId,
        sampling_rate: attributes.sampleRateValue,
        xray_trace_id: attributes.xRayTraceId,
      },
    }).addAttributes({ ...additional, ...workContext.getStore() });
  }
}

/** Structured JSON logs. Nothing secret is ever passed to it: store objects are logged by id only. */
export const logger = new Logger({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'reseller-routing',
  logFormatter: new WorkContextFormatter(),
});

/** Runs `work` with `attributes` on every line it logs, in any module, until it ends. */
export const withLogContext = <T>(attributes: LogAttributes, work: () => Promise<T>): Promise<T> =>
  workContext.run({ ...workContext.getStore(), ...withoutUndefined(attributes) }, work);

/**
 * A queue message's work, in its log context. An unexpected error is logged there, where the job's
 * attributes still are (the batch processor only reports the message as failed), then thrown on.
 */
export const withMessageContext = <T>(attributes: LogAttributes, unexpected: string, work: () => Promise<T>) =>
  withLogContext(attributes, async () => {
    try {
      return await work();
    } catch (error) {
      logger.error(unexpected, error as Error);
      throw error;
    }
  });

/** Adds to the attributes of the work in hand what became known since it started (the job, once loaded). */
export const addLogContext = (attributes: LogAttributes) => {
  const store = workContext.getStore();
  if (store) Object.assign(store, withoutUndefined(attributes));
};

const withoutUndefined = (attributes: LogAttributes) =>
  Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== undefined));
