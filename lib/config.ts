import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import { TABLE_DEFINITION } from '../shared/dynamo/table-definition.js';

/**
 * Deployment settings, read from CDK context (`cdk.json`'s `context`, or `-c key=value` on the
 * command line). Every key is optional; the defaults below describe a working `dev` stage.
 */
export interface DeployConfig {
  /** `-c stage=…`, default `dev`. Part of the stack name (`ResellerRouting-<stage>`); `prod` keeps data on delete. */
  stage: string;
  /** True for `stage=prod`: table, key and log groups are retained and the table has deletion protection. */
  isProd: boolean;
  /**
   * What deleting the stack does to the log groups, the queues and the alarm topic's key: in prod
   * RETAIN_ON_UPDATE_OR_DELETE (CloudFormation's `RetainExceptOnCreate`: kept, except by the rollback of
   * the deployment that created them, so a failed first deploy leaves nothing behind), else DESTROY.
   */
  removalPolicy: RemovalPolicy;
  /**
   * What deleting the stack does to the table and the secrets key, together: RETAIN_ON_UPDATE_OR_DELETE
   * in prod or while deletion protection is on (kept, unless the deployment that created them rolls
   * back), else DESTROY. One policy for both, because the table's secrets are
   * ciphertexts of that key: a kept table whose key is scheduled for deletion would be unreadable.
   */
  dataRemovalPolicy: RemovalPolicy;
  /**
   * `-c maxReceiveCount=…`, default 3 (SPEC 8.2: a failed job is retried up to 3 times). Receives
   * before a message goes to its DLQ.
   */
  maxReceiveCount: number;
  /** `-c memorySize=…`, default 256 (MB) for every function. */
  memorySize: number;
  /** `-c throttleRate=…`, default 50: steady requests per second of the API stage. */
  throttleRate: number;
  /** `-c throttleBurst=…`, default 100: burst of the API stage. */
  throttleBurst: number;
  /** `-c logRetentionDays=…`, default 30 (90 in prod); a value CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, …). */
  logRetentionDays: RetentionDays;
  /**
   * `-c alarmEmail=…`: an encrypted topic of the stack's own subscribes this address to every alarm.
   * Optional in dev; prod needs it or `alarmTopicArn`, so its alarms reach someone.
   */
  alarmEmail?: string;
  /**
   * `-c webhookThrottleRate=…`, default 1,000 a second: each webhook route's own throttle, apart from
   * the API's, sized for a sale (200 orders a second is a fifth of it; docs/design.md, "Intake").
   */
  webhookThrottleRate: number;
  /** `-c webhookThrottleBurst=…`, default 2,000. */
  webhookThrottleBurst: number;
  /**
   * `-c authorizerCacheSeconds=…`, default 60, at most 3,600: how long API Gateway keeps the
   * authorizer's verdict for one `Authorization` header. 0 turns the cache off (and with it the
   * identity source: a request without the header then reaches the authorizer, docs/design.md).
   */
  authorizerCacheSeconds: number;
  /**
   * `-c domainName=api.example.com`: the API's own host name. It needs `certificateArn` (an ACM
   * certificate of this region) or `hostedZoneId` with `hostedZoneName` (a DNS-validated certificate
   * and the alias record are made); the execute-api endpoint is then disabled.
   */
  domainName?: string;
  /**
   * `-c publicUrl=https://…`: where the platforms send webhooks (CONTRACT.md §12.1), when not the API's
   * own URL (a proxy, a CDN in front of it).
   */
  publicUrl?: string;
  /** `-c certificateArn=…`: an existing ACM certificate for `domainName`, in the stack's region. */
  certificateArn?: string;
  /** `-c hostedZoneId=…`: the Route 53 zone of `domainName`, for a DNS-validated certificate and the record. */
  hostedZoneId?: string;
  /** `-c hostedZoneName=…`: that zone's name (`example.com`). */
  hostedZoneName?: string;
  /**
   * `-c jobRetentionDays=…`, default 365 (a year of history after a job's end; issue 44: each month kept
   * costs about $1.20 at a million orders a month, storage and backups): how long an ended job (and what
   * hangs off it) is kept before the table's TTL removes it; functions that end jobs get it as JOB_RETENTION_DAYS.
   * Audit entries (after their write), unrouted orders (after their receipt) and a routed order's mark and
   * body parts (after its jobs ended) are kept as long (docs/performance.md, "What the table keeps").
   */
  jobRetentionDays: number;
  /**
   * `-c routeMetrics=true`, default off: API Gateway's detailed metrics (six custom metrics, $1.80 a month)
   * on each webhook route. Off because the access log's metric filters count and alarm on their 429s and
   * 5xx already (lib/constructs/api.ts); the API's own metrics (requests, 4xx, 5xx, latency) are free.
   */
  routeMetrics: boolean;
  /**
   * `-c logLevel=…`, default WARN (as `npm start`): the functions' application log level (Lambda's
   * advanced logging controls, JSON lines); INFO adds each order's happy path (about 1.2 KB an order,
   * $1.60 a month at a million). Lambda's own lines (START, END, REPORT) are logged from WARN only.
   * Powertools' sampling cannot add a sample of INFO under it: Lambda's level (AWS_LAMBDA_LOG_LEVEL)
   * takes precedence over the Logger's, and Lambda drops the lines below it.
   */
  logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /**
   * `-c personalDataRetentionDays=…`, default 90 (CONTRACT.md §13): how long after every job of an
   * order ended its personal data is kept; the retention sweep gets it as PERSONAL_DATA_RETENTION_DAYS.
   */
  personalDataRetentionDays: number;
  /**
   * `-c apiKeyRateLimit=…`, default 10: the POST, PATCH and DELETE requests one API key may make in one
   * second, all routes together (docs/design.md, "Per-key rate limits"); 0: no limit. The key's routes
   * that change things get it as API_KEY_RATE_LIMIT.
   */
  apiKeyRateLimit: number;
  /**
   * `-c pollMessageRetentionSeconds=…`, default 7,200 (and never below the poll interval): how long a
   * poll message may wait. An older one is obsolete: the next runs poll the store again.
   */
  pollMessageRetentionSeconds: number;
  /**
   * `-c failedRecordsAlarmPercent=…`, default 50: the share of a consumer's receives that fail (are
   * not deleted), over 15 minutes, that raises its alarm; a systemic fault fails all of them.
   */
  failedRecordsAlarmPercent: number;
  /** `-c platformErrorsPer15Minutes=…`, default 50: supplier and reseller 5xx and network failures that alarm. */
  platformErrorsPer15Minutes: number;
  /** `-c webhook429Threshold=…`, default 1: webhook deliveries answered 429 within 5 minutes that alarm. */
  webhook429Threshold: number;
  /** `-c webhook5xxThreshold=…`, default 5: webhook deliveries answered 5xx within 5 minutes that alarm. */
  webhook5xxThreshold: number;
  /** `-c alarmTopicArn=…`, default none: an existing SNS topic every alarm notifies (wins over `alarmEmail`). */
  alarmTopicArn?: string;
  /** `-c shopDomainSuffix=…`, default `myshopify.com`: becomes `PLATFORM_SHOP_DOMAIN_SUFFIX`. */
  shopDomainSuffix: string;
  /** `-c api5xxThreshold=…`, default 5: API 5xx responses within 5 minutes that raise the alarm. */
  api5xxThreshold: number;
  /**
   * `-c queueAgeAlarmSeconds=…`: age of the oldest message of a work queue that raises its alarm; by
   * default 15 minutes above the longest a message waits on purpose (its backoff, a 429's deferral).
   */
  queueAgeAlarmSeconds: number;
  /** `-c deadJobsPerHour=…`, default 1: sync jobs going dead within an hour that raise the alarm. */
  deadJobsPerHour: number;
  /**
   * `-c deletionProtection=false` to turn it off (default on in every stage): the table cannot be
   * deleted by accident. While it is on, `cdk destroy` keeps the table and its key (`dataRemovalPolicy`);
   * a dev stage deployed with it off loses both.
   */
  deletionProtection: boolean;
  /** `-c tracing=true`, default false: X-Ray active tracing on every function. */
  tracing: boolean;
  /** `-c throttleBudgetSeconds=…`, default 86400: how long a sync job may be throttled (429) before it is dead. */
  throttleBudgetSeconds: number;
  /**
   * `-c syncBackoffSeconds=300,1800,60` (the default): the wait after the 1st, 2nd and 3rd failed
   * receive of a sync message, so its three attempts come at 0, +5 and +35 minutes and outlast a
   * half-hour supplier outage; after the third the DLQ decides a minute later. Each at most
   * `MAX_BACKOFF_STEP_SECONDS`.
   */
  syncBackoffSeconds: number[];
  /**
   * `-c indexes=N`, default every index of shared/dynamo/table-definition.ts (7): the table's first N
   * global secondary indexes. CloudFormation adds at most one per update, so a stack deployed with
   * fewer (3, before the filtered lists) is upgraded with `-c indexes=4`, then 5, 6 and 7, one
   * deployment each (docs/design.md, "Deploying the indexes").
   */
  indexes: number;
  /**
   * `-c pollIntervalSeconds=…`, default 900 (CONTRACT.md §10.7): how often every active store is polled
   * for the orders its webhooks may have missed. A whole number of minutes (EventBridge's rate), 60 to
   * 86,400; it becomes the functions' POLL_INTERVAL_SECONDS.
   */
  pollIntervalSeconds: number;
}

