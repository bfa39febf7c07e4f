import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, stop } from 'esbuild';
import { ESBUILD_OPTIONS } from '../bundling.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BOOTSTRAP = resolve(ROOT, 'lib/local/bootstrap.ts');

export interface Bundles {
  /** The environment's bootstrap, the worker thread's main module. */
  bootstrap: string;
  /** The bundle of a handler module (`functions/<handler>.ts` → absolute path of its `.mjs`). */
  of(entry: string): string;
  remove(): void;
}

/**
 * Bundles every handler, and the bootstrap of the execution environments, as Lambda gets them
 * (lib/bundling.ts: esbuild, ESM for Node 24, the AWS SDK inside), but not minified. The entries
 * share chunks (esbuild's splitting), so the bootstrap and the handler of one environment share
 * one instance of each module (the SDK client class the bootstrap hooks, the logger it gives the
 * context). A thread loads plain JavaScript, with no TypeScript loader: on a quiet machine in
 * about a fifth of the time and half the memory tsx needs (~20 MB instead of ~40 MB per thread).
 * `define` is esbuild's: the console's files (lib/console-build.ts).
 */
export const bundleFunctions = async (
  entries: string[],
  define: Record<string, string> = {},
  into?: string,
): Promise<Bundles> => {
  const outdir = into ?? mkdtempSync(join(tmpdir(), 'reseller-routing-functions-'));
  try {
    await build({
      ...ESBUILD_OPTIONS,
      entryPoints: [BOOTSTRAP, ...entries.map((entry) => resolve(ROOT, entry))],
      absWorkingDir: ROOT,
      outbase: ROOT,
      outdir,
      outExtension: { '.js': '.mjs' },
      splitting: true,
      define,
      // Readable stack traces locally, and a faster build; the rest is what the stack deploys.
      minify: false,
      logLevel: 'error',
    });
  } catch (error) {
    rmSync(outdir, { recursive: true, force: true });
    throw error;
  } finally {
    // esbuild's service process would otherwise stay for the life of the runtime (~100 MB).
    await stop();
  }
  return bundlesIn(outdir, () => rmSync(outdir, { recursive: true, force: true }));
};

/** The bundles in `outdir`, made by bundleFunctions; `remove` is the owner's. */
export const bundlesIn = (outdir: string, remove: () => void = () => undefined): Bundles => {
  const out = (source: string) => join(outdir, relative(ROOT, source)).replace(/\.ts$/, '.mjs');
  return { bootstrap: out(BOOTSTRAP), of: (entry) => out(resolve(ROOT, entry)), remove };
};
