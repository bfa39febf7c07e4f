import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildSync } from 'esbuild';
import type { StaticFile } from '../shared/http/handler.js';

/**
 * The operator console (console/) as the console's function serves it: esbuild bundles
 * `console/main.ts` and its CSS for the browser, minified; each file is gzipped and the set goes
 * into the function's bundle as the constant `__CONSOLE_FILES__` (esbuild's `define`), on AWS and
 * locally alike. Nothing is fetched at run time: the page is these files and the API.
 */

export const CONSOLE_FILES_CONSTANT = '__CONSOLE_FILES__';

export interface ConsoleFile extends StaticFile {
  /** Bytes before and after gzip, for the size bench (bench/console.ts). */
  bytes: number;
  gzipBytes: number;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const file = (name: string, content: Uint8Array): ConsoleFile => {
  const gzip = gzipSync(content, { level: 9 });
  return {
    contentType: TYPES[name.slice(name.lastIndexOf('.'))],
    gzip: gzip.toString('base64'),
    bytes: content.length,
    gzipBytes: gzip.length,
  };
};

/** The console's files by name under `/console/`: `index.html`, `console.js`, `console.css`, `favicon.svg`. */
export const buildConsole = (projectRoot: string): Record<string, ConsoleFile> => {
  const { outputFiles } = buildSync({
    entryPoints: [join(projectRoot, 'console/main.ts')],
    absWorkingDir: projectRoot,
    tsconfig: join(projectRoot, 'console/tsconfig.json'),
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    entryNames: 'console',
    outdir: join(projectRoot, 'console'),
    legalComments: 'none',
    write: false,
    logLevel: 'error',
  });
  const files: Record<string, ConsoleFile> = {
    'index.html': file('index.html', readFileSync(join(projectRoot, 'console/index.html'))),
    'favicon.svg': file('favicon.svg', readFileSync(join(projectRoot, 'console/favicon.svg'))),
  };
  for (const output of outputFiles) {
    const name = output.path.slice(output.path.lastIndexOf('/') + 1);
    files[name] = file(name, output.contents);
  }
  return files;
};

/** esbuild's `define` that puts the files into the console function's bundle. */
export const consoleDefine = (files: Record<string, ConsoleFile>): Record<string, string> => ({
  [CONSOLE_FILES_CONSTANT]: JSON.stringify(
    Object.fromEntries(Object.entries(files).map(([name, { contentType, gzip }]) => [name, { contentType, gzip }])),
  ),
});
