import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { main as jobs } from '../../bin/jobs.js';
import { main as keys } from '../../bin/keys.js';
import { cliDataDir, createResellerStore, createSourceStore, runCli, serviceForSuite, TEST_KEYS } from './support.js';
import { eventually, jobReaches, orderPayload, sendOrder, sendWebhook, simulator } from './webhooks.js';

jest.setTimeout(90_000);

/**
 * The command-line tools against the whole local service: `keys` on its table (found, as
 * `npm start` leaves it, through DATA_DIR/endpoints.json), `jobs` through its API.
 */

let dataDir: string;

const run = (tool: typeof jobs, argv: string[]) => runCli(tool, argv, dataDir);

const api = () => ['--url', service.runtime.apiUrl, '--key', TEST_KEYS.owner_a];

const { service } = serviceForSuite();
beforeAll(async () => {
  dataDir = cliDataDir(service, 'cli-test-');
}, 90_000);

afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm run keys', () => {
  let issued: { keyId: string; key: string };

  it('creates a key that authenticates as its owner, printing it once', async () => {
    const result = await run(keys, ['create', '--owner', 'ops_cli']);
    expect(result.code).toBe(0);
    const [notice, key] = result.outLines;
    expect(notice).toMatch(/^Issued key_\w+ for owner ops_cli\. The key is shown once/);
    expect(key).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
    issued = { keyId: notice.split(' ')[1], key };
    expect((await service.api(key).get('/v1/reseller_stores')).status).toBe(200);
  });

  it('lists key ids, owners and dates, never a key or its hash', async () => {
    const result = await run(keys, ['list']);
    expect(result.code).toBe(0);
    expect(result.outLines[0]).toMatch(/^KEY ID\s+OWNER\s+CREATED\s+REVOKED$/);
    expect(result.out).toMatch(new RegExp(`${issued.keyId}\\s+ops_cli\\s+\\d{4}-\\S+Z\\s+-`));
    expect(result.out).toMatch(/key_\w+\s+owner_a/);
    expect(result.out).not.toMatch(/sk_test_|[0-9a-f]{64}/);

    const json = JSON.parse((await run(keys, ['list', '--owner', 'ops_cli', '--json'])).out);
    expect(json).toEqual([
      { keyId: issued.keyId, ownerId: 'ops_cli', createdAt: expect.stringMatching(/Z$/), revokedAt: null },
    ]);
  });

  it('revokes a key by id: the API refuses it from the next request on', async () => {
    const result = await run(keys, ['revoke', issued.keyId]);
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toBe(`Revoked ${issued.keyId} (owner ops_cli); the API refuses it from now on.`);
    const refused = await service.api(issued.key).get('/v1/reseller_stores');
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthorized');

    const listed = JSON.parse((await run(keys, ['list', '--owner', 'ops_cli', '--json'])).out);
    expect(listed[0].revokedAt).toMatch(/Z$/);
    const again = await run(keys, ['revoke', issued.keyId]);
    expect(again.code).toBe(0);
    expect(again.out).toContain('was already revoked at');
  });

  it('says, revoking on a deployed table (--table), the bound API Gateway’s cache of verdicts sets', async () => {
    // --table names the table; the AWS endpoint is this process's, pointed at the local service.
    const created = await run(keys, ['create', '--owner', 'ops_cli_aws', '--table', service.tableName, '--json']);
    const { keyId } = JSON.parse(created.out);
    const result = await run(keys, ['revoke', keyId, '--table', service.tableName]);
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toBe(
      `Revoked ${keyId} (owner ops_cli_aws); the API refuses it within 60 s ` +
        '(or the -c authorizerCacheSeconds the stack was deployed with).',
    );
  });

  it('says in one line, exit 1, that an unknown key id names no key', async () => {
    const result = await run(keys, ['revoke', 'key_nosuchkey']);
    expect(result.code).toBe(1);
    expect(result.errLines).toEqual(['keys: no key key_nosuchkey (`npm run keys -- list` shows them)']);
  });
});

