import { type BundlingOptions, LogLevel, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';

/**
 * How every function is bundled: the `bundling` props of each NodejsFunction of the stack, and the
 * same options in esbuild's terms for bench/bundling.ts, which bundles as the stack does.
 */

/** Makes the bundled ESM output able to load CommonJS dependencies that call `require`. */
export const ESM_REQUIRE_SHIM =
  "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/** Stack traces of a minified bundle point at the sources, through the source map it ships with. */
export const NODE_OPTIONS = '--enable-source-maps';

export const BUNDLING = {
  format: OutputFormat.ESM,
  mainFields: ['module', 'main'],
  target: 'node24',
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  // The SDK is bundled: a pinned, tree-shaken client starts faster than the runtime's copy.
  externalModules: [],
  bundleAwsSDK: true,
  banner: ESM_REQUIRE_SHIM,
  forceDockerBundling: false,
  logLevel: LogLevel.WARNING,
} satisfies BundlingOptions;

type Bundling = typeof BUNDLING;

/**
 * What each prop becomes on esbuild's command line (aws-cdk-lib's `Bundling.buildEsbuildArgs`).
 * Typed over BUNDLING's keys: a prop added there without its translation here does not compile.
 */
const ESBUILD_EQUIVALENT: { [K in keyof Bundling]: (value: Bundling[K]) => BuildOptions } = {
  format: (format) => ({ format }),
  mainFields: (mainFields) => ({ mainFields }),
  target: (target) => ({ target }),
  minify: (minify) => ({ minify }),
  sourceMap: (sourcemap) => ({ sourcemap }),
  sourcesContent: (sourcesContent) => ({ sourcesContent }),
  externalModules: (external) => ({ external }),
  // With `externalModules` given, it changes nothing esbuild sees.
  bundleAwsSDK: () => ({}),
  banner: (js) => ({ banner: { js } }),
  // Where esbuild runs, not what it does.
  forceDockerBundling: () => ({}),
  logLevel: (logLevel) => ({ logLevel }),
};

/** NodejsFunction always passes `--bundle --platform=node`; the entry and the output file are the caller's. */
export const ESBUILD_OPTIONS: BuildOptions = Object.assign(
  { bundle: true, platform: 'node' } satisfies BuildOptions,
  ...(Object.keys(BUNDLING) as (keyof Bundling)[]).map((key) =>
    (ESBUILD_EQUIVALENT[key] as (value: unknown) => BuildOptions)(BUNDLING[key]),
  ),
);
