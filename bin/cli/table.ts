import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Io } from './command-line.js';

/**
 * How the tools that work on the table itself (`npm run keys`, `npm run backfill-indexes`) find
 * it: a deployed stack's with `--table <name>` and the usual AWS credentials and region; else the
 * table of a running `npm start` (found through `<DATA_DIR>/endpoints.json`), or, when none runs,
 * the data in DATA_DIR directly, through a DynamoDB Local of the tool's own.
 */

const isRunning = (pid: unknown) => {
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Points the shared DynamoDB code at the table (it reads the environment when first loaded, so a
 * tool imports it only after this) and answers how to let go of what was started for it.
 */
const connect = async (tableName: string | undefined, io: Io): Promise<() => Promise<void>> => {
  if (tableName) {
    process.env.TABLE_NAME = tableName;
    return async () => {};
  }
  const dataDir = resolve(io.env.DATA_DIR && io.env.DATA_DIR !== ':memory:' ? io.env.DATA_DIR : '.local');
  const running = join(dataDir, 'endpoints.json');
  let target: { dynamodb: string; tableName: string };
  let stop = async () => {};
  const found = existsSync(running) ? JSON.parse(readFileSync(running, 'utf8')) : undefined;
  if (found && isRunning(found.pid)) target = found;
  else {
    // No service runs (or it died without cleaning up): open its data with a DynamoDB Local of our own.
    const { ensureTable, startDynamoDbLocal } = await import('../../lib/local/dynamodb.js');
    const { TABLE_NAME } = await import('../../lib/local/runtime.js');
    const local = await startDynamoDbLocal(dataDir);
    stop = local.stop;
    await ensureTable(local.endpoint, TABLE_NAME);
    target = { dynamodb: local.endpoint, tableName: TABLE_NAME };
  }
  Object.assign(process.env, {
    TABLE_NAME: target.tableName,
    AWS_ENDPOINT_URL_DYNAMODB: target.dynamodb,
    AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
  return stop;
};

/** Opens the table for `work`, and always lets go of it. */
export const withTable = async <T>(tableName: string | undefined, io: Io, work: () => Promise<T>) => {
  const stop = await connect(tableName, io);
  try {
    return await work();
  } finally {
    await stop();
  }
};