/** How often every active store is polled on AWS unless `-c pollIntervalSeconds` says (CONTRACT.md §10.7). */
export const POLL_INTERVAL_SECONDS = 900;

/**
 * How long API Gateway keeps the authorizer's verdict for one key unless `-c authorizerCacheSeconds`
 * says: the longest a revoked key keeps working on AWS (README, "Command-line tools").
 */
export const DEFAULT_AUTHORIZER_CACHE_SECONDS = 60;

/** The longest an HTTP API keeps a Lambda authorizer's verdict. */
export const MAX_AUTHORIZER_CACHE_SECONDS = 3600;

/** The changes a second one API key may request, unless `-c apiKeyRateLimit` says (docs/design.md). */
export const DEFAULT_API_KEY_RATE_LIMIT = 10;

/** How long an ended job is kept, unless `-c jobRetentionDays` says (locally too). */
export const DEFAULT_JOB_RETENTION_DAYS = 365;

/** How long an ended order's personal data is kept, unless `-c personalDataRetentionDays` says (CONTRACT.md §13). */
export const DEFAULT_PERSONAL_DATA_RETENTION_DAYS = 90;

/** A poll message kept longer than this is obsolete: later runs poll its store again. */
export const POLL_MESSAGE_RETENTION_SECONDS = 7200;

