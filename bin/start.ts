import { startLocalRuntime } from '../lib/local/runtime.js';

/** `npm start`: the whole service locally, configured by the variables of CONTRACT.md §1. */
const env = process.env;
const number = (name: string, fallback: number) => {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`${name} must be a non-negative integer`);
  return parsed;
};

const simPort = number('PLATFORM_SIM_PORT', 3001);
const runtime = await startLocalRuntime({
  port: number('PORT', 3000),
  dataDir: env.DATA_DIR || '.local',
  apiKeys: env.API_KEYS,
  simulator: simPort === 0 ? false : { port: simPort },
  platformApiUrl: env.PLATFORM_API_URL || undefined,
  shopDomainSuffix: env.PLATFORM_SHOP_DOMAIN_SUFFIX || undefined,
  visibilityTimeoutSeconds: number('SYNC_VISIBILITY_TIMEOUT_SECONDS', 2),
  maxReceiveCount: number('MAX_RECEIVE_COUNT', 3),
  throttleBudgetSeconds: number('THROTTLE_BUDGET_SECONDS', 86_400),
});

console.log(`Reseller order routing is running at ${runtime.apiUrl}`);
if (runtime.simulator) console.log(`Platform simulator: ${runtime.simulator.url}`);
console.log(`Data: ${env.DATA_DIR === ':memory:' ? 'in memory' : env.DATA_DIR || '.local/'}`);
console.log('API keys accepted (Authorization: Bearer <key>):');
for (const { ownerId, key } of runtime.apiKeys) console.log(`  ${ownerId}: ${key}`);

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  console.log('Stopping…');
  await runtime.stop();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
