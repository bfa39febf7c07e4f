import { createServer } from 'node:net';
import { describeFailure } from '../../bin/cli/command-line.js';
import { main as jobs } from '../../bin/jobs.js';
import { main as keys } from '../../bin/keys.js';
import { ApiRequestError } from '../../client/client.js';

/** Runs a tool in process and answers its exit code and what it printed. */
const run = async (tool: typeof jobs, argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await tool(argv, { out: (line) => out.push(line), err: (line) => err.push(line), env });
  return { code, out: out.join('\n'), err: err.join('\n'), errLines: err };
};

describe('npm run jobs', () => {
  it('prints its help with --help, -h and help, and exits 0', async () => {
    for (const flag of ['--help', '-h', 'help']) {
      const result = await run(jobs, [flag]);
      expect(result).toMatchObject({ code: 0, err: '' });
      expect(result.out).toContain('usage: npm run jobs -- <command> [options]');
      expect(result.out).toMatch(/retry --all-dead --store <rst_id>/);
    }
  });

  it('prints the help to stderr and exits 2 without a command', async () => {
    const result = await run(jobs, []);
    expect(result.code).toBe(2);
    expect(result.out).toBe('');
    expect(result.err).toContain('usage: npm run jobs');
  });

  it.each([
    ['list', '--status <status>'],
    ['show', 'show <sj_id>'],
    ['retry', '--dry-run'],
  ])('prints the help of %s, without calling the API', async (command, expected) => {
    const result = await run(jobs, [command, '--help']);
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toContain(`usage: npm run jobs -- ${command}`);
    expect(result.out).toContain(expected);
  });

  it.each([
    [['lst'], "unknown command 'lst' (did you mean list?); see `npm run jobs -- --help`"],
    [['--status', 'dead'], 'a command comes first (list, show, retry, hold, release), not --status'],
    [
      ['list', '--stauts', 'dead'],
      'unknown option --stauts (did you mean --status?); see `npm run jobs -- list --help`',
    ],
    [['list', '--frobnicate'], 'unknown option --frobnicate; see `npm run jobs -- list --help`'],
    [['list', '--status'], '--status needs a value'],
    [['list', '--json=yes'], '--json takes no value'],
    [['list', '--status', 'deda'], '--status must be one of pending, processing, completed, failed, dead'],
    [['list', '--limit', '0'], '--limit must be a whole number ≥ 1'],
    [['list', '--limit', 'ten'], '--limit must be a whole number ≥ 1'],
    [['list', 'extra'], "unexpected argument 'extra'"],
    [['show'], 'show needs a sync job id'],
    [['show', 'sj_1', 'sj_2'], "unexpected argument 'sj_2'"],
    [['retry'], 'retry needs a sync job id (sj_…), or --all-dead --store <rst_id>'],
    [['retry', '--all-dead'], '--all-dead needs --store <rst_id>; see `npm run jobs -- retry --help`'],
    [['retry', 'sj_1', '--all-dead', '--store', 'rst_1'], 'give a job id or --all-dead, not both'],
    [['retry', 'sj_1', '--dry-run'], '--store and --dry-run go with --all-dead'],
    [['list', '--url', 'localhost:3000', '--key', 'k'], "--url must be an http(s) URL, not 'localhost:3000'"],
    [['list'], 'no API key: pass --key <key> or set API_KEY'],
  ])('refuses %j in one line, with exit code 2', async (argv, message) => {
    const result = await run(jobs, argv);
    expect(result.code).toBe(2);
    expect(result.out).toBe('');
    expect(result.errLines).toHaveLength(1);
    expect(result.err).toMatch(/^jobs: /);
    expect(result.err).toContain(message);
  });

  /** A port nothing listens on. */
  const closedPort = () =>
    new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });

  it('answers one line and exit 1 when the API cannot be reached', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const result = await run(jobs, ['list', '--url', url, '--key', 'sk_test_x']);
    expect(result.code).toBe(1);
    expect(result.errLines).toEqual([
      `jobs: cannot reach ${url} (ECONNREFUSED): is the service running, and --url right?`,
    ]);
  });

  it('takes the URL and key from API_URL and API_KEY', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const result = await run(jobs, ['show', 'sj_1'], { API_URL: url, API_KEY: 'sk_test_x' });
    expect(result.errLines).toEqual([expect.stringContaining(`cannot reach ${url}`)]);
  });
});

describe('npm run keys', () => {
  it('prints its help and each command’s, and exits 0', async () => {
    const main = await run(keys, ['--help']);
    expect(main).toMatchObject({ code: 0, err: '' });
    expect(main.out).toContain('create --owner <ownerId>');
    expect(main.out).toContain('revoke <key_id>');
    for (const command of ['create', 'list', 'revoke']) {
      const result = await run(keys, [command, '-h']);
      expect(result).toMatchObject({ code: 0, err: '' });
      expect(result.out).toContain(`usage: npm run keys -- ${command}`);
    }
  });

  it.each([
    [['craete', '--owner', 'o'], "unknown command 'craete' (did you mean create?)"],
    [['create'], 'create needs --owner <ownerId>'],
    [['create', '--owner', 'has space'], '--owner must be 1-128 characters'],
    [['create', '--ownr', 'o'], 'unknown option --ownr (did you mean --owner?)'],
    [['create', '--owner'], '--owner needs a value'],
    [['list', '--tabel', 'T'], 'unknown option --tabel (did you mean --table?)'],
    [['revoke'], 'revoke needs a key id'],
    [['revoke', 'sk_test_abc'], 'revoke takes the key id (key_…), not the key'],
  ])('refuses %j in one line, with exit code 2, before touching a table', async (argv, message) => {
    const result = await run(keys, argv);
    expect(result.code).toBe(2);
    expect(result.errLines).toHaveLength(1);
    expect(result.err).toMatch(/^keys: /);
    expect(result.err).toContain(message);
  });
});

describe('describeFailure', () => {
  it('puts an API error in one line: code, status, message, request id', () => {
    const error = new ApiRequestError(400, 'sync_job_not_retryable', 'Only failed or dead jobs.', 'req_1');
    expect(describeFailure(error)).toBe('sync_job_not_retryable (400): Only failed or dead jobs. [req_1]');
    expect(describeFailure(new ApiRequestError(401, 'unauthorized', 'A valid API key is required.', 'req_2'))).toBe(
      'unauthorized (401): A valid API key is required. [req_2] (pass --key <key> or set API_KEY)',
    );
    expect(describeFailure(new Error('first line\n    at stack'))).toBe('first line');
  });
});
