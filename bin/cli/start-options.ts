import { DEFAULT_PERSONAL_DATA_RETENTION_DAYS } from '../../lib/config.js';
import { StartupError } from '../../lib/local/errors.js';
import type { LocalRuntimeOptions } from '../../lib/local/runtime.js';

/** The longest retention `-c personalDataRetentionDays` takes on AWS (lib/config.ts), ten years. */
const MAX_RETENTION_DAYS = 3_650;

/**
 * `npm start`'s variables (README.md, CONTRACT.md §1) as the local runtime's options. A value the user
 * must fix throws a StartupError naming the variable, which `npm start` prints as its one line.
 */
export const startOptions = (env: NodeJS.ProcessEnv) => {
  const given = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : (env[name] as string));
  const integer = (name: string, fallback: number) => {
    const value = given(name);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < 0)
      throw new StartupError(`${name} must be a non-negative integer, got '${value}'`);
    return parsed;
  };
  /** Days, a fraction of one included (to watch the sweep erase within minutes), above 0. */
  const days = (name: string, fallback: number) => {
    const value = given(name);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!/^\d*\.?\d+$/.test(value.trim()) || !(parsed > 0) || parsed > MAX_RETENTION_DAYS)
      throw new StartupError(
        `${name} must be a number of days above 0 and at most ${MAX_RETENTION_DAYS}, got '${value}'`,
      );
    return parsed;
  };

  const simPort = integer('PLATFORM_SIM_PORT', 3001);
  return {
    port: integer('PORT', 3000),
    dataDir: given('DATA_DIR') ?? '.local',
    apiKeys: given('API_KEYS'),
    simulator: simPort === 0 ? false : { port: simPort },
    platformApiUrl: given('PLATFORM_API_URL'),
    shopDomainSuffix: given('PLATFORM_SHOP_DOMAIN_SUFFIX'),
    visibilityTimeoutSeconds: integer('SYNC_VISIBILITY_TIMEOUT_SECONDS', 2),
    maxReceiveCount: integer('MAX_RECEIVE_COUNT', 3),
    throttleBudgetSeconds: integer('THROTTLE_BUDGET_SECONDS', 86_400),
    // Every active store is polled for what its webhooks may have missed (CONTRACT.md §10.7).
    pollIntervalSeconds: integer('POLL_INTERVAL_SECONDS', 5) || 5,
    // The retention sweep's (CONTRACT.md §13), run every minute locally.
    personalDataRetentionDays: days('PERSONAL_DATA_RETENTION_DAYS', DEFAULT_PERSONAL_DATA_RETENTION_DAYS),
  } satisfies LocalRuntimeOptions;
};
