import type { SdkCall } from '../../lib/local/protocol.js';
import { routes } from '../../lib/routes.js';
import {
  createResellerStore,
  createSourceStore,
  jobStatusWrite,
  startService,
  TEST_KEYS,
  type TestService,
} from './support.js';
import { eventually, jobReaches, orderPayload, sendWebhook, simulator } from './webhooks.js';

/**
 * The local runtime runs each function as Lambda does (lib/local/environments.ts): environments of
 * its own, one invocation at a time in each, more environments for more concurrency, started on
 * demand and stopped when idle. (Timeouts: timeouts.test.ts, with a runtime of their own.)
 */

jest.setTimeout(90_000);

/** The worker's claim of a job (claimJob) and its write that completes it (completeJob). */
const claimOf = (jobId?: string) => jobStatusWrite('processing', jobId);

const routeAccess = (name: string) => routes.find((route) => route.name === name)!.access;

const setUp = (options: Parameters<typeof startService>[0]) => {
  const context = { service: undefined as unknown as TestService, reseller: undefined as any };
  const secret = 'whsec_local_runtime';
  beforeAll(async () => {
    context.service = await startService(options);
    context.reseller = await createResellerStore(context.service.api('owner_a'), { webhookSecret: secret });
  }, 90_000);
  afterAll(() => context.service?.stop());
  afterEach(() => context.service?.runtime.faults.clear());
  const api = () => context.service.api('owner_a');
  return {
    context,
    api,
    order: (body: unknown) =>
      sendWebhook(context.service.runtime.apiUrl, '/v1/orders/webhook', {
        shopDomain: context.reseller.shopDomain,
        secret,
        body,
      }),
    supplier: (overrides: Record<string, unknown>) => createSourceStore(api(), context.reseller.id, overrides),
    sim: () => simulator(context.service.runtime.simulator!.url),
  };
};

describe('execution environments', () => {
  const { context, api, order, supplier, sim } = setUp({ idleSeconds: 3 });

  it('keeps overlapping invocations of one consumer apart: a record failing in one comes back', async () => {
    await supplier({ vendorTag: 'Broken', accessToken: 'tok_fail500' });
    const steady = await supplier({ vendorTag: 'Steady' });
    const runtime = context.service.runtime;

    // The failing job's invocation is caught before its claim, and stays under way…
    const held = runtime.faults.inject({ ...claimOf(), action: 'hold', times: 1 });
    const failing = (await order(orderPayload([{ vendor: 'Broken', price: '10.00' }]))).body.syncJobIds[0];
    expect(((await held.reached) as any).Key.PK).toBe(`SJ#${failing}`);

    // …while another invocation of the same function runs a whole batch: in another environment,
    // since one runs one invocation at a time.
    const fine = (await order(orderPayload([{ vendor: 'Steady', price: '10.00' }]))).body.syncJobIds[0];
    await jobReaches(api(), fine, 'completed');
    expect((await api().get(`/v1/sync_jobs/${failing}`)).body.status).toBe('pending');

    held.release();

    // Its failure was reported as such: SQS gave the message back twice more, then to the DLQ.
    const dead = await jobReaches(api(), failing, 'dead', 30_000);
    expect(dead.attempts).toBe(3);
    expect(dead.errorMessage).toMatch(/gave up after 3 attempts/);
    expect(await sim().orders(steady.shopDomain)).toHaveLength(1);
  });

  it('starts an environment per concurrent invocation, up to the cap, and stops them when idle', async () => {
    const runtime = context.service.runtime;
    await eventually(async () => runtime.environments().ListAuditLog === 0, 15_000);

    const answers = await Promise.all(Array.from({ length: 4 }, () => api().get('/v1/audit_log')));

    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    const started = runtime.environments().ListAuditLog;
    expect(started).toBeGreaterThanOrEqual(2);
    expect(started).toBeLessThanOrEqual(4);
    // Idle for longer than `idleSeconds`, they stop.
    await eventually(async () => runtime.environments().ListAuditLog === 0, 15_000);
  });

  it('answers 500 as API Gateway does when a function’s environment dies, and starts a new one', async () => {
    const runtime = context.service.runtime;
    runtime.faults.inject({ function: 'GetSyncJob', service: 'DynamoDB', command: 'GetItem', action: 'crash' });

    // An id of the service's shape, so the function reads the table (a malformed one is refused before).
    const unknown = `sj_${'0'.repeat(24)}`;
    // API Gateway's own answer, not the service's: plain fetch, as the typed client checks the document.
    const crashed = await fetch(`${runtime.apiUrl}/v1/sync_jobs/${unknown}`, {
      headers: { Authorization: `Bearer ${TEST_KEYS.owner_a}` },
    });
    const next = await api().get(`/v1/sync_jobs/${unknown}`);

    expect(crashed.status).toBe(500);
    expect(await crashed.json()).toEqual({ message: 'Internal Server Error' });
    expect(next.status).toBe(404);
  });

  it('refuses, as AWS does, a request whose event passes Lambda’s 6 MB: the function is never invoked', async () => {
    const runtime = context.service.runtime;
    const invoked = () => runtime.environments().OrdersWebhook ?? 0;
    const before = invoked();
    const body = JSON.stringify({ id: 1, currency: 'USD', line_items: [], pad: 'x'.repeat(6 * 1024 * 1024) });

    const res = await fetch(`${runtime.apiUrl}/v1/orders/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });

    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ message: 'Request Entity Too Large' });
    expect(invoked()).toBe(before);
    // Just under the limit, the function answers itself (the contract's 413 for a webhook over 1 MiB).
    const under = await fetch(`${runtime.apiUrl}/v1/orders/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(5 * 1024 * 1024),
    });
    expect(under.status).toBe(413);
    expect(((await under.json()) as any).error.code).toBe('payload_too_large');
    expect(under.headers.get('request-id')).toMatch(/^req_/);
  });
});

