import { StartupError } from '../lib/local/errors.js';
import { type LocalRuntime, startLocalRuntime } from '../lib/local/runtime.js';
import { startOptions } from './cli/start-options.js';

/** `npm start`: the whole service locally, configured by the variables of CONTRACT.md §1. */
const env = process.env;
const started = performance.now();

/** What the user can fix is said in one line, with no stack trace, and the exit code is 1. */
const refuse = (message: string): never => {
  console.error(`npm start: ${message}`);
  process.exit(1);
};

let options: ReturnType<typeof startOptions>;
let runtime: LocalRuntime;
try {
  options = startOptions(env);
  runtime = await startLocalRuntime(options);
} catch (error) {
  if (error instanceof StartupError) refuse(error.message);
  throw error;
}

const row = (what: string, where: string) => console.log(`  ${what.padEnd(20)}${where}`);
console.log(`Reseller order routing is running (ready in ${((performance.now() - started) / 1000).toFixed(1)} s)`);
row('API', runtime.apiUrl);
row('Operator console', `${runtime.apiUrl}/console/`);
row(
  'Platform simulator',
  runtime.simulator ? runtime.simulator.url : `off; platform calls go to ${env.PLATFORM_API_URL}`,
);
row('DynamoDB Local', `${runtime.endpoints.dynamodb}  table ${runtime.tableName}`);
row(
  'SQS (fauxqs)',
  `${runtime.endpoints.sqs}  sync, fulfillment, poll and their DLQs; visibility ${options.visibilityTimeoutSeconds} s, ` +
    `DLQ after ${options.maxReceiveCount} receives`,
);
row('KMS stand-in', runtime.endpoints.kms);
row(
  'Data',
  runtime.dataDir
    ? `${runtime.dataDir}, on disk: table, queues with their messages, KMS key (kept across restarts)`
    : 'in memory (DATA_DIR=:memory:): nothing is kept after a stop',
);
row(
  'Retention',
  `personal data erased ${options.personalDataRetentionDays} days after an order's jobs ended ` +
    '(PERSONAL_DATA_RETENTION_DAYS; the sweep runs every minute)',
);
row('Functions', 'each in execution environments of its own (worker threads), started on first use');
console.log('API keys accepted (Authorization: Bearer <key>):');
for (const { ownerId, key } of runtime.apiKeys) console.log(`  ${ownerId}: ${key}`);

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  console.log('Stopping: finishing the invocations under way…');
  await runtime.stop();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
