/**
 * `npm run bench:supplier-pace`: a flash sale into a slow supplier (docs/design.md, "A pace per
 * supplier").
 *
 * Sends `--orders` signed `orders/create` webhooks (default 2,000; `--quick` 200), `--concurrency` at
 * a time, all to one supplier shop that allows `--per-second` calls a second (default 5; the
 * simulator's `/_sim/rate-limits`: a bucket of that many calls, refilled at that rate, answering 429
 * with `Retry-After` and `RateLimit-Policy`), and waits until every job has ended. Reports the drain
 * time (the first webhook to the last job's `completedAt`) against the supplier's own floor (orders
 * over its rate), the calls the shop received and how many it answered 429, the supplier orders
 * (none doubled), the dead jobs, and the sync worker's invocations and received records: every
 * record past one per order is a wasted receive (a job sent to wait for its slot, or deferred by a 429).
 *
 *   npm run bench:supplier-pace [-- --orders 2000 --per-second 5 --concurrency 8] [-- --quick]
 *
 * Exit code 1 unless every order completed once, none is dead, and the calls are at most 1.05 × the
 * orders.
 */
import {
  createStores,
  fixed,
  flags,
  orderBody,
  positiveNumber,
  postOrderWebhook,
  progress,
  readJobs,
  sleep,
  startBenchRuntime,
  step,
  table,
} from './common.js';

const CALLS_PER_ORDER = 1.05;

const args = flags({
  orders: { type: 'string' },
  'per-second': { type: 'string' },
  concurrency: { type: 'string' },
  timeout: { type: 'string' },
});
const orders = Math.round(positiveNumber('orders', args.orders, args.quick ? 200 : 2000));
const perSecond = positiveNumber('per-second', args['per-second'], 5);
const concurrency = Math.round(positiveNumber('concurrency', args.concurrency, 8));
const timeoutMs = positiveNumber('timeout', args.timeout, 120 + (orders / perSecond) * 2) * 1000;

const invocations = { count: 0, records: 0 };
step('starting the local runtime');
const runtime = await startBenchRuntime({
  onInvoke: (name, _ms, batch) => {
    if (name !== 'SyncWorker') return;
    invocations.count++;
    invocations.records += batch ?? 0;
  },
});
let exitCode = 0;
try {
  const stores = await createStores(runtime.apiUrl);
  const simUrl = runtime.simulator!.url;
  await fetch(`${simUrl}/_sim/rate-limits`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ shopDomain: stores.sourceShopDomain, perSecond }),
  });
  console.log(
    `bench:supplier-pace — ${orders} orders into one supplier allowing ${perSecond} calls a second, ` +
      `${concurrency} webhooks at a time, ${process.version}`,
  );

  const { createApiClient } = await import('../client/client.js');
  const platform = createApiClient({ baseUrl: runtime.apiUrl });
  const jobIds = new Set<string>();
  const refused: string[] = [];
  const started = Date.now();
  const sending = progress('sending orders', orders);
  let next = Date.now() * 1000;
  const last = next + orders;
  const sender = async () => {
    while (next < last) {
      const orderId = next++;
      const { data, response } = await postOrderWebhook(platform, stores, orderBody(orderId, stores.vendor));
      const ids = (data as { syncJobIds?: string[] } | undefined)?.syncJobIds ?? [];
      if (response.status !== 200 || ids.length !== 1) refused.push(String(response.status));
      for (const id of ids) jobIds.add(id);
      sending.tick();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, sender));
  const sentSeconds = (Date.now() - started) / 1000;

  const waiting = progress('waiting for every job to end', jobIds.size);
  const deadline = Date.now() + timeoutMs;
  let ended = new Map<string, { status: string; completedAt?: string | null }>();
  for (;;) {
    const { jobs } = await readJobs(runtime.apiUrl, jobIds, { maxPages: Math.ceil(orders / 100) + 2 });
    ended = new Map([...jobs].filter(([, job]) => job.status === 'completed' || job.status === 'dead'));
    waiting.at(ended.size);
    if (ended.size === jobIds.size || Date.now() > deadline) break;
    await sleep(5000);
  }
  const completed = [...ended.values()].filter((job) => job.status === 'completed');
  const dead = [...ended.values()].filter((job) => job.status === 'dead').length;
  const drainSeconds = (Math.max(...completed.map((job) => Date.parse(job.completedAt ?? ''))) - started) / 1000;

  const calls = (
    (await (await fetch(`${simUrl}/_sim/calls`)).json()) as { calls: { shopDomain: string; status: number }[] }
  ).calls.filter((call) => call.shopDomain === stores.sourceShopDomain);
  const simOrders = (
    (await (await fetch(`${simUrl}/_sim/orders?shopDomain=${stores.sourceShopDomain}`)).json()) as {
      orders: { source_identifier: string }[];
    }
  ).orders;
  const perJob = new Map<string, number>();
  for (const order of simOrders) perJob.set(order.source_identifier, (perJob.get(order.source_identifier) ?? 0) + 1);
  const doubled = [...perJob.values()].filter((n) => n > 1).length;
  const throttled = calls.filter((call) => call.status === 429).length;
  const wasted = invocations.records - completed.length;

  console.log();
  console.log(
    table(
      ['measure', 'value', 'target'],
      [
        ['orders sent / refused', `${jobIds.size} / ${refused.length}`, '0 refused'],
        ['completed / dead / not ended', `${completed.length} / ${dead} / ${jobIds.size - ended.size}`, 'all / 0 / 0'],
        ['supplier orders (doubled)', `${simOrders.length} (${doubled})`, `${orders} (0)`],
        ['calls to the supplier (429)', `${calls.length} (${throttled})`, `<= ${Math.floor(orders * CALLS_PER_ORDER)}`],
        ['calls per order', fixed(calls.length / orders, 3), `<= ${CALLS_PER_ORDER}`],
        ['webhooks sent in', `${fixed(sentSeconds)} s`, ''],
        ['drain time', `${fixed(drainSeconds)} s`, `floor ${fixed(orders / perSecond)} s`],
        ['achieved calls a second', fixed(completed.length / drainSeconds, 2), `<= ${perSecond}`],
        ['sync worker invocations', invocations.count, ''],
        ['records received', invocations.records, ''],
        ['wasted receives (records - orders)', wasted, ''],
        ['wasted receives per order', fixed(wasted / orders, 2), ''],
      ],
    ),
  );
  const ok =
    !refused.length && completed.length === orders && !dead && !doubled && calls.length <= orders * CALLS_PER_ORDER;
  if (!ok) exitCode = 1;
} catch (error) {
  exitCode = 1;
  console.error(error);
} finally {
  await runtime.stop();
}
process.exit(exitCode);
