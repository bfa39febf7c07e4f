import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tsImport } from 'tsx/esm/api';

/**
 * What every integration file's runtime would otherwise make for itself, made once for the run:
 * - The functions and the console, bundled: each runtime (some files start several, and `npm start`
 *   in child processes) would run esbuild over every function again, seconds of both cores each
 *   time. The runtimes, and the child processes that inherit the environment, find the directory in
 *   LOCAL_RUNTIME_BUNDLES.
 * - One DynamoDB Local for the in-memory runtimes, each with a table of its own (lib/local/dynamodb.ts
 *   `SHARED_DYNAMODB_ENV`): a Java start is seconds of both cores, and one that lives for the run has
 *   its code compiled once. A runtime on a data directory (the crash tests' `npm start`, which does not
 *   inherit the variable) still starts its own. The heap is larger than a runtime's own: both jest
 *   workers' runtimes use it at once.
 * Jest loads this file outside its module system, so the runtime (ESM) is imported through tsx; the
 * teardown finds the Java process in `globalThis`, as jest lets a global set-up hand it on.
 */
export default async () => {
  const runtime: typeof import('../../lib/local/runtime.js') = await tsImport('../../lib/local/runtime.ts', __filename);
  const dynamodb: typeof import('../../lib/local/dynamodb.js') = await tsImport(
    '../../lib/local/dynamodb.ts',
    __filename,
  );
  const dir = mkdtempSync(join(tmpdir(), 'reseller-routing-test-bundles-'));
  const [, shared] = await Promise.all([runtime.bundleRuntime(dir), dynamodb.startDynamoDbLocal(undefined, 1024)]);
  process.env[runtime.PREBUILT_BUNDLES_ENV] = dir;
  process.env[dynamodb.SHARED_DYNAMODB_ENV] = shared.endpoint;
  (globalThis as { sharedDynamoDb?: { stop(): Promise<void> } }).sharedDynamoDb = shared;
};
