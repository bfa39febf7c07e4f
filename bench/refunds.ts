/**
 * `npm run bench:refunds`: what a refund and a return cost per job they touch (issue 42's budget:
 * at most 8 write units each, CONTRACT.md §15).
 *
 * Places a batch of signed single-supplier orders (default 10) through the local runtime and waits
 * until each job is `completed`, uncounted. Then counts, each phase from its first webhook until
 * every job shows its outcome, the DynamoDB units (as DynamoDB Local reports them) and the supplier
 * calls: (1) a refund of one unit with `restock_type` cancel (the supplier order edited); the
 * supplier ships the rest (uncounted); (2) a reseller return of one unit (the supplier return
 * opened); (3) the supplier's close of it (the job in the credit-due lists); (4) its refund (the
 * credit settled, the job out of the lists). Exit code 0 unless
 * a job did not reach its outcome.
 *
 *   npm run bench:refunds [-- --orders 10]
 */

import { createApiClient } from '../client/client.js';
import {
  createStores,
  dynamoByOperation,
  endMeteredBench,
  fixed,
  ORDERS_WEBHOOK_PATH,
  placeOrders,
  readJobs,
  sign,
  sleep,
  startMeteredBench,
  step,
  table,
} from './common.js';

const { orders, meter, runtime } = await startMeteredBench(10);
let failure: unknown;

type Job = Record<string, any>;

