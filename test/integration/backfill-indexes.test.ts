import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { main as backfill } from '../../bin/backfill-indexes.js';
import {
  cliDataDir,
  createResellerStore,
  createSourceStore,
  jobStatusWrite,
  queueSend,
  replaceAccessToken,
  runCli,
  scanAll,
  scanAllButEvents,
  startService,
  type TestService,
} from './support.js';
import { eventually, jobReaches, orderPayload, sendOrder, sendWebhook, simulator } from './webhooks.js';

jest.setTimeout(180_000);

/**
 * `npm run backfill-indexes` on a table whose jobs and audit entries were written before GSI3–GSI7
 * and `openPK` existed: items the service made, stripped of those attributes, as an older stack
 * left them. Before the backfill they are missing from the filtered lists and the reconciler, and
 * a legacy pending job cannot be claimed; after it, everything finds them and they complete.
 */

const LEASE_SECONDS = 2;
const pastLease = () => new Promise((r) => setTimeout(r, LEASE_SECONDS * 1000 + 300));
/** What the indexes added since the first release wrote on an item (GSI1 and GSI2 are older). */
const NEW_ATTRIBUTES = ['GSI3PK', 'GSI3SK', 'openPK', 'GSI4PK', 'GSI5PK', 'GSI6PK', 'GSI7PK'];

let service: TestService;
let dataDir: string;

const run = (argv: string[]) => runCli(backfill, argv, dataDir);

/** The tool as a process, finding the running service's table through DATA_DIR/endpoints.json. */
const runProcess = (args: string[]) =>
  new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['node_modules/tsx/dist/cli.mjs', 'bin/backfill-indexes.ts', ...args],
      { encoding: 'utf8', env: { ...process.env, DATA_DIR: dataDir } },
      (error, stdout, stderr) => resolve({ status: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });

beforeAll(async () => {
  // Visibility (the backoff after a failure, locally) of 10 s: time to hold the failed job's next claim.
  service = await startService({ leaseSeconds: LEASE_SECONDS, visibilityTimeoutSeconds: 10 });
  dataDir = cliDataDir(service, 'backfill-test-');
}, 90_000);

