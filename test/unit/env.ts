// The environment a deployed function has; unit tests mock every client, so nothing is reached.
Object.assign(process.env, {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  TABLE_NAME: 'table-under-test',
  KMS_KEY_ID: 'arn:aws:kms:us-east-1:000000000000:key/test',
  SYNC_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/sync',
  FULFILLMENT_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/fulfillment',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  // Business metrics are EMF lines on stdout; integration tests read them, unit tests need not see them.
  POWERTOOLS_METRICS_DISABLED: 'true',
});
