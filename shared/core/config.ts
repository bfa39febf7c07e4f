/** Environment of a function, read when first needed (never at import, so the local runtime can set it first). */
const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is not set`);
  return value;
};

export const config = {
  tableName: () => required('TABLE_NAME'),
  keyId: () => required('KMS_KEY_ID'),
  syncQueueUrl: () => required('SYNC_QUEUE_URL'),
  fulfillmentQueueUrl: () => required('FULFILLMENT_QUEUE_URL'),
  shopDomainSuffix: () => process.env.PLATFORM_SHOP_DOMAIN_SUFFIX || 'myshopify.com',
  apiKeyPrefix: () => process.env.API_KEY_PREFIX || 'sk_live_',
  /** Jobs still `pending` this long after being enqueued are enqueued again by the sweep. */
  sweepAfterSeconds: () => Number(process.env.SWEEP_AFTER_SECONDS || 120),
  /** Times the fulfillment DLQ handler puts a message back (15 minutes later) before the fulfillment is `dead`. */
  fulfillmentRedrives: () => Number(process.env.FULFILLMENT_REDRIVES || 48),
  /** Seconds after keeping a fulfillment that it is looked at again (its job may have completed meanwhile). */
  keptRecheckSeconds: () => Number(process.env.FULFILLMENT_RECHECK_SECONDS || 60),
};
