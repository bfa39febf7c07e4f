/**
 * AWS prices the cost benchmark (bench/cost.ts) multiplies its counts by: us-east-1, on-demand,
 * list prices without the free tier, as published on the services' pricing pages
 * (aws.amazon.com/api-gateway/pricing, /lambda/pricing, /dynamodb/pricing/on-demand,
 * /sqs/pricing, /kms/pricing, /cloudwatch/pricing), as of 2026-11. The one place to update when AWS changes them.
 */
export const PRICES = {
  region: 'us-east-1',
  asOf: '2026-11',
  /** API Gateway HTTP API: per request (first 300 million a month; each 512 KB of a request counts as one). */
  httpApiRequest: 1.0 / 1e6,
  /** Lambda on arm64 (Graviton): per request. */
  lambdaRequest: 0.2 / 1e6,
  /** Lambda on arm64: per GB-second of billed duration (rounded up to 1 ms per invocation), first tier. */
  lambdaGbSecond: 0.0000133334,
  /** DynamoDB on-demand (Standard table class): per write request unit. */
  dynamoWru: 0.625 / 1e6,
  /** DynamoDB on-demand (Standard table class): per read request unit. */
  dynamoRru: 0.125 / 1e6,
  /**
   * SQS standard queue: per request (each 64 KiB chunk of a request's payload counts as one;
   * first 100 billion a month).
   */
  sqsRequest: 0.4 / 1e6,
  /** KMS: per API request (Encrypt, Decrypt, …) with a customer managed key. */
  kmsRequest: 0.03 / 10_000,
  /** KMS: per customer managed key a month (rotated keys included). */
  kmsKeyMonth: 1.0,
  /** CloudWatch: per metric of a standard-resolution alarm a month (a metric-math alarm pays each of its metrics). */
  cloudwatchAlarmMetric: 0.1,
  /** CloudWatch: per custom metric a month (first 10,000): EMF metrics, metric filters, API route metrics. */
  cloudwatchCustomMetric: 0.3,
  /** DynamoDB Standard table class: per GB-month stored (first 25 GB free, not counted here). */
  dynamoStorageGbMonth: 0.25,
  /** DynamoDB continuous backups (point-in-time recovery): per GB-month of the table. */
  dynamoPitrGbMonth: 0.2,
  /** CloudWatch Logs: per GB ingested (standard log class). */
  cloudwatchLogsIngestedGb: 0.5,
  /** CloudWatch Logs: per GB-month archived. */
  cloudwatchLogsStoredGbMonth: 0.03,
  /** CloudWatch: per dashboard a month (beyond the account's first three). */
  cloudwatchDashboard: 3.0,
} as const;

export type PriceTable = typeof PRICES;
