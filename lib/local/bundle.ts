import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile, stop } from 'esbuild';
import { ESBUILD_OPTIONS, ESM_REQUIRE_SHIM } from '../bundling.js';
import { LOADED_OUTPUTS } from './protocol.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BOOTSTRAP = resolve(ROOT, 'lib/local/bootstrap.ts');

export interface Bundles {
  /** The environment's bootstrap, the worker thread's main module. */
  bootstrap: string;
  /** The bundle of a handler module (`functions/<handler>.ts` → absolute path of its `.mjs`). */
  of(entry: string): string;
  remove(): void;
}

/** Where the build's metafile is kept beside the bundles: which source modules each output holds. */
const METAFILE = 'metafile.json';

/** Each output's first statement adds its own URL to its thread's LOADED_OUTPUTS (the banner, below). */
const MARK_LOADED = `(globalThis.${LOADED_OUTPUTS} ??= new Set()).add(import.meta.url);`;

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
    const { metafile } = await build({
      ...ESBUILD_OPTIONS,
      metafile: true,
      entryPoints: [BOOTSTRAP, ...entries.map((entry) => resolve(ROOT, entry))],
      absWorkingDir: ROOT,
      outbase: ROOT,
      outdir,
      outExtension: { '.js': '.mjs' },
      splitting: true,
      banner: { js: `${ESM_REQUIRE_SHIM} ${MARK_LOADED}` },
      define,
      // Readable stack traces locally, and a faster build; the rest is what the stack deploys.
      minify: false,
      logLevel: 'error',
    });
    writeFileSync(join(outdir, METAFILE), JSON.stringify(metafile));
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

/**
 * The source modules (repository paths) a function's environment loads: those of its bundle and of
 * every chunk the bundle imports statically, read from the build's metafile (a module tree-shaken to
 * nothing is not loaded), and of the chunks it imports on demand: every one, or, given `loaded` (the
 * files its threads loaded, `LocalRuntime.outputsLoaded`), those a run imported. `entry` is the
 * handler (`functions/<name>.ts`).
 */
export const modulesLoaded = (outdir: string, entry: string, loaded?: string[]): string[] => {
  const { outputs } = JSON.parse(readFileSync(join(outdir, METAFILE), 'utf8')) as Metafile;
  const byPath = new Map(Object.entries(outputs).map(([path, output]) => [resolve(ROOT, path), output]));
  const modules = new Set<string>();
  const seen = new Set<string>();
  const visit = (output: string) => {
    const found = byPath.get(output);
    if (!found || seen.has(output)) return;
    seen.add(output);
    for (const [input, { bytesInOutput }] of Object.entries(found.inputs)) if (bytesInOutput > 0) modules.add(input);
    for (const imported of found.imports) {
      const path = resolve(ROOT, imported.path);
      const onDemand = imported.kind === 'dynamic-import';
      if (!imported.external && (!onDemand || !loaded || loaded.includes(path))) visit(path);
    }
  };
  visit(bundlesIn(outdir).of(entry));
  return [...modules].sort();
};