afterAll(async () => {
  service?.runtime.faults.clear();
  await service?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm run backfill-indexes', () => {
  const api = () => service.api('owner_a');
  const secret = 'whsec_backfill';
  let reseller: any;
  const ids = { pending: '', failed: '', dead: '', completed: '' };
  const suppliers: Record<string, any> = {};

  const order = async (vendor: string) =>
    (await sendOrder(service.runtime.apiUrl, reseller.shopDomain, secret, orderPayload([{ vendor, price: '12.00' }])))
      .body.syncJobIds[0] as string;
  const listed = async (path: string) =>
    ((await api().get(path)).body.data as { id: string; resourceId?: string }[]).map((item) => item.id);
  const auditOf = async (query: string) =>
    ((await api().get(`/v1/audit_log?${query}&limit=100`)).body.data as { resourceId: string }[]).map(
      (entry) => entry.resourceId,
    );
  const simOrders = (shopDomain: string) => simulator(service.runtime.simulator!.url).orders(shopDomain);

  /** What the lists answer about the legacy items: each test checks it before and after the backfill. */
  const visible = async () => ({
    pending: (await listed('/v1/sync_jobs?status=pending&limit=100')).includes(ids.pending),
    failed: (await listed('/v1/sync_jobs?status=failed&limit=100')).includes(ids.failed),
    dead: (await listed(`/v1/sync_jobs?status=dead&reseller_store_id=${reseller.id}&limit=100`)).includes(ids.dead),
    store: (await listed(`/v1/sync_jobs?reseller_store_id=${reseller.id}&limit=100`)).filter((id) =>
      Object.values(ids).includes(id),
    ).length,
    deadEntries: (await auditOf('action=sync_job.dead')).filter((id) => id === ids.dead).length,
    retriedEntries: (await auditOf(`action=sync_job.retried&reseller_store_id=${reseller.id}`)).length,
    resourceEntries: (await auditOf(`resource_id=${ids.dead}`)).length,
  });

  let hold: ReturnType<TestService['runtime']['faults']['inject']>;

  beforeAll(async () => {
    reseller = await createResellerStore(api(), { webhookSecret: secret });
    suppliers.pending = await createSourceStore(api(), reseller.id, { vendorTag: 'Pend' });
    suppliers.failed = await createSourceStore(api(), reseller.id, { vendorTag: 'Flaky', accessToken: 'tok_fail500' });
    suppliers.dead = await createSourceStore(api(), reseller.id, { vendorTag: 'Refuse', accessToken: 'tok_fail401' });
    suppliers.completed = await createSourceStore(api(), reseller.id, {
      vendorTag: 'Ships',
      webhookSecret: 'whsec_ships',
    });

    // A pending job whose message was lost: it waits for the reconciler.
    const lost = service.runtime.faults.inject({ ...queueSend('OrdersWebhook'), action: 'drop' });
    ids.pending = await order('Pend');
    expect(lost.hits).toHaveLength(1);

    // A dead job (refused), retried once and dead again: two `sync_job.dead` entries, one `retried`.
    ids.dead = await order('Refuse');
    await jobReaches(api(), ids.dead, 'dead', 60_000);
    expect((await api().post(`/v1/sync_jobs/${ids.dead}/retry`)).status).toBe(200);
    await eventually(async () => (await auditOf(`resource_id=${ids.dead}`)).length === 3, 60_000);

    // A completed job with a fulfillment whose message was lost: its entry stays pending.
    ids.completed = await order('Ships');
    const placed = await jobReaches(api(), ids.completed, 'completed', 60_000);
    const dropped = service.runtime.faults.inject({ ...queueSend('FulfillmentsWebhook'), action: 'drop' });
    const shipped = await sendWebhook(service.runtime.apiUrl, '/v1/fulfillments/webhook', {
      shopDomain: suppliers.completed.shopDomain,
      secret: 'whsec_ships',
      body: { id: 9_700_001, order_id: placed.sourceOrderId, tracking_number: '1ZBACKFILL', tracking_company: 'UPS' },
    });
    expect(shipped.status).toBe(200);
    expect(dropped.hits).toHaveLength(1);

    // A failed job (the supplier answers 500), whose next claim is held until the test lets it go.
    ids.failed = await order('Flaky');
    await jobReaches(api(), ids.failed, 'failed', 60_000);
    hold = service.runtime.faults.inject({ ...jobStatusWrite('processing', ids.failed), action: 'hold' });

    // What an older stack left: the jobs and entries without the attributes of the newer indexes, and
    // a job with its `id` and, if it was its order's first, the count of the order's jobs (an older
    // stack wrote both; the key holds the id now, and the list of orders tells an only first job).
    for (const item of await scanAll(service.doc, service.tableName)) {
      if (item.SK !== 'SJ' && item.SK !== 'AUD') continue;
      const present = NEW_ATTRIBUTES.filter((name) => item[name] !== undefined);
      if (!present.length) continue;
      const legacy =
        item.SK === 'SJ' ? { id: String(item.PK).slice('SJ#'.length), count: item.orderJobCount ?? 1 } : null;
      await service.doc.send(
        new UpdateCommand({
          TableName: service.tableName,
          Key: { PK: item.PK, SK: item.SK },
          UpdateExpression:
            `REMOVE ${present.join(', ')}` +
            (legacy ? ` SET id = :id${item.GSI7PK ? ', orderJobCount = :count' : ''}` : ''),
          ...(legacy
            ? { ExpressionAttributeValues: { ':id': legacy.id, ...(item.GSI7PK ? { ':count': legacy.count } : {}) } }
            : {}),
        }),
      );
    }
  }, 150_000);

  it('shows the legacy items missing from the lists and the reconciler, and a pending one unclaimable', async () => {
    expect(await visible()).toEqual({
      pending: false,
      failed: false,
      dead: false,
      store: 0,
      deadEntries: 0,
      retriedEntries: 0,
      resourceEntries: 0,
    });
    // The claim copies GSI3PK from openPK, and neither exists on the item.
    const { claimJob } = await import('../../shared/order-flow/order-job-moves.js');
    const item = (await scanAll(service.doc, service.tableName)).find((i) => i.PK === `SJ#${ids.pending}`);
    await expect(claimJob({ jobId: ids.pending, generation: Number(item?.generation) })).rejects.toMatchObject({
      name: 'ValidationException',
    });
    expect((await api().get(`/v1/sync_jobs/${ids.pending}`)).body).toMatchObject({ status: 'pending', attempts: 0 });
    await pastLease();
    expect(await service.runtime.invoke('SyncReconciler')).toMatchObject({ inFlight: 0, resent: 0, propagating: 0 });
  });

  it('lists with --dry-run what it would write, writing nothing', async () => {
    const before = await scanAllButEvents(service.doc, service.tableName);
    const dry = await run(['--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.outLines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          // The first job of its order: its entry in the store's list of orders too (GSI7).
          `^SJ#${ids.pending} \\(sync job, pending\\): set GSI3PK=OPEN#\\d+ GSI3SK=\\S+ GSI4PK=RST#\\S+ ` +
            'GSI7PK=RST#\\S+#ORD(#\\d+)? openPK=',
        ),
      ),
    );
    expect(dry.outLines).toContainEqual(expect.stringMatching(/^AUD#aud_\w+ \(audit entry\): set GSI4PK=RST#/));
    expect(dry.out).toContain('4 sync job(s) and 3 audit entry(ies) would be updated (--dry-run: nothing written)');
    expect(dry.err).toMatch(/^scanned \d+ items, 7 to update, 0 moved$/m);
    expect(await scanAllButEvents(service.doc, service.tableName)).toEqual(before);
  });

  it('gives them their index keys: the lists answer them again', async () => {
    const result = await run([]);
    expect(result.code).toBe(0);
    expect(result.outLines[1]).toBe('4 sync job(s) and 3 audit entry(ies) updated');
    expect(result.out).not.toContain('skipped');

    expect(await visible()).toEqual({
      pending: true,
      failed: true,
      dead: true,
      store: 4,
      deadEntries: 2,
      retriedEntries: 1,
      resourceEntries: 3,
    });
    const failed = (await scanAll(service.doc, service.tableName)).find((item) => item.PK === `SJ#${ids.failed}`);
    expect(failed).toMatchObject({
      GSI3PK: expect.stringMatching(/^FAILED#/),
      openPK: expect.stringMatching(/^OPEN#/),
    });
  });

  it('lets the reconciler find them, and the legacy jobs complete with exactly one supplier order each', async () => {
    await pastLease();
    const report = await service.runtime.invoke('SyncReconciler');
    // The pending job (and the failed one, if its wait is over by now) is sent again; the completed one propagates.
    expect(report).toMatchObject({ inFlight: 2, propagating: 1, resent: expect.any(Number) });
    expect((report as { resent: number }).resent).toBeGreaterThanOrEqual(1);
    // The failed job's held claim goes on (its GSI3 partition copied from openPK), its supplier healed.
    await replaceAccessToken(service, { kind: 'source', id: suppliers.failed.id }, 'tok_healed');
    hold.release();

    await jobReaches(api(), ids.pending, 'completed', 60_000);
    expect(await simOrders(suppliers.pending.shopDomain)).toHaveLength(1);
    await jobReaches(api(), ids.failed, 'completed', 60_000);
    expect(await simOrders(suppliers.failed.shopDomain)).toHaveLength(1);

    const delivered = await eventually(
      async () => {
        await service.runtime.invoke('SyncReconciler');
        const { fulfillment } = (await api().get(`/v1/sync_jobs/${ids.completed}`)).body;
        return fulfillment?.status === 'delivered' && fulfillment;
      },
      30_000,
      500,
    );
    expect(delivered).toMatchObject({ trackingNumber: '1ZBACKFILL' });
  });

  it('changes nothing when run again (as a process)', async () => {
    const again = await runProcess([]);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('0 sync job(s) and 0 audit entry(ies) updated');
    expect(again.stderr).toMatch(/^scanned \d+ items, 0 updated, 0 moved$/m);

    const json = await run(['--json']);
    expect(JSON.parse(json.out)).toMatchObject({ dryRun: false, updated: { sync_job: 0, audit_entry: 0 }, moved: [] });
  });

  it('answers a mistyped flag in one line, exit 2', async () => {
    const mistyped = await run(['--dry-rn']);
    expect(mistyped.code).toBe(2);
    expect(mistyped.err).toBe(
      'backfill-indexes: unknown option --dry-rn (did you mean --dry-run?); see `npm run backfill-indexes -- --help`',
    );
    expect((await run(['--help'])).out).toContain('usage: npm run backfill-indexes');
  });
});
