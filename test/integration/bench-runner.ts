import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/** Runs a benchmark as `npm run bench:*` would (a child Node with tsx, its own runtime): exit code and output. */
export const runBench = (script: string, args: string[] = ['--quick']) =>
  new Promise<{ code: number | null; output: string }>((done, fail) => {
    const chunks: string[] = [];
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: ROOT,
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (c) => chunks.push(String(c)));
    child.stderr.on('data', (c) => chunks.push(String(c)));
    child.on('error', fail);
    child.on('exit', (code) => done({ code, output: chunks.join('') }));
  });
