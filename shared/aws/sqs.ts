import { SQSClient } from '@aws-sdk/client-sqs';

// Queue URLs name their own host; the endpoint (AWS_ENDPOINT_URL_SQS locally) decides where calls go.
export const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
