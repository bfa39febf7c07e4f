import { SQSClient } from '@aws-sdk/client-sqs';

// Queue URLs name their own host; the endpoint (AWS_ENDPOINT_URL_SQS locally) decides where calls go.
export const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });

/** SQS delays a message by at most 15 minutes. */
export const MAX_DELAY_SECONDS = 900;

/** A wanted delay as SQS takes it: whole seconds, 0 to 15 minutes. */
export const sqsDelay = (seconds: number) => Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil(seconds)));
