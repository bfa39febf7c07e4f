import { functionNameVariable, queuesUsedBy, queueUrlVariable } from './access.js';
import type { FunctionSpec } from './functions.js';
import type { QueueName } from './routes.js';

/**
 * Where a function's resources are: CloudFormation references in the stack, the local engines'
 * addresses in the local runtime.
 */
export interface EnvironmentRefs {
  stage: string;
  tableName: string;
  /** The secrets key (its ARN on AWS). */
  keyId: string;
  queueUrl: (queue: QueueName) => string;
  /** The deployed name of a function of lib/routes.ts (one that another invokes). */
  functionName: (name: string) => string;
  shopDomainSuffix: string;
  /** `sk_live_` on AWS, `sk_test_` locally. */
  apiKeyPrefix: string;
  sync: SyncTimings;
  /** How often every active store is polled (CONTRACT.md §10.7): 900 on AWS, a few seconds locally. */
  pollIntervalSeconds: number;
  /** How long an ended job is kept before the table's TTL removes it (`-c jobRetentionDays`). */
  jobRetentionDays: number;
  /** How long an ended order's personal data is kept (`-c personalDataRetentionDays`; a fraction locally). */
  personalDataRetentionDays: number;
  /** Where the platforms send webhooks (CONTRACT.md §12.1): `-c publicUrl`, else the API's URL. */
  publicUrl: string;
  /** The changes a second one API key may request (`-c apiKeyRateLimit`); 0: none counted (locally by default). */
  apiKeyRateLimit: number;
}

/** The timings of sync jobs (CONTRACT.md §1, §6; docs/design.md), for the functions that move them. */
export interface SyncTimings {
  /** How long a job may stay without a move before the reconciler sends it a new message. */
  leaseSeconds: number;
  /** The wait after the 1st, 2nd, … failed receive of a message. */
  backoffSeconds: number[];
  /** How long a job may be throttled (429) before it is dead. */
  throttleBudgetSeconds: number;
}

/** Functions that send or receive sync or fulfillment messages: they move jobs or propagations, by these timings. */
const WORK_QUEUES: QueueName[] = ['sync', 'syncDlq', 'fulfillment', 'fulfillmentDlq'];
const movesWork = (fn: Pick<FunctionSpec, 'access' | 'consumes'>) =>
  [...queuesUsedBy(fn.access), ...(fn.consumes ? [fn.consumes] : [])].some((queue) => WORK_QUEUES.includes(queue));

/** Functions that may write the table's items. */
const TABLE_WRITES = ['PutItem', 'UpdateItem', 'TransactWriteItems'];
const writesTable = (fn: Pick<FunctionSpec, 'access'>) =>
  (fn.access.table ?? []).some((action) => TABLE_WRITES.includes(action));

/** A bearer-key route that changes something: its requests count against the key's rate (shared/http/handler.ts). */
export const isRateLimited = (fn: Partial<Pick<FunctionSpec, 'route'>>) =>
  fn.route?.auth === 'apiKey' && fn.route.method !== 'GET';

export const SERVICE_NAME = 'reseller-routing';

/**
 * The variables shared/core/config.ts and Powertools read, for one function: the key only if it
 * encrypts or decrypts, and the URL of each queue it sends to or consumes, and no other, so a
 * function cannot reach what its `access` does not declare even by mistake.
 */
export const functionEnvironment = (
  fn: Pick<FunctionSpec, 'access' | 'consumes'> & Partial<Pick<FunctionSpec, 'route'>> & { name?: string },
  refs: EnvironmentRefs,
): Record<string, string> => {
  const environment: Record<string, string> = {
    STAGE: refs.stage,
    TABLE_NAME: refs.tableName,
    PLATFORM_SHOP_DOMAIN_SUFFIX: refs.shopDomainSuffix,
    API_KEY_PREFIX: refs.apiKeyPrefix,
    POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
  };
  if (fn.access.key?.actions.length) environment.KMS_KEY_ID = refs.keyId;
  if (movesWork(fn)) {
    environment.SYNC_LEASE_SECONDS = String(refs.sync.leaseSeconds);
    environment.SYNC_BACKOFF_SECONDS = refs.sync.backoffSeconds.join(',');
    environment.THROTTLE_BUDGET_SECONDS = String(refs.sync.throttleBudgetSeconds);
  }
  // Whatever writes the table may end a job (a move, a job created cancelled) and sets its `expiresAt` from it.
  if (writesTable(fn)) environment.JOB_RETENTION_DAYS = String(refs.jobRetentionDays);
  if (isRateLimited(fn) && refs.apiKeyRateLimit > 0) environment.API_KEY_RATE_LIMIT = String(refs.apiKeyRateLimit);
  if (fn.name === 'RetentionSweep') environment.PERSONAL_DATA_RETENTION_DAYS = String(refs.personalDataRetentionDays);
  if (fn.access.publicUrl) environment.PUBLIC_URL = refs.publicUrl;
  if (queuesUsedBy(fn.access).includes('poll')) environment.POLL_INTERVAL_SECONDS = String(refs.pollIntervalSeconds);
  for (const name of fn.access.invokes ?? []) environment[functionNameVariable(name)] = refs.functionName(name);
  for (const queue of new Set([...queuesUsedBy(fn.access), ...(fn.consumes ? [fn.consumes] : [])])) {
    environment[queueUrlVariable(queue)] = refs.queueUrl(queue);
  }
  return environment;
};
