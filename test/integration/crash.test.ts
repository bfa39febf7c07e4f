import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GetQueueUrlCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { freePort } from '../../lib/local/dynamodb.js';
import { type PlatformSimulator, startPlatformSimulator } from '../../lib/local/platform-simulator.js';
import { INIT_ALLOWANCE_SECONDS } from '../../lib/local/sqs.js';
import { SYNC_WORKER_TIMEOUT_SECONDS } from '../../lib/routes.js';
import { keepInRun } from '../run-logs.js';
import { TEST_KEYS } from './support.js';
import { eventually, orderPayload, sendWebhook, simulator } from './webhooks.js';

/**
 * `npm start` killed with SIGKILL, the whole process tree at once (Node, its threads, DynamoDB
 * Local's JVM), while orders are in flight, then started again on the same DATA_DIR. Nothing is
 * resent and nothing is retried by hand: every order answered 200 before the crash still reaches
 * its supplier, exactly once. The platform simulator lives in this process, as the real platform
 * would outlive our crash, so it remembers the orders and idempotency keys across it.
 */

jest.setTimeout(300_000);

const ROOT = resolve(__dirname, '../..');
/**
 * A message received before the crash stays hidden for the worker's timeout plus a cold start
 * (lib/local/sqs.ts) from its receive; then it is delivered again and completed, within 20 s more.
 */
const BOUND_MS = (SYNC_WORKER_TIMEOUT_SECONDS + INIT_ALLOWANCE_SECONDS + 20) * 1000;

interface Started {
  lines: string[];
  ready: Promise<void>;
  exited: Promise<number | null>;
  killTree(): void;
  stop(): Promise<void>;
}

/** `npm start` as a child in a process group of its own, so that SIGKILL reaches the whole tree. */
const npmStart = (env: Record<string, string>): Started => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let partial = '';
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  const ready = new Promise<void>((done, fail) => {
    // What it prints is part of the run's captured logs, searched for personal data at the end.
    const kept = `npm-start-${child.pid}.log`;
    child.stdout.on('data', (chunk: Buffer) => {
      keepInRun(kept, chunk.toString());
      const text = partial + chunk.toString();
      const split = text.split('\n');
      partial = split.pop() ?? '';
      lines.push(...split);
      // The accepted keys are the last thing it prints once it is ready.
      if (split.some((line) => /^ {2}owner_a: sk_/.test(line))) done();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      keepInRun(kept, chunk.toString());
      lines.push(...chunk.toString().split('\n'));
    });
    void exited.then((code) => fail(new Error(`npm start exited with ${code}:\n${lines.join('\n')}`)));
  });
  return {
    lines,
    ready,
    exited,
    killTree: () => process.kill(-child.pid!, 'SIGKILL'),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(child.pid!, 'SIGTERM');
      await exited;
    },
  };
};

/**
 * What a crash test's `npm start` runs with (a free port, the data on disk in `dataDir`, the platform
 * simulator of the test process, one API key), and how the test calls its API.
 */