/** The indexes every deployed version had (lists, lookups, in flight): an upgrade starts from them. */
export const MIN_INDEXES = 3;

export const DEFAULT_SYNC_BACKOFF_SECONDS = [300, 1800, 60];

/**
 * SQS keeps a message invisible at most 12 hours from its receive; a worker may already have held it
 * for its whole timeout (at most Lambda's 15 minutes) when it sets the backoff.
 */
export const MAX_BACKOFF_STEP_SECONDS = 43_200 - 900;

/** A 429's deferral, and the fulfillment DLQ's redrive: 15 minutes, SQS's longest message delay. */
export const LONGEST_DEFERRAL_SECONDS = 900;

/**
 * The longest a work queue's message waits on purpose before it is handled or dead-lettered: every
 * backoff step of its receives, or a deferral, whichever is longer.
 */
export const longestDeliberateDelaySeconds = (backoffSeconds: number[]) =>
  Math.max(
    LONGEST_DEFERRAL_SECONDS,
    backoffSeconds.reduce((sum, step) => sum + step, 0),
  );

/** A context value that cannot be deployed; bin/app.ts prints its message as one line, without a stack trace. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const STAGE = /^[a-z][a-z0-9-]{0,19}$/;

const RETENTION_VALUES = new Set<number>(
  Object.values(RetentionDays).filter((v): v is number => typeof v === 'number'),
);

/** Reads the typed configuration from the app's context; throws on a malformed value instead of deploying it. */
/** Typed reads of the CDK context: each a fallback when absent, a ConfigError naming the key when malformed. */
const contextReader = (scope: { node: Node }) => {
  const raw = (key: string): unknown => {
    const value = scope.node.tryGetContext(key);
    return value === '' ? undefined : value;
  };

  const str = (key: string, fallback: string): string => {
    const value = raw(key);
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'string')
      throw new ConfigError(`context ${key} must be a string, got ${JSON.stringify(value)}`);
    return value;
  };

  const optionalStr = (key: string): string | undefined => {
    const value = raw(key);
    return value === undefined || value === null ? undefined : str(key, '');
  };

  const int = (key: string, fallback: number, min: number, max: number): number => {
    const value = raw(key);
    if (value === undefined || value === null) return fallback;
    // `-c key=value` always arrives as a string; cdk.json may hold a number.
    const n =
      typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(n) || n < min || n > max)
      throw new ConfigError(`context ${key} must be an integer in ${min}..${max}, got ${JSON.stringify(value)}`);
    return n;
  };

  const bool = (key: string, fallback: boolean): boolean => {
    const value = raw(key);
    if (value === undefined || value === null) return fallback;
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
    throw new ConfigError(`context ${key} must be true or false, got ${JSON.stringify(value)}`);
  };
  return { str, optionalStr, int, bool };
};
type ContextReader = ReturnType<typeof contextReader>;

