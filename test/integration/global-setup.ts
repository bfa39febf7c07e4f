import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tsImport } from 'tsx/esm/api';

/**
 * Bundles the functions and the console once for the whole run: every integration file starts its
 * own runtime (some several, and `npm start` in child processes), and each would otherwise run
 * esbuild over every function again, seconds of both cores each time. The runtimes, and the child
 * processes that inherit the environment, find the directory in LOCAL_RUNTIME_BUNDLES.
 * Jest loads this file outside its module system, so the runtime (ESM) is imported through tsx.
 */
export default async () => {
  const runtime: typeof import('../../lib/local/runtime.js') = await tsImport('../../lib/local/runtime.ts', __filename);
  const dir = mkdtempSync(join(tmpdir(), 'reseller-routing-test-bundles-'));
  await runtime.bundleRuntime(dir);
  process.env[runtime.PREBUILT_BUNDLES_ENV] = dir;
};
