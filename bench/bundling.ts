import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { ESBUILD_OPTIONS } from '../lib/bundling.js';

export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface BuiltBundle {
  /** `<outDir>/index.mjs`, as the Lambda asset names it. */
  file: string;
  /** Size of index.mjs alone (the source map is shipped too, but not loaded unless an error is mapped). */
  bytes: number;
  metafile: Metafile;
}

/**
 * Bundles one entry with the stack's options (lib/bundling.ts), run from the project root as
 * NodejsFunction runs esbuild: a path relative to the project root, or the source of a module
 * (`{ contents }`, resolved from the project root) for the baselines.
 */
export const bundle = async (
  entry: string | { contents: string },
  outDir: string,
  /** esbuild's `define`, as the stack gives one function (the console's files: lib/constructs/functions.ts). */
  define?: Record<string, string>,
): Promise<BuiltBundle> => {
  const outfile = resolve(outDir, 'index.mjs');
  const input: BuildOptions =
    typeof entry === 'string'
      ? { entryPoints: [resolve(PROJECT_ROOT, entry)] }
      : { stdin: { contents: entry.contents, resolveDir: PROJECT_ROOT, sourcefile: 'baseline.mjs', loader: 'js' } };
  // `metafile` only adds a report of what went in; it does not change the output.
  const result = await build({
    ...ESBUILD_OPTIONS,
    ...input,
    absWorkingDir: PROJECT_ROOT,
    outfile,
    metafile: true,
    write: true,
    ...(define ? { define } : {}),
  });
  const output = Object.entries(result.metafile.outputs).find(([name]) => name.endsWith('index.mjs'))!;
  return { file: outfile, bytes: output[1].bytes, metafile: result.metafile };
};

/** Which package (or `project:<dir>`) an input of the metafile belongs to. */
export const packageOf = (input: string) => {
  const at = input.lastIndexOf('node_modules/');
  if (at < 0) return `project:${input.split('/').slice(0, -1).join('/') || '.'}`;
  const parts = input.slice(at + 'node_modules/'.length).split('/');
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
};

/** Bytes each package contributes to the output, largest first. */
export const bytesByPackage = (metafile: Metafile): Map<string, number> => {
  const sizes = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const name = packageOf(input);
      sizes.set(name, (sizes.get(name) ?? 0) + bytesInOutput);
    }
  }
  return new Map([...sizes].sort((a, b) => b[1] - a[1]));
};

/** The AWS SDK clients a bundle contains, e.g. `@aws-sdk/client-sqs`. */
export const sdkClientsIn = (metafile: Metafile) =>
  [...bytesByPackage(metafile).keys()].filter((p) => p.startsWith('@aws-sdk/client-'));

/**
 * The shortest chain of imports from the bundle's entry to the first file of `pkg`, as project
 * paths (`functions/<handler>.ts → shared/<feature>/<module>.ts → @aws-sdk/client-sqs`): why a package is in a bundle.
 */
export const importChain = (metafile: Metafile, pkg: string): string[] | undefined => {
  const inputs = metafile.inputs;
  const imported = new Set(Object.values(inputs).flatMap((i) => i.imports.map((x) => x.path)));
  const roots = Object.keys(inputs).filter((p) => !imported.has(p));
  const previous = new Map<string, string | undefined>(roots.map((r) => [r, undefined]));
  const queue = [...roots];
  while (queue.length) {
    const current = queue.shift()!;
    if (packageOf(current) === pkg) {
      const chain: string[] = [];
      for (let at: string | undefined = current; at !== undefined; at = previous.get(at)) chain.unshift(at);
      return chain.map((p, i) => (i === chain.length - 1 ? pkg : p.includes('node_modules/') ? packageOf(p) : p));
    }
    for (const next of inputs[current]?.imports ?? []) {
      if (!previous.has(next.path) && inputs[next.path]) {
        previous.set(next.path, current);
        queue.push(next.path);
      }
    }
  }
  return undefined;
};
