import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * `npm start` refuses what the user must fix (Java missing, a port taken, DATA_DIR not writable)
 * with one line that says so, no stack trace, and exit code 1, before it starts anything slow.
 */

jest.setTimeout(120_000);

const ROOT = resolve(__dirname, '../..');

const npmStart = (env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PLATFORM_SIM_PORT: '0', PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    // Should it start after all, it is stopped and the test fails on its exit code.
    const timer = setTimeout(() => child.kill('SIGINT'), 60_000);
    child.on('error', fail);
    child.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });

const refusal = (stderr: string) => stderr.split('\n').filter((line) => line.trim() && !/^npm warn/.test(line));

describe('npm start refuses in one line', () => {
  let work: string;
  let taken: Server;
  let takenPort: number;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'start-test-'));
    taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    takenPort = (taken.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((r) => taken.close(r));
    rmSync(work, { recursive: true, force: true });
  });

  it('when the API port is taken', async () => {
    const { code, stderr } = await npmStart({ PORT: String(takenPort), DATA_DIR: ':memory:' });

    expect(refusal(stderr)).toEqual([
      `npm start: API port ${takenPort} is taken by another process; free it or set another port`,
    ]);
    expect(code).toBe(1);
  });

  it('when DATA_DIR cannot be written', async () => {
    const file = join(work, 'a-file');
    writeFileSync(file, '');

    const { code, stderr } = await npmStart({ DATA_DIR: join(file, 'data') });

    expect(refusal(stderr)).toEqual([`npm start: DATA_DIR ${join(file, 'data')} is not writable (ENOTDIR)`]);
    expect(code).toBe(1);
  });

  it('when Java is missing', async () => {
    const { code, stderr } = await npmStart({ PATH: join(work, 'no-java-here'), DATA_DIR: ':memory:' });

    expect(refusal(stderr)).toEqual([
      'npm start: DynamoDB Local needs a Java runtime (17 or newer) on PATH: install one, e.g. ' +
        '`apt-get install openjdk-17-jre-headless`',
    ]);
    expect(code).toBe(1);
  });
});