/** Where alarms go: an e-mail address or an SNS topic, one of them required in prod. */
const alarmDestination = ({ optionalStr }: ContextReader, isProd: boolean) => {
  const alarmEmail = optionalStr('alarmEmail');
  if (alarmEmail !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(alarmEmail))
    throw new ConfigError(`context alarmEmail is not an e-mail address: ${alarmEmail}`);
  const alarmTopicArn = optionalStr('alarmTopicArn');
  if (alarmTopicArn !== undefined && !/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]+$/.test(alarmTopicArn)) {
    throw new ConfigError(`context alarmTopicArn is not an SNS topic ARN: ${alarmTopicArn}`);
  }

  if (isProd && alarmEmail === undefined && alarmTopicArn === undefined) {
    throw new ConfigError(
      'stage prod needs somewhere to send its alarms: add -c alarmEmail=<address> or -c alarmTopicArn=<SNS topic ARN>',
    );
  }
  return { alarmEmail, alarmTopicArn };
};

/** The backoff steps of a failed sync attempt, and the queue-age alarm above the longest deliberate wait. */
const syncDelays = ({ str, int }: ContextReader) => {
  const backoff = str('syncBackoffSeconds', DEFAULT_SYNC_BACKOFF_SECONDS.join(','));
  const syncBackoffSeconds = backoff.split(',').map((step) => (/^\d+$/.test(step.trim()) ? Number(step) : NaN));
  if (!syncBackoffSeconds.every((step) => step <= MAX_BACKOFF_STEP_SECONDS)) {
    throw new ConfigError(
      `context syncBackoffSeconds must be seconds up to ${MAX_BACKOFF_STEP_SECONDS}, comma separated, got ${backoff}`,
    );
  }
  // The queue-age alarm must not fire for a message that only waits as told (its backoff, a deferral).
  const longestDelay = longestDeliberateDelaySeconds(syncBackoffSeconds);
  const queueAgeAlarmSeconds = int('queueAgeAlarmSeconds', longestDelay + 900, 60, 1_209_600);
  if (queueAgeAlarmSeconds <= longestDelay) {
    throw new ConfigError(
      `context queueAgeAlarmSeconds must be above ${longestDelay}, the longest a message waits on purpose`,
    );
  }
  return { syncBackoffSeconds, queueAgeAlarmSeconds };
};

