import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

/**
 * `npm run keys -- create --owner <ownerId>` issues an API key and prints it once; only its
 * SHA-256 hash is stored.
 *
 * - Locally (default): against the table of a running `npm start` (found through
 *   `<DATA_DIR>/endpoints.json`), or, when none runs, against the data in DATA_DIR directly.
 * - Deployed: `--table <name>` (the stack's `TableName` output) with the usual AWS credentials
 *   and region; the key is an `sk_live_` key.
 */
const usage = 'usage: npm run keys -- create --owner <ownerId> [--table <deployed table name>]';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { owner: { type: 'string' }, table: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
});
if (values.help || positionals[0] !== 'create' || !values.owner) {
  console.error(usage);
  process.exit(values.help ? 0 : 2);
}
if (!/^[A-Za-z0-9_.:-]{1,128}$/.test(values.owner)) {
  console.error('--owner must be 1-128 characters of letters, digits, _ . : -');
  process.exit(2);
}

let cleanup = async () => {};
if (values.table) {
  process.env.TABLE_NAME = values.table;
  process.env.API_KEY_PREFIX = 'sk_live_';
} else {
  const dataDir = resolve(
    process.env.DATA_DIR && process.env.DATA_DIR !== ':memory:' ? process.env.DATA_DIR : '.local',
  );
  const { ensureTable, startDynamoDbLocal } = await import('../lib/local/dynamodb.js');
  const { TABLE_NAME } = await import('../lib/local/runtime.js');
  const running = join(dataDir, 'endpoints.json');
  let endpoint: string;
  if (existsSync(running)) {
    endpoint = JSON.parse(readFileSync(running, 'utf8')).dynamodb;
  } else {
    const local = await startDynamoDbLocal(dataDir);
    endpoint = local.endpoint;
    cleanup = local.stop;
  }
  await ensureTable(endpoint, TABLE_NAME);
  Object.assign(process.env, {
    TABLE_NAME,
    API_KEY_PREFIX: 'sk_test_',
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
}

try {
  const { generateKey, registerKey } = await import('../shared/api-keys/api-keys.js');
  const key = generateKey(process.env.API_KEY_PREFIX!);
  const record = await registerKey(key, values.owner);
  console.log(`Issued ${record.keyId} for owner ${values.owner}. The key is shown once; store it now:`);
  console.log(key);
} finally {
  await cleanup();
}