describe('least privilege (lib/local/authorize.ts, the KMS stand-in)', () => {
  const calls: SdkCall[] = [];
  // Declarations short of what the handlers call: each call outside them must be refused as AWS would.
  const { context, api } = setUp({
    onSdkCall: (call) => calls.push(call),
    accessOverrides: {
      // No GetItem: the route reads the store.
      GetResellerStore: {},
      // Another index than the one its list reads (GSI1).
      ListResellerStores: { table: ['GetItem', 'BatchGetItem'], indexes: ['lookups'] },
      // Another secret than the webhook secret it verifies with.
      OrdersWebhook: { ...routeAccess('OrdersWebhook'), key: { actions: ['Decrypt'], fields: ['accessToken'] } },
      // No queue: it sends a message per active store to the poll queue.
      PollScheduler: { indexes: ['stateLists'] },
    },
  });
  const refusals = (functionName: string) =>
    calls.filter((c) => c.functionName === functionName && c.error).map((c) => `${c.service} ${c.command} ${c.error}`);

  it('refuses a table action or an index the function did not declare: DynamoDB’s AccessDeniedException', async () => {
    expect((await api().get(`/v1/reseller_stores/${context.reseller.id}`)).status).toBe(500);
    expect(refusals('GetResellerStore')).toEqual(['DynamoDB GetItem AccessDeniedException']);
    expect((await api().get('/v1/reseller_stores')).status).toBe(500);
    expect(refusals('ListResellerStores')).toEqual(['DynamoDB Query AccessDeniedException']);
    // What is declared still works, in the same runtime: the store was created (Encrypt) and reads back.
    expect((await api().get(`/v1/reseller_stores/${context.reseller.id}/source_stores`)).status).toBe(200);
  });

  it('refuses a secret the function did not declare: KMS AccessDeniedException', async () => {
    const answer = await sendWebhook(context.service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: context.reseller.shopDomain,
      secret: 'whsec_local_runtime',
      body: orderPayload([{ vendor: 'Nobody', price: '1.00' }]),
    });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(refusals('OrdersWebhook')).toEqual(['KMS Decrypt AccessDeniedException']);
  });

  it('refuses a queue the function did not declare: SQS AccessDenied', async () => {
    await context.service.runtime.invoke('PollScheduler').catch(() => undefined);
    expect(refusals('PollScheduler')).toContain('SQS SendMessageBatch AccessDenied');
  });
});