const startSettings = async (sim: PlatformSimulator, dataDir: string) => {
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  const env = {
    PORT: String(port),
    DATA_DIR: dataDir,
    PLATFORM_SIM_PORT: '0',
    PLATFORM_API_URL: `${sim.url}/{shopDomain}`,
    API_KEYS: `owner_a:${TEST_KEYS.owner_a}`,
  };
  const headers = { authorization: `Bearer ${TEST_KEYS.owner_a}`, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown) =>
    (await fetch(`${apiUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).json() as any;
  const job = async (id: string) => (await (await fetch(`${apiUrl}/v1/sync_jobs/${id}`, { headers })).json()) as any;
  /** A reseller store named `name` on the shop `<label>.myshopify.com`, its webhooks signed with `secret`. */
  const resellerStore = (name: string, label: string, secret: string, more: Record<string, unknown> = {}) =>
    post('/v1/reseller_stores', {
      name,
      platform: 'storeplatform_a',
      shopDomain: `${label}.myshopify.com`,
      accessToken: 'tok_reseller',
      webhookSecret: secret,
      ...more,
    });
  /** A source store of reseller store `rstId` (`fields`: its name, platform, shop, token, secret and tag), at 30 %. */
  const sourceStore = (rstId: string, fields: Record<string, unknown>) =>
    post(`/v1/reseller_stores/${rstId}/source_stores`, {
      ...fields,
      pricingMode: 'percentage',
      pricingConfig: { type: 'percentage', value: 30 },
    });
  return { apiUrl, env, headers, post, job, resellerStore, sourceStore };
};

/**
 * A crash suite's platform simulator (made with `simOptions`) and DATA_DIR (named after `prefix`), made
 * before its test, and the `npm start` runs its test starts, all stopped and removed after it.
 */
const crashSuite = (prefix: string, simOptions: Parameters<typeof startPlatformSimulator>[0] = { port: 0 }) => {
  let sim: PlatformSimulator | undefined;
  let dataDir: string | undefined;
  const runs: Started[] = [];
  beforeAll(async () => {
    sim = await startPlatformSimulator(simOptions);
    dataDir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    for (const run of runs) await run.stop().catch(() => undefined);
    await sim?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    sim: () => sim!,
    dataDir: () => dataDir!,
    settings: () => startSettings(sim!, dataDir!),
    /** Starts `npm start` with `env` (stopped after the suite), once it is ready. */
    start: async (env: Record<string, string>) => {
      const run = npmStart(env);
      runs.push(run);
      await run.ready;
      return run;
    },
  };
};

/** The JSON log lines a run printed. */
const logLines = (lines: string[]) =>
  lines
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });

describe('a crash of the whole npm start process tree, and a fresh start on the same DATA_DIR', () => {
  const { sim, dataDir, settings, start } = crashSuite('crash-test-');

  it('brings each order answered 200 before the crash to its supplier once, no resend, its events once', async () => {
    const { apiUrl, env, headers, job, resellerStore, sourceStore } = await settings();

    const first = await start(env);
    // It says what runs where, and that the data is on disk.
    expect(first.lines).toEqual(
      expect.arrayContaining([
        `  ${'API'.padEnd(20)}${apiUrl}`,
        `  ${'Operator console'.padEnd(20)}${apiUrl}/console/`,
        expect.stringMatching(/^ {2}DynamoDB Local {6}http:\/\/127\.0\.0\.1:\d+ {2}table reseller-routing$/),
        expect.stringMatching(/^ {2}SQS \(fauxqs\) {8}http:\/\/127\.0\.0\.1:\d+ /),
        `  ${'Data'.padEnd(20)}${dataDir()}, on disk: table, queues with their messages, KMS key ` +
          '(kept across restarts)',
      ]),
    );

    const secret = 'whsec_crash';
    const reseller = await resellerStore('Crash Reseller', 'crash-reseller', secret);
    const supplier = (vendorTag: string, accessToken: string, platform = 'storeplatform_a') =>
      sourceStore(reseller.id, {
        name: vendorTag,
        platform,
        shopDomain: `crash-${vendorTag.toLowerCase()}.myshopify.com`,
        accessToken,
        webhookSecret: `whsec_${vendorTag}`,
        vendorTag,
      });
    // A flaky supplier answers 503 once per order, so its jobs are often between two receives. A
    // Shopify supplier (storeplatform_b) takes no idempotency key: a create the kill cut short is
    // found by lookup after the restart, never sent twice.
    const stores = [
      await supplier('Steady', 'tok_steady'),
      await supplier('Flaky', 'tok_flaky'),
      await supplier('Shopify', 'tok_shopify', 'storeplatform_b'),
    ];

    // An order placed before the rush, whose shopper asks to be forgotten (CONTRACT.md §13) right
    // before the kill: the `customers/redact` answered 200 is done after the restart.
    const forgotten = orderPayload([{ vendor: 'Steady', price: '9.00' }], { email: 'forget-me@example.com' });
    const forgottenJobId: string = (
      await sendWebhook(apiUrl, '/v1/orders/webhook', { shopDomain: reseller.shopDomain, secret, body: forgotten })
    ).body.syncJobIds[0];
    await eventually(async () => (await job(forgottenJobId)).status === 'completed', 30_000);
    let redactAnswer: number | undefined;

    // Orders keep coming, eight at a time, and the tree is killed while some are in flight.
    const answered: { body: ReturnType<typeof orderPayload>; jobIds: string[] }[] = [];
    let killed = false;
    let sent = 0;
    const sender = async () => {
      while (!killed && sent < 200) {
        sent++;
        const body = orderPayload(
          sent % 2
            ? [
                { vendor: 'Steady', price: '9.00' },
                { vendor: 'Shopify', price: '11.00' },
              ]
            : [
                { vendor: 'Steady', price: '9.00' },
                { vendor: 'Flaky', price: '7.00' },
              ],
        );
        const receipt = await sendWebhook(apiUrl, '/v1/orders/webhook', {
          shopDomain: reseller.shopDomain,
          secret,
          body,
        }).catch(() => undefined);
        if (receipt?.status === 200 && !killed) answered.push({ body, jobIds: receipt.body.syncJobIds });
        if (answered.length >= 30 && !killed) {
          killed = true;
          // Killed as soon as the 200 is in: the erasure is queued work, not yet done.
          redactAnswer = (
            await sendWebhook(apiUrl, '/v1/app/webhook', {
              shopDomain: reseller.shopDomain,
              secret,
              topic: 'customers/redact',
              body: {
                shop_domain: reseller.shopDomain,
                customer: { id: 1, email: forgotten.email },
                orders_to_redact: [forgotten.id],
              },
            })
          ).status;
          first.killTree();
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, sender));
    await first.exited;
    expect(answered.length).toBeGreaterThanOrEqual(30);
    expect(redactAnswer).toBe(200);
    const beforeRestart = new Map<string, number>();
    for (const store of stores)
      beforeRestart.set(store.shopDomain, (await simulator(sim().url).orders(store.shopDomain)).length);

    const restartedAt = Date.now();
    const second = await start(env);
    const readyAt = Date.now();

    // Every (order, supplier) pair of an order answered 200: exactly one supplier order.
    const expected = answered.flatMap(({ body, jobIds }) =>
      body.line_items.map((item) => ({
        shop: stores.find((s) => s.vendorTag === item.vendor).shopDomain as string,
        // `<reseller shop>:<order>:<job>`: one of the order's jobs.
        orderPrefix: `${reseller.shopDomain}:${body.id}:`,
        jobIds,
      })),
    );
    const placed = async () => {
      const orders = new Map<string, any[]>();
      for (const store of stores) orders.set(store.shopDomain, await simulator(sim().url).orders(store.shopDomain));
      return expected.map((pair) => ({
        ...pair,
        supplierOrders: orders
          .get(pair.shop)!
          .filter(
            (o) =>
              o.source_identifier.startsWith(pair.orderPrefix) &&
              pair.jobIds.includes(o.source_identifier.slice(pair.orderPrefix.length)),
          ).length,
      }));
    };
    await eventually(async () => (await placed()).every((p) => p.supplierOrders >= 1), BOUND_MS, 500).catch(
      () => undefined,
    );
    const tookMs = Date.now() - readyAt;
    // A pair that is not there exactly once, with what its order's jobs say, for the failure message.
    const wrong = await Promise.all(
      (await placed())
        .filter((p) => p.supplierOrders !== 1)
        .map(async ({ shop, supplierOrders, jobIds }) => ({
          shop,
          supplierOrders,
          jobs: await Promise.all(
            jobIds.map(async (id) => {
              const job = (await (await fetch(`${apiUrl}/v1/sync_jobs/${id}`, { headers })).json()) as any;
              return { id, status: job.status, attempts: job.attempts, error: job.errorMessage ?? job.error?.code };
            }),
          ),
        })),
    );
    expect(wrong).toEqual([]);

    // Events (CONTRACT.md §14), recorded from the change stream across the kill: each completed job has its
    // sync_job.completed exactly once, and no event tells of a job that did not complete.
    const getJson = async (path: string) => (await (await fetch(`${apiUrl}${path}`, { headers })).json()) as any;
    const answeredJobs = answered.flatMap((a) => a.jobIds);
    await eventually(
      async () =>
        (await Promise.all(answeredJobs.map((id) => getJson(`/v1/sync_jobs/${id}`)))).every(
          (j) => j.status === 'completed',
        ),
      BOUND_MS,
      500,
    );
    const completedEvents = async () => {
      const events: any[] = [];
      for (let after = ''; ; ) {
        const page = await getJson(
          `/v1/events?type=sync_job.completed&limit=100${after && `&starting_after=${after}`}`,
        );
        events.push(...page.data);
        if (!page.has_more) return events;
        after = page.data.at(-1).id;
      }
    };
    const events = await eventually(
      async () => {
        const listed = await completedEvents();
        const told = new Set(listed.map((e) => e.data.object.id));
        return answeredJobs.every((id) => told.has(id)) && listed;
      },
      30_000,
      500,
    );
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    const perJob = new Map<string, number>();
    for (const event of events) perJob.set(event.data.object.id, (perJob.get(event.data.object.id) ?? 0) + 1);
    expect([...perJob].filter(([, n]) => n !== 1)).toEqual([]);
    // Jobs of orders whose answer the kill cut short are there too: each of them did complete.
    const told = await Promise.all([...perJob.keys()].map((id) => getJson(`/v1/sync_jobs/${id}`)));
    expect(told.filter((j) => j.status !== 'completed')).toEqual([]);
    for (const event of events) expect(event.data.object.status).toBe('completed');

    // The erasure answered 200 before the kill was done by the second run, from its queue: the order
    // and its job show `redactedAt`, a moment after the restart, and still answer.
    const redactedAt = await eventually(async () => (await job(forgottenJobId)).redactedAt, BOUND_MS, 500);
    expect(Date.parse(redactedAt)).toBeGreaterThanOrEqual(restartedAt);
    const forgottenOrder = await getJson(`/v1/reseller_stores/${reseller.id}/orders/${forgotten.id}`);
    expect(forgottenOrder).toMatchObject({ redactedAt, syncJobIds: [forgottenJobId] });
    expect(await job(forgottenJobId)).toMatchObject({ status: 'completed', redactedAt });

    console.log(
      `crash: ${answered.length} orders answered 200 before the kill (supplier orders then: ` +
        `${[...beforeRestart.values()].join(' + ')}); all ${expected.length} placed ${tookMs} ms after the restart; ` +
        `${events.length} sync_job.completed events, one per completed job`,
    );

    // Worker and DLQ log lines name their own function and invocation, whichever ran alongside.
    const sqsEndpoint = second.lines.find((l) => l.includes('SQS (fauxqs)'))!.match(/http:\/\/[\d.:]+/)![0];
    const sqs = new SQSClient({
      endpoint: sqsEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
      useQueueUrlAsEndpoint: false,
    });
    const dlq = (await sqs.send(new GetQueueUrlCommand({ QueueName: 'sync-dlq' }))).QueueUrl!;
    await sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'not a job message' }));
    sqs.destroy();
    const malformed = await eventually(
      async () => logLines(second.lines).find((l) => l.message === 'dropping a malformed sync DLQ message'),
      20_000,
    );
    expect(malformed).toMatchObject({ function_name: 'SyncDeadLetter', function_request_id: expect.any(String) });
    const retried = logLines([...first.lines, ...second.lines]).filter(
      (l) => l.message === 'sync job failed; SQS will retry',
    );
    expect(retried.length).toBeGreaterThan(0);
    for (const line of retried)
      expect(line).toMatchObject({ function_name: 'SyncWorker', function_request_id: expect.any(String) });
  });
});

describe('a crash of the whole npm start process tree between a cancel call and its record', () => {
  /**
   * Armed by the test: the first cancel call the supplier carries out kills the tree before it is
   * answered, once the webhook that asked for it has had its own answer (`answered`).
   */
  let killOnCancel: Started | undefined;
  let answered: Promise<unknown> = Promise.resolve();

  const { sim, settings, start } = crashSuite('crash-cancel-test-', {
    port: 0,
    beforeReply: async (call) => {
      const run = killOnCancel;
      if (!run || !call.path.endsWith('/cancel.json')) return;
      killOnCancel = undefined;
      await answered;
      run.killTree();
      await run.exited;
    },
  });

  it('cancels each supplier order exactly once after the restart, with nothing resent', async () => {
    const { apiUrl, env, job, resellerStore, sourceStore } = await settings();

    const first = await start(env);
    const secret = 'whsec_crash_cancel';
    const reseller = await resellerStore('Crash Cancel Reseller', 'crash-cancel-reseller', secret);
    // One supplier that takes idempotency keys, one that does not (Shopify): a cancel sent again
    // after the crash is the same cancel on the first, and an already cancelled order on the second.
    const suppliers = await Promise.all(
      (['storeplatform_a', 'storeplatform_b'] as const).map((platform, n) =>
        sourceStore(reseller.id, {
          name: `Supplier ${n}`,
          platform,
          shopDomain: `crash-cancel-${n}.myshopify.com`,
          accessToken: `tok_supplier_${n}`,
          webhookSecret: `whsec_supplier_${n}`,
          vendorTag: `CancelVendor${n}`,
        }),
      ),
    );
    const body = orderPayload(suppliers.map((s) => ({ vendor: s.vendorTag, price: '10.00' })));
    const receipt = await sendWebhook(apiUrl, '/v1/orders/webhook', { shopDomain: reseller.shopDomain, secret, body });
    expect(receipt.status).toBe(200);
    const jobIds: string[] = receipt.body.syncJobIds;
    expect(jobIds).toHaveLength(2);
    await eventually(async () => (await Promise.all(jobIds.map(job))).every((j) => j.status === 'completed'), 30_000);

    killOnCancel = first;
    const cancelling = sendWebhook(apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret,
      body: { id: body.id, cancel_reason: 'customer', cancelled_at: new Date().toISOString() },
      topic: 'orders/cancelled',
    });
    answered = cancelling.catch(() => undefined);
    expect((await cancelling).status).toBe(200);
    await first.exited;
    expect(killOnCancel).toBeUndefined();

    await start(env);
    const ended = await eventually(async () => {
      const jobs = await Promise.all(jobIds.map(job));
      return jobs.every((j) => j.status === 'cancelled') && jobs;
    }, BOUND_MS);
    for (const j of ended) expect(j.cancellation).toMatchObject({ requestedBy: 'reseller', status: 'done' });
    for (const supplier of suppliers) {
      const orders = await simulator(sim().url).orders(supplier.shopDomain);
      // Placed once, cancelled once: the order the job names, and no other.
      expect(orders).toHaveLength(1);
      expect(orders[0].cancelled_at).toEqual(expect.any(String));
    }
    // The keyed supplier heard the same cancel each time it was asked.
    const keyed = sim()
      .calls()
      .filter((c) => c.shopDomain === suppliers[0].shopDomain && c.path.endsWith('/cancel.json'));
    expect(keyed.length).toBeGreaterThanOrEqual(1);
    const keyedJob = ended.find((j) => j.sourceStoreId === suppliers[0].id);
    expect(new Set(keyed.map((c) => c.idempotencyKey))).toEqual(new Set([`cancel:${keyedJob.id}`]));
  });
});

describe('a crash of the whole npm start process tree while orders are held (CONTRACT.md §11)', () => {
  const { sim, settings, start } = crashSuite('crash-holds-test-');
  const HOLD_SECONDS = 20;

  it('loses no hold and places nothing early: delayed orders go after their delay, unpaid ones stay held', async () => {
    const { apiUrl, env, job, resellerStore, sourceStore } = await settings();
    const first = await start(env);
    const secret = 'whsec_crash_holds';
    const reseller = await resellerStore('Held Reseller', 'crash-held-reseller', secret, {
      routingPolicy: { holdSeconds: HOLD_SECONDS },
    });
    const supplier = await sourceStore(reseller.id, {
      name: 'Held Supplier',
      platform: 'storeplatform_a',
      shopDomain: 'crash-held-supplier.myshopify.com',
      accessToken: 'tok_supplier',
      webhookSecret: 'whsec_held_supplier',
      vendorTag: 'Held',
    });
    // Paid orders, held for the delay alone; unpaid ones, held for the delay and their payment.
    const orders: { jobId: string; paid: boolean; until: number }[] = [];
    for (let n = 0; n < 8; n++) {
      const paid = n % 2 === 0;
      const body = orderPayload([{ vendor: 'Held', price: '9.00' }], { financial_status: paid ? 'paid' : 'pending' });
      await simulator(sim().url).placeOrder(reseller.shopDomain, body);
      const receipt = await sendWebhook(apiUrl, '/v1/orders/webhook', {
        shopDomain: reseller.shopDomain,
        secret,
        body,
      });
      expect(receipt.status).toBe(200);
      const held = await job(receipt.body.syncJobIds[0]);
      expect(held.hold.reasons).toEqual(paid ? ['delay'] : ['delay', 'payment']);
      orders.push({ jobId: held.id, paid, until: Date.parse(held.hold.until) });
    }
    first.killTree();
    await first.exited;
    expect(await simulator(sim().url).orders(supplier.shopDomain)).toEqual([]);

    await start(env);
    // Every hold is still there (a paid order's only until its delay ends: the restart may take that long).
    for (const { jobId, paid, until } of orders) {
      const after = await job(jobId);
      if (!paid || Date.now() < until - 1_000) expect([jobId, after.hold]).toEqual([jobId, expect.any(Object)]);
    }
    const paidOrders = orders.filter((o) => o.paid);
    const placed = await eventually(
      async () => {
        const supplierOrders = await simulator(sim().url).orders(supplier.shopDomain);
        return supplierOrders.length >= paidOrders.length && supplierOrders;
      },
      (HOLD_SECONDS + 60) * 1000,
    );
    expect(placed).toHaveLength(paidOrders.length);
    // Each supplier order (its `source_identifier` ends with its job's id) came after its job's delay.
    for (const order of placed) {
      const held = orders.find((o) => order.source_identifier.endsWith(`:${o.jobId}`))!;
      expect(Date.parse(order.created_at)).toBeGreaterThanOrEqual(held.until - 1_000);
    }
    // The supplier order exists a moment before its job's completion is written.
    for (const { jobId } of paidOrders) {
      expect(await eventually(async () => (await job(jobId)).status === 'completed', 30_000)).toBe(true);
    }
    // The unpaid ones stay held for their payment: the delay ended, their payment did not come.
    for (const { jobId } of orders.filter((o) => !o.paid)) {
      expect(await job(jobId)).toMatchObject({ status: 'pending', hold: { reasons: ['payment'], until: null } });
    }
  });
});