try {
  const stores = await createStores(runtime.apiUrl);
  const tag = /^bench-supplier-(.+)\.myshopify\.com$/.exec(stores.sourceShopDomain)![1];
  const supplierSecret = `whsec_bench_supplier_${tag}`;
  const platform = createApiClient({ baseUrl: runtime.apiUrl });
  const simUrl = runtime.simulator!.url;
  const send = async (shopDomain: string, secret: string, path: string, topic: string, body: unknown) => {
    const raw = JSON.stringify(body);
    const res = await fetch(`${runtime.apiUrl}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-platform-shop-domain': shopDomain,
        'x-platform-hmac-sha256': sign(secret, raw),
        'x-platform-topic': topic,
      },
      body: raw,
    });
    if (res.status !== 200) throw new Error(`${topic} answered ${res.status}: ${await res.text()}`);
  };
  const simPost = async (path: string, body: unknown) => {
    const res = await fetch(`${simUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`the simulator answered ${path} ${res.status}`);
    return (await res.json()) as any;
  };
  /** Waits, uncounted, until every job passes `check`; true when they all did. */
  const waitFor = async (ids: Set<string>, check: (job: Job) => boolean) => {
    for (let tries = 0; tries < 240; tries++) {
      const wasCounting = meter.counting;
      meter.counting = false;
      const { jobs } = await readJobs(runtime.apiUrl, ids);
      meter.counting = wasCounting;
      if ([...ids].every((id) => jobs.has(id) && check(jobs.get(id) as Job))) return jobs as Map<string, Job>;
      await sleep(300);
    }
    throw new Error('not every job reached its outcome');
  };
  const phases: (string | number)[][] = [];
  const measure = async (name: string, run: () => Promise<void>, ids: Set<string>, done: (job: Job) => boolean) => {
    const before = { ...meter.usage.dynamo };
    const opsBefore = new Map([...meter.usage.dynamo.byOperation].map(([op, o]) => [op, { ...o }]));
    const callsBefore = runtime.simulator!.calls().length;
    meter.counting = true;
    await run();
    await waitFor(ids, done);
    // The phase's events (the stream's recorder) and its last audit entries land after the job shows it.
    await sleep(4000);
    meter.counting = false;
    const u = meter.usage.dynamo;
    const writes = u.wru + u.failedWritesWru - (before.wru + before.failedWritesWru);
    const calls = runtime
      .simulator!.calls()
      .slice(callsBefore)
      .filter((c) => c.shopDomain === stores.sourceShopDomain);
    if (process.env.BENCH_DETAIL) {
      const ops = [...u.byOperation].map(([op, o]) => [op, o.units - (opsBefore.get(op)?.units ?? 0)] as const);
      console.log(
        name,
        ops.filter(([, n]) => n > 0).map(([op, n]) => `${op} ${fixed(n / orders, 2)}`),
      );
    }
    phases.push([
      name,
      fixed(writes / orders, 2),
      fixed((u.gsiWru - before.gsiWru) / orders, 2),
      fixed((u.rru - before.rru) / orders, 2),
      fixed(calls.length / orders, 2),
    ]);
  };

  const firstId = Date.now() * 1000;
  const ids = await placeOrders(platform, stores, orders, firstId);
  /** Sends the reseller's `topic` webhook for each order, its body made from the order's id. */
  const fromReseller = (topic: string, bodyOf: (orderId: number) => unknown) => async () => {
    for (let n = 0; n < orders; n++)
      await send(stores.resellerShopDomain, stores.resellerSecret, ORDERS_WEBHOOK_PATH, topic, bodyOf(firstId + n));
  };
  await waitFor(ids, (job) => job.status === 'completed' && job.tagged !== null);
  await sleep(1000);

  step('refunding one unit of each, before shipping');
  await measure(
    'refund (cancel) → supplier order edited',
    fromReseller('refunds/create', (id) => ({
      id,
      order_id: id,
      created_at: new Date().toISOString(),
      refund_line_items: [{ id: 1, line_item_id: 1, quantity: 1, restock_type: 'cancel' }],
    })),
    ids,
    (job) => job.lineItems[0].removedQuantity === 1,
  );

  step('shipping the rest (uncounted)');
  for (const job of (await waitFor(ids, () => true)).values()) {
    const lines = job.lineItems.map((line: Job) => ({
      id: Number(line.sourceLineItemId),
      quantity: line.quantity - line.removedQuantity,
    }));
    const made = await simPost(`/_sim/orders/${job.sourceOrderId}/fulfillments`, {
      shopDomain: stores.sourceShopDomain,
      fulfillment: { line_items: lines },
    });
    const body = { id: made.fulfillment.id, order_id: Number(job.sourceOrderId), status: 'success', line_items: lines };
    await send(stores.sourceShopDomain, supplierSecret, '/v1/fulfillments/webhook', 'fulfillments/create', body);
  }
  await waitFor(ids, (job) => job.lineItems[1].fulfilledQuantity === 1);
  // The shipment's events are written by the stream's recorder: let them land before counting.
  await sleep(3000);

  step('returning one unit of each');
  await measure(
    'return approved → supplier return opened',
    fromReseller('returns/approve', (id) => ({
      id,
      status: 'open',
      order: { id },
      return_line_items: [
        { id: 1, fulfillment_line_item: { line_item: { id: 2 } }, quantity: 1, return_reason: 'UNWANTED' },
      ],
    })),
    ids,
    (job) => job.returns[0]?.status === 'open',
  );

  step('the supplier closes each return and refunds it');
  const opened = await waitFor(ids, () => true);
  await measure(
    'supplier closes the return → credit due',
    async () => {
      for (const job of opened.values()) {
        const closed = await simPost(`/_sim/returns/${job.returns[0].sourceReturnId}/close`, {
          shopDomain: stores.sourceShopDomain,
        });
        await send(stores.sourceShopDomain, supplierSecret, ORDERS_WEBHOOK_PATH, 'returns/close', closed.webhook);
      }
    },
    ids,
    (job) => job.returns[0].status === 'closed',
  );
  await measure(
    'supplier refunds it → credit settled',
    async () => {
      for (const job of opened.values()) {
        const refunded = await simPost(`/_sim/orders/${job.sourceOrderId}/refunds`, {
          shopDomain: stores.sourceShopDomain,
          refund: {
            refund_line_items: [
              { line_item_id: Number(job.lineItems[1].sourceLineItemId), quantity: 1, restock_type: 'return' },
            ],
          },
        });
        await send(stores.sourceShopDomain, supplierSecret, ORDERS_WEBHOOK_PATH, 'refunds/create', refunded.webhook);
      }
    },
    ids,
    (job) => job.sourceRefunds.length === 1,
  );

  console.log(`\nbench:refunds — ${orders} completed single-supplier orders, per job\n`);
  console.log(table(['phase', 'write units', 'of which GSI', 'read units', 'supplier calls'], phases));
  console.log('\nDynamoDB, by operation (all four phases):');
  console.log(dynamoByOperation(meter.usage, (n: number) => fixed(n / orders, 3)));
} catch (error) {
  failure = error ?? new Error('the bench failed');
}
await endMeteredBench({ meter, runtime }, failure);