/** The public URL and the custom domain, its certificate and its zone, checked to go together. */
const domainSettings = ({ optionalStr }: ContextReader) => {
  const publicUrl = optionalStr('publicUrl');
  if (publicUrl !== undefined && !/^https:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(publicUrl))
    throw new ConfigError(`context publicUrl is not an https URL without query: ${publicUrl}`);
  const domainName = optionalStr('domainName');
  if (domainName !== undefined && !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(domainName))
    throw new ConfigError(`context domainName is not a host name: ${domainName}`);
  const certificateArn = optionalStr('certificateArn');
  if (
    certificateArn !== undefined &&
    !/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[\w-]+$/.test(certificateArn)
  )
    throw new ConfigError(`context certificateArn is not an ACM certificate ARN: ${certificateArn}`);
  const hostedZoneId = optionalStr('hostedZoneId');
  const hostedZoneName = optionalStr('hostedZoneName');
  if ((hostedZoneId === undefined) !== (hostedZoneName === undefined))
    throw new ConfigError('context hostedZoneId and hostedZoneName go together: give both or neither');
  if (domainName !== undefined && certificateArn === undefined && hostedZoneId === undefined) {
    throw new ConfigError(
      'context domainName needs a certificate: add -c certificateArn=…, or -c hostedZoneId=… and hostedZoneName=…',
    );
  }
  if (domainName === undefined && (certificateArn !== undefined || hostedZoneId !== undefined))
    throw new ConfigError('context certificateArn and hostedZoneId are for a custom domain: add -c domainName=…');
  if (hostedZoneName !== undefined && domainName !== undefined && !`.${domainName}`.endsWith(`.${hostedZoneName}`))
    throw new ConfigError(`context domainName ${domainName} is not in the zone ${hostedZoneName}`);
  return { domainName, publicUrl, certificateArn, hostedZoneId, hostedZoneName };
};

/** The poll interval (whole minutes) and how long a poll message may wait: at least one interval. */
const pollSettings = ({ int }: ContextReader) => {
  const pollIntervalSeconds = int('pollIntervalSeconds', POLL_INTERVAL_SECONDS, 60, 86_400);
  if (pollIntervalSeconds % 60)
    throw new ConfigError(`context pollIntervalSeconds must be a whole number of minutes, got ${pollIntervalSeconds}`);
  const pollMessageRetentionSeconds = int(
    'pollMessageRetentionSeconds',
    Math.max(POLL_MESSAGE_RETENTION_SECONDS, pollIntervalSeconds),
    60,
    1_209_600,
  );
  if (pollMessageRetentionSeconds < pollIntervalSeconds) {
    throw new ConfigError(
      `context pollMessageRetentionSeconds must be at least the poll interval, ${pollIntervalSeconds}`,
    );
  }
  return { pollIntervalSeconds, pollMessageRetentionSeconds };
};

