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

/**
 * `npm start` until it prints `ready` (a pattern of its output), then Ctrl-C: what it printed and its
 * exit code. The run's bundles and its DynamoDB Local are handed on, so it starts in seconds.
 */
const npmStartUntil = (env: Record<string, string>, ready: RegExp) =>
  new Promise<{ stdout: string; stderr: string }>((done, fail) => {
    const handedOn = ['LOCAL_RUNTIME_BUNDLES', 'LOCAL_RUNTIME_DYNAMODB'].filter((name) => process.env[name]);
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PLATFORM_SIM_PORT: '0',
        PORT: '0',
        DATA_DIR: ':memory:',
        ...Object.fromEntries(handedOn.map((name) => [name, process.env[name]])),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
      if (ready.test(stdout)) child.kill('SIGINT');
    });
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGINT'), 90_000);
    child.on('error', fail);
    child.on('exit', () => {
      clearTimeout(timer);
      done({ stdout, stderr });
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

describe('npm start and PERSONAL_DATA_RETENTION_DAYS (CONTRACT.md §13)', () => {
  it('gives the retention sweep the days it is set to, a fraction included, and says so', async () => {
    const { stdout } = await npmStartUntil({ PERSONAL_DATA_RETENTION_DAYS: '0.25' }, /API keys accepted/);

    expect(stdout).toMatch(/^ {2}Retention +personal data erased 0\.25 days after an order's jobs ended/m);
  });

  it('refuses a value that is no number of days above 0, in one line', async () => {
    for (const value of ['0', 'ninety']) {
      const { code, stderr } = await npmStart({ PERSONAL_DATA_RETENTION_DAYS: value, DATA_DIR: ':memory:' });

      expect(refusal(stderr)).toEqual([
        `npm start: PERSONAL_DATA_RETENTION_DAYS must be a number of days above 0 and at most 3650, got '${value}'`,
      ]);
      expect(code).toBe(1);
    }
  });
});