describe('npm run jobs', () => {
  let rstId: string;
  let deadIds: string[];
  let completedId: string;
  let workingShop: string;

  beforeAll(async () => {
    const owner = service.api('owner_a');
    const secret = 'whsec_cli_reseller';
    const reseller = await createResellerStore(owner, { webhookSecret: secret });
    rstId = reseller.id;
    // The platform refuses it (401): a job dead after its first attempt, quick even on a busy machine.
    const failing = await createSourceStore(owner, rstId, { accessToken: 'tok_fail401' });
    const working = await createSourceStore(owner, rstId, { webhookSecret: 'whsec_cli_source' });
    workingShop = working.shopDomain;
    const send = async (vendor: string) =>
      (await sendOrder(service.runtime.apiUrl, reseller.shopDomain, secret, orderPayload([{ vendor, price: '13.00' }])))
        .body.syncJobIds[0] as string;
    deadIds = [await send(failing.vendorTag), await send(failing.vendorTag), await send(failing.vendorTag)];
    completedId = await send(working.vendorTag);
    await Promise.all(deadIds.map((id) => jobReaches(owner, id, 'dead', 60_000)));
    await jobReaches(owner, completedId, 'completed', 60_000);
  }, 120_000);

  it('lists the dead jobs of a store, newest first', async () => {
    const result = await run(jobs, ['list', '--status', 'dead', '--store', rstId, ...api()]);
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.outLines[0]).toMatch(/^ID\s+STATUS\s+ATTEMPTS\s+RESELLER STORE\s+ORDER\s+UPDATED\s+HELD\s+ERROR$/);
    expect(result.outLines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual([...deadIds].reverse());
    expect(result.outLines[1]).toMatch(/\sdead\s+\d+\s+rst_/);

    const limited = await run(jobs, ['list', '--store', rstId, '--limit', '2', '--json', ...api()]);
    expect(JSON.parse(limited.out).map((job: { id: string }) => job.id)).toEqual([completedId, deadIds[2]]);
  });

  it('shows a job with its error and its audit trail', async () => {
    const result = await run(jobs, ['show', deadIds[0], ...api()]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(new RegExp(`^id\\s+${deadIds[0]}$`, 'm'));
    expect(result.out).toMatch(/^status\s+dead$/m);
    expect(result.out).toMatch(/^errorMessage\s+.*401/m);
    expect(result.out).toMatch(/^attempt history \(newest first\):$/m);
    expect(result.out).toMatch(/^ {2}#1 {2}\S+Z {2}webhook {2}dead {2}401 {2}\d+ ms {2}.*401/m);
    expect(result.out).toMatch(/^ {2}\S+Z {2}sync_job\.dead {2}by system/m);
  });

  it('shows a job’s line items, shipped of ordered with both prices, and its parcels with their tracking', async () => {
    const owner = service.api('owner_a');
    const job = await jobReaches(owner, completedId, 'completed');
    const [supplierOrder] = (await simulator(service.runtime.simulator!.url).orders(workingShop)).filter(
      (order) => String(order.id) === job.sourceOrderId,
    );
    const shipped = await sendWebhook(service.runtime.apiUrl, '/v1/fulfillments/webhook', {
      shopDomain: workingShop,
      secret: 'whsec_cli_source',
      body: {
        id: 7_700_001,
        order_id: supplierOrder.id,
        tracking_company: 'UPS',
        tracking_numbers: ['1ZCLI'],
        line_items: [{ id: supplierOrder.line_items[0].id, quantity: 1 }],
      },
    });
    expect(shipped.status).toBe(200);
    await eventually(
      async () => (await owner.get(`/v1/sync_jobs/${completedId}`)).body.fulfillment?.status === 'delivered',
    );

    const result = await run(jobs, ['show', completedId, ...api()]);
    expect(result.out).toMatch(/^line items \(fulfilled\):$/m);
    expect(result.out).toMatch(/^ {2}1 → \d+ {2}SKU-1 {2}Item 1 {2}shipped 1\/1 {2}13\.00 → \d+\.\d{2}$/m);
    expect(result.out).toMatch(/^fulfillments \(parcels\):$/m);
    expect(result.out).toMatch(/^ {2}7700001 {2}delivered {2}UPS 1ZCLI {2}1×1 {2}attempts 1$/m);
  });

  it('answers an API error in one line with its code, exit 1', async () => {
    const missing = await run(jobs, ['show', 'sj_nosuchjob', ...api()]);
    expect(missing.code).toBe(1);
    expect(missing.errLines).toEqual([
      expect.stringMatching(/^jobs: resource_missing \(404\): .*sj_nosuchjob.* \[req_[0-9a-z]+\]$/),
    ]);
    const completed = await run(jobs, ['retry', completedId, ...api()]);
    expect(completed.code).toBe(1);
    expect(completed.errLines).toEqual([expect.stringMatching(/^jobs: sync_job_not_retryable \(400\): /)]);
    const foreign = await run(jobs, ['show', deadIds[0], '--url', service.runtime.apiUrl, '--key', TEST_KEYS.owner_b]);
    expect(foreign.errLines).toEqual([expect.stringMatching(/^jobs: resource_missing \(404\)/)]);
  });

  const retriedIds = async () =>
    (await service.api('owner_a').get('/v1/audit_log?action=sync_job.retried&limit=100')).body.data.map(
      (entry: { resourceId: string }) => entry.resourceId,
    );

  it('retries one job: pending again, audited', async () => {
    const result = await run(jobs, ['retry', deadIds[0], ...api()]);
    expect(result.code).toBe(0);
    // Attempts: one, unless a busy machine let the message be redelivered while the worker held it.
    expect(result.out).toMatch(new RegExp(`^${deadIds[0]} is pending again \\(attempts so far: \\d\\)$`));
    expect(await retriedIds()).toContain(deadIds[0]);
    await jobReaches(service.api('owner_a'), deadIds[0], 'dead', 50_000);
  });

  it('lists with --dry-run, then retries every dead job of a store', async () => {
    const before = (await retriedIds()).length;
    const dry = await run(jobs, ['retry', '--all-dead', '--store', rstId, '--dry-run', ...api()]);
    expect(dry.code).toBe(0);
    expect(dry.outLines.at(-1)).toBe('3 dead job(s) would be retried (--dry-run)');
    expect((await retriedIds()).length).toBe(before);

    const result = await run(jobs, ['retry', '--all-dead', '--store', rstId, ...api()]);
    expect(result.code).toBe(0);
    expect(result.out).toBe(`retried 3 of 3 dead job(s) in ${rstId}`);
    expect(result.err).toContain('retrying dead jobs 3/3');
    await eventually(async () => (await retriedIds()).length === before + 3);
  });
});

describe('the tools as processes', () => {
  /** Asynchronous: the service answering the child runs in this very process. */
  const tsx = (script: string, args: string[]) =>
    new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['node_modules/tsx/dist/cli.mjs', script, ...args],
        { encoding: 'utf8', env: { ...process.env, DATA_DIR: dataDir, API_KEY: '', API_URL: '' } },
        (error, stdout, stderr) => resolve({ status: error ? Number(error.code) : 0, stdout, stderr }),
      );
    });

  it('exit 1 with one line on stderr, no stack trace, for an API error', async () => {
    const result = await tsx('bin/jobs.ts', ['show', 'sj_nosuchjob', ...api()]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^jobs: resource_missing \(404\)/)]);
  });

  it('exit 2 with one line for a mistyped flag, 0 with the help for --help', async () => {
    const mistyped = await tsx('bin/keys.ts', ['create', '--ownr', 'x']);
    expect(mistyped.status).toBe(2);
    expect(mistyped.stderr.trim().split('\n')).toEqual([
      'keys: unknown option --ownr (did you mean --owner?); see `npm run keys -- create --help`',
    ]);
    const help = await tsx('bin/jobs.ts', ['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('usage: npm run jobs -- <command> [options]');
  });
});