/** The limits and thresholds that are one bounded integer each (or a flag), with their defaults. */
const plainSettings = ({ int, bool, str }: ContextReader) => ({
  maxReceiveCount: int('maxReceiveCount', 3, 1, 1000),
  memorySize: int('memorySize', 256, 128, 10240),
  throttleRate: int('throttleRate', 50, 1, 100_000),
  throttleBurst: int('throttleBurst', 100, 1, 100_000),
  webhookThrottleRate: int('webhookThrottleRate', 1000, 1, 100_000),
  webhookThrottleBurst: int('webhookThrottleBurst', 2000, 1, 100_000),
  authorizerCacheSeconds: int(
    'authorizerCacheSeconds',
    DEFAULT_AUTHORIZER_CACHE_SECONDS,
    0,
    MAX_AUTHORIZER_CACHE_SECONDS,
  ),
  jobRetentionDays: int('jobRetentionDays', DEFAULT_JOB_RETENTION_DAYS, 1, 36_500),
  routeMetrics: bool('routeMetrics', false),
  logLevel: logLevelOf(str('logLevel', 'WARN')),
  personalDataRetentionDays: int('personalDataRetentionDays', DEFAULT_PERSONAL_DATA_RETENTION_DAYS, 1, 3_650),
  apiKeyRateLimit: int('apiKeyRateLimit', DEFAULT_API_KEY_RATE_LIMIT, 0, 100_000),
  failedRecordsAlarmPercent: int('failedRecordsAlarmPercent', 50, 1, 100),
  platformErrorsPer15Minutes: int('platformErrorsPer15Minutes', 50, 1, 1_000_000),
  webhook429Threshold: int('webhook429Threshold', 1, 1, 1_000_000),
  webhook5xxThreshold: int('webhook5xxThreshold', 5, 1, 1_000_000),
  shopDomainSuffix: str('shopDomainSuffix', 'myshopify.com'),
  api5xxThreshold: int('api5xxThreshold', 5, 1, 1_000_000),
  deadJobsPerHour: int('deadJobsPerHour', 1, 1, 1_000_000),
  tracing: bool('tracing', false),
  throttleBudgetSeconds: int('throttleBudgetSeconds', 86_400, 1, 31_536_000),
  indexes: int('indexes', TABLE_DEFINITION.globalIndexes.length, MIN_INDEXES, TABLE_DEFINITION.globalIndexes.length),
});

export const loadConfig = (scope: { node: Node }): DeployConfig => {
  const read = contextReader(scope);
  const polls = pollSettings(read);

  const stage = read.str('stage', 'dev');
  if (!STAGE.test(stage)) throw new ConfigError(`context stage must match ${STAGE}, got ${JSON.stringify(stage)}`);
  const isProd = stage === 'prod';

  const logRetentionDays = read.int('logRetentionDays', isProd ? 90 : 30, 1, 3653);
  if (!RETENTION_VALUES.has(logRetentionDays)) {
    const accepted = [...RETENTION_VALUES].sort((a, b) => a - b).join(', ');
    throw new ConfigError(`context logRetentionDays must be one of ${accepted}, got ${logRetentionDays}`);
  }
  const alarms = alarmDestination(read, isProd);
  const deletionProtection = read.bool('deletionProtection', true);
  const delays = syncDelays(read);
  const domain = domainSettings(read);
  const plain = plainSettings(read);
  if (plain.personalDataRetentionDays > plain.jobRetentionDays) {
    // The retention sweep finds an order through its jobs: a job expired first would leave its body unswept.
    const { personalDataRetentionDays: personal, jobRetentionDays: jobs } = plain;
    throw new ConfigError(`context personalDataRetentionDays (${personal}) must not exceed jobRetentionDays (${jobs})`);
  }

  return {
    stage,
    isProd,
    removalPolicy: isProd ? RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE : RemovalPolicy.DESTROY,
    dataRemovalPolicy: isProd || deletionProtection ? RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE : RemovalPolicy.DESTROY,
    ...plain,
    ...domain,
    ...polls,
    ...alarms,
    ...delays,
    logRetentionDays: logRetentionDays as RetentionDays,
    deletionProtection,
  };
};

const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
const logLevelOf = (value: string): DeployConfig['logLevel'] => {
  const level = LOG_LEVELS.find((l) => l === value.toUpperCase());
  if (!level) throw new ConfigError(`context logLevel must be one of ${LOG_LEVELS.join(', ')}, got ${value}`);
  return level;
};

/** `ResellerRouting-<stage>`. */
export const stackName = (config: Pick<DeployConfig, 'stage'>) => `ResellerRouting-${config.stage}`;
