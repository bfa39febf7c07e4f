/**
 * `npm run bench:e2e`: end-to-end speed under a steady stream of orders.
 *
 * Drives signed `orders/create` webhooks at `--rate` orders per second for `--duration` seconds
 * (default 50/s for 60 s; `--quick`: 10/s for 3 s) against the local runtime and its platform
 * simulator with autocannon, which builds every request in `setupRequest`: a new order id, its
 * body, and the HMAC of that exact body. Reports p50/p95/p99 of the webhook's response time and
 * of the time from sending the webhook to the job's `completed` (its `completedAt`, read through
 * `GET /v1/sync_jobs` pages every 2 s), and the orders lost (accepted, never completed
 * within `--grace` seconds) and duplicated (more than one supplier order for one reseller order,
 * as the simulator recorded them). Both must be zero.
 *
 *   npm run bench:e2e [-- --rate 50 --duration 60 --connections 5 --grace 30] [-- --quick]
 *                     [-- --endpoint slow [--endpoint-delay 10]] [-- --profile <dir>] [-- --log <file>]
 *                     [-- --sdk-calls] [-- --concurrency SyncWorker=5,FulfillmentWorker=3]
 *
 * The functions' log lines go to a file (`--log`, default one in the temp dir), named in the report,
 * not to the terminal, where they would bury the figures. Per stage it reports p50/p99 of intake (the
 * webhook's answer), queue wait (answer → the worker's attempt starts), placement (the attempt: claim,
 * supplier call, completion write) and completion (webhook → `completed`), the stages read from the
 * attempt history of a sample of the jobs after the load. `--profile <dir>` also writes the runtime's
 * per-invocation log and a CPU profile of every thread there (lib/local/environments.ts), which
 * `npm run bench:profile -- <dir>` sums up per function and per source. `--sdk-calls` counts the AWS
 * SDK calls of every function (the runtime reports each) and prints them per order, by function and
 * command: the round trips an order costs, which no load on the machine changes. `--concurrency` caps
 * the environments of the functions named (a reserved concurrency; defaults below). The peak of live
 * environments per function is printed beside the peak memory.
 *
 * `--endpoint slow` makes a webhook endpoint (CONTRACT.md §14) first, for every event, on a receiver on
 * 127.0.0.1 that holds each delivery `--endpoint-delay` seconds (default 10) and then answers 500: its
 * deliveries fail and are tried again on AWS's schedule (5 s, 5 min, …). The orders' figures are to
 * match a run without (issue 31: deliveries are never in the order's path). A burst of 500:
 * `--rate 100 --duration 5`.
 *
 * autocannon's rate limit is per connection and per second: each connection sends its share of a
 * second's requests back to back, then waits for the next second. So the load arrives in small
 * bursts at the start of each second rather than evenly spread, which is the harder case.
 *
 * Targets (issue 41): webhook p50 under 100 ms, p99 webhook → completed under 1 s.
 * Exit code 1 when an order was lost, duplicated or
 * refused; a missed timing target is reported, not failed. It also reports how long the local
 * runtime took to be ready (target: 15 s) and the peak resident memory of this process and the
 * processes it started (target: 1.5 GB), which is what `npm start` costs under this load.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { unwrap } from '../client/client.js';
import { CPU_PROF_DIR_ENV, INVOCATION_LOG_ENV, LOG_FILE_ENV } from '../lib/local/environments.js';
import { bundleRuntime, PREBUILT_BUNDLES_ENV } from '../lib/local/runtime.js';
import {
  benchApi,
  createStores,
  fixed,
  flags,
  type JobView,
  ORDERS_WEBHOOK_PATH,
  orderBody,
  percentile,
  placeOnResellerShop,
  positiveNumber,
  progress,
  sleep,
  startBenchRuntime,
  step,
  table,
  webhookHeaders,
} from './common.js';
import { cpuSampler, megabytes, memorySampler } from './memory.js';

const TARGET_P99_MS = 1000;
/** Issue 41: the webhook answers within 100 ms at the median at 50 orders/s. */
const TARGET_INTAKE_P50_MS = 100;
const TARGET_READY_MS = 15_000;
const TARGET_MEMORY_BYTES = 1.5 * 2 ** 30;

const args = flags({
  rate: { type: 'string' },
  duration: { type: 'string' },
  connections: { type: 'string' },
  grace: { type: 'string' },
  endpoint: { type: 'string' },
  'endpoint-delay': { type: 'string' },
  profile: { type: 'string' },
  log: { type: 'string' },
  'sdk-calls': { type: 'boolean' },
  concurrency: { type: 'string' },
});
if (args.endpoint !== undefined && args.endpoint !== 'slow') throw new Error('--endpoint takes `slow` only');
const endpointDelayMs = positiveNumber('endpoint-delay', args['endpoint-delay'], 10) * 1000;
const rate = Math.round(positiveNumber('rate', args.rate, args.quick ? 10 : 50));
const duration = positiveNumber('duration', args.duration, args.quick ? 3 : 60);
const connections = Math.round(positiveNumber('connections', args.connections, Math.max(1, Math.ceil(rate / 10))));
const graceMs = positiveNumber('grace', args.grace, args.quick ? 20 : 30) * 1000;
const amount = Math.round(rate * duration);
/**
 * Environments at most (a reserved concurrency): the webhook one per connection, as AWS gives each
 * request in flight its own; the two workers fewer than deployed (10 and 5), since each environment
 * takes a batch of 10 records together (50 and 30 in flight) and costs ~26 MB of the 2 cores' machine.
 * `--concurrency Name=n,…` sets others.
 */
const concurrencyCaps: Record<string, number> = {
  OrdersWebhook: Math.max(4, connections),
  SyncWorker: 5,
  FulfillmentWorker: 3,
  ...Object.fromEntries(
    (args.concurrency ?? '')
      .split(',')
      .filter(Boolean)
      .map((pair) => {
        const [name, n] = pair.split('=');
        return [name, Math.round(positiveNumber(`concurrency ${name}`, n, 1))];
      }),
  ),
};
/** `--sdk-calls`: the SDK calls of each function, by command. */
const sdkCalls = new Map<string, number>();

// The functions log to a file; with --profile, the runtime records every invocation and profiles every thread.
const logFile = resolve(args.log ?? join(tmpdir(), `bench-e2e-${Date.now()}.log`));
process.env[LOG_FILE_ENV] = logFile;
const profileDir = args.profile === undefined ? undefined : resolve(args.profile);
const mainProfile = new Session();
if (profileDir) {
  process.env[CPU_PROF_DIR_ENV] = profileDir;
  process.env[INVOCATION_LOG_ENV] = join(profileDir, 'invocations.jsonl');
  // The bundles stay beside the profiles, so bench:profile maps them to their sources after the run.
  const bundles = join(profileDir, 'bundles');
  await bundleRuntime(bundles);
  process.env[PREBUILT_BUNDLES_ENV] = bundles;
  mainProfile.connect();
  await mainProfile.post('Profiler.enable');
  await mainProfile.post('Profiler.start');
}

step('starting the local runtime');
const memory = memorySampler();
const startedAt = performance.now();
// With an endpoint, deliveries are tried again on AWS's schedule (CONTRACT.md §14: 5 s, 5 min, …), not the
// local runtime's seconds, which would try a failing receiver many times more than AWS would in a run.
// An environment per connection for the webhook: the sender keeps `connections` requests in flight, and
// on AWS each would get an environment; the local default (4 per route, for the 2 cores) would make one
// of them wait for another's whole invocation, a queue AWS does not have.
const runtime = await startBenchRuntime({
  scheduleIntervalSeconds: 300,
  concurrency: concurrencyCaps,
  ...(args['sdk-calls']
    ? {
        onSdkCall: ({ functionName, command }) => {
          const key = `${functionName} ${command}`;
          sdkCalls.set(key, (sdkCalls.get(key) ?? 0) + 1);
        },
      }
    : {}),
  ...(args.endpoint ? { deliveryRetrySeconds: [5, 300, 1800, 7200, 18_000, 36_000, 36_000] } : {}),
});
const readyMs = performance.now() - startedAt;
// The most environments each function had at once, sampled as the memory is.
const peakEnvironments = new Map<string, number>();
const environmentSampler = setInterval(() => {
  for (const [name, n] of Object.entries(runtime.environments()))
    if (n > (peakEnvironments.get(name) ?? 0)) peakEnvironments.set(name, n);
}, 250);
let exitCode = 0;
// The slow receiver: each delivery held, then refused.
let deliveriesReceived = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    deliveriesReceived++;
    setTimeout(() => res.writeHead(500).end(), endpointDelayMs).unref();
  });
});
try {
  const stores = await createStores(runtime.apiUrl);
  const api = benchApi(runtime.apiUrl);
  if (args.endpoint) {
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/slow`;
    unwrap(await api.POST('/v1/webhook_endpoints', { body: { url, enabledEvents: ['*'] } }));
  }
  console.log(
    `bench:e2e — ${rate} orders/s for ${duration} s (${amount} orders) ` +
      `over ${connections} connection(s), ${process.version}` +
      (args.endpoint
        ? `; a webhook endpoint whose receiver holds each delivery ${endpointDelayMs / 1000} s, then answers 500`
        : '; no webhook endpoint') +
      `; environments at most: ${Object.entries(concurrencyCaps)
        .map(([name, n]) => `${name} ${n}`)
        .join(', ')} (the others as deployed)`,
  );

  // What each accepted order became: its job, when its webhook was sent, when the job completed.
  const sentAt = new Map<number, number>();
  const outstanding = new Map<string, { orderId: number; sentAt: number; answeredAt: number }>();
  const completedAfter: number[] = [];
  /** The completed orders, for the stages read after the load. */
  const completedOrders: { id: string; sentAt: number; answeredAt: number; completedAt: number }[] = [];
  const dead: string[] = [];
  const refused: string[] = [];
  const webhookMs: number[] = [];
  let accepted = 0;
  // Each order is first placed on the reseller's shop (the simulator), as it is in life, so its tag
  // (CONTRACT.md §12.5) succeeds. Small ids: the simulator's own ids go on after the highest it was given.
  const firstOrderId = 1001;
  let nextOrderId = firstOrderId;
  const placing = progress("placing the orders on the reseller's shop", amount);
  for (let at = 0; at < amount; at += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, amount - at) }, (_, i) =>
        placeOnResellerShop(
          runtime.simulator!.url,
          stores.resellerShopDomain,
          orderBody(firstOrderId + at + i, stores.vendor),
        ),
      ),
    );
    placing.at(Math.min(amount, at + 50));
  }

  // Completion is read from the jobs' `completedAt`, so polling every 2 s costs no precision; each poll reads
  // pages down to the oldest outstanding job, so polling twice as often would cost the machine twice the
  // reads (a page presents 100 jobs: 5-8 % of a run's CPU at once a second), not the figures any precision.
  let pollRequests = 0;
  const poll = async () => {
    if (!outstanding.size) return;
    const oldest = Math.min(...[...outstanding.values()].map((o) => o.sentAt));
    const seen = new Map<string, JobView>();
    let cursor: string | undefined;
    // Newest first, down to the oldest outstanding job (2 s of slack for clocks and queueing).
    for (let page = 0; page < 20; page++) {
      const list = unwrap(
        await api.GET('/v1/sync_jobs', { params: { query: { limit: 100, starting_after: cursor } } }),
      );
      pollRequests++;
      const jobs = list.data;
      for (const job of jobs) seen.set(job.id, job);
      if (!list.has_more || !jobs.length || Date.parse(jobs.at(-1)!.createdAt) < oldest - 2000) break;
      cursor = jobs.at(-1)!.id;
    }
    for (const [id, order] of outstanding) {
      let job = seen.get(id);
      if (!job && order.sentAt < Date.now() - 5000) {
        // Older than the pages read: ask for it alone.
        const { data } = await api.GET('/v1/sync_jobs/{id}', { params: { path: { id } } });
        pollRequests++;
        if (data) job = data;
      }
      if (job?.status === 'completed' && job.completedAt) {
        completedAfter.push(Date.parse(job.completedAt) - order.sentAt);
        completedOrders.push({ id, ...order, completedAt: Date.parse(job.completedAt) });
        outstanding.delete(id);
      } else if (job?.status === 'dead') {
        dead.push(id);
        outstanding.delete(id);
      }
    }
  };
  // A read that fails (a list timing out on a machine loaded past it) is tried again at the next poll.
  const pollOrRetry = () =>
    poll().catch((error: Error) => process.stderr.write(`reading the jobs failed (${error.message}); again soon\n`));
  let loadRunning = true;
  const poller = (async () => {
    while (loadRunning) {
      await sleep(2000);
      await pollOrRetry();
    }
  })();

  const started = Date.now();
  const cpu = cpuSampler();
  const sending = progress(`sending orders at ${rate}/s`, amount);
  const instance = autocannon({
    url: runtime.apiUrl,
    connections,
    overallRate: rate,
    amount,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        path: ORDERS_WEBHOOK_PATH,
        // A new order for every request: its own id, body and signature.
        setupRequest: (request: any, context: any) => {
          const orderId = nextOrderId++;
          const body = orderBody(orderId, stores.vendor);
          context.orderId = orderId;
          sentAt.set(orderId, Date.now());
          return { ...request, body, headers: webhookHeaders(stores.resellerShopDomain, stores.resellerSecret, body) };
        },
        onResponse: (status: number, body: string, context: any) => {
          const orderId = context.orderId as number;
          sending.tick(`${completedAfter.length} completed`);
          let receipt: { syncJobIds?: string[] } | undefined;
          try {
            receipt = JSON.parse(body);
          } catch {
            receipt = undefined;
          }
          if (status !== 200 || receipt?.syncJobIds?.length !== 1) {
            refused.push(`${status} ${body.slice(0, 200)}`);
            return;
          }
          accepted++;
          outstanding.set(receipt.syncJobIds[0], { orderId, sentAt: sentAt.get(orderId)!, answeredAt: Date.now() });
        },
      },
    ],
  } as autocannon.Options);
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) =>
    webhookMs.push(responseTime),
  );
  const result = await instance;
  const loadSeconds = (Date.now() - started) / 1000;

  // The stragglers: keep reading until every accepted order completed or the grace period is over.
  loadRunning = false;
  await poller;
  const graceEnds = Date.now() + graceMs;
  const waiting = progress('waiting for the last jobs to complete', accepted, accepted - outstanding.size);
  while (outstanding.size && Date.now() < graceEnds) {
    await pollOrRetry();
    waiting.at(accepted - outstanding.size);
    if (outstanding.size) await sleep(500);
  }
  const cpuUsed = cpu.since();

  // The stages of a sample of the completed orders, from their attempt history (read after the load).
  const sample = completedOrders.filter((_, i) => i % Math.max(1, Math.floor(completedOrders.length / 300)) === 0);
  const stages = {
    intake: [] as number[],
    queue: [] as number[],
    placement: [] as number[],
    completion: [] as number[],
  };
  for (const order of sample) {
    const { data } = await api.GET('/v1/sync_jobs/{id}/attempts', { params: { path: { id: order.id } } });
    const attempt = data?.data.find((a) => a.outcome === 'completed');
    if (!attempt) continue;
    stages.intake.push(order.answeredAt - order.sentAt);
    stages.queue.push(Date.parse(attempt.startedAt) - order.answeredAt);
    stages.placement.push(attempt.durationMs);
    stages.completion.push(order.completedAt - order.sentAt);
  }

  const simOrders = (
    (await (await fetch(`${runtime.simulator!.url}/_sim/orders?shopDomain=${stores.sourceShopDomain}`)).json()) as {
      orders: { source_identifier: string }[];
    }
  ).orders;
  const perReseller = new Map<string, number>();
  for (const order of simOrders)
    perReseller.set(order.source_identifier, (perReseller.get(order.source_identifier) ?? 0) + 1);
  const duplicated = [...perReseller.values()].filter((n) => n > 1).length;
  const lost = outstanding.size + dead.length;
  const errors = result.errors + result.timeouts;

  const row = (name: string, values: number[], target?: string) => [
    name,
    values.length,
    fixed(percentile(values, 50)),
    fixed(percentile(values, 95)),
    fixed(percentile(values, 99)),
    fixed(Math.max(...values)),
    target ?? '',
  ];
  const p99 = percentile(completedAfter, 99);
  console.log();
  console.log(
    table(
      ['measure (ms)', 'count', 'p50', 'p95', 'p99', 'max', 'target'],
      [
        row(
          'webhook response',
          webhookMs,
          `p50 < ${TARGET_INTAKE_P50_MS}: ${percentile(webhookMs, 50) < TARGET_INTAKE_P50_MS ? 'PASS' : 'MISS'}`,
        ),
        row('webhook → completed', completedAfter, `p99 < ${TARGET_P99_MS}: ${p99 < TARGET_P99_MS ? 'PASS' : 'MISS'}`),
      ],
    ),
  );
  const stageRow = (name: string, what: string, values: number[]) => [
    name,
    what,
    fixed(percentile(values, 50)),
    fixed(percentile(values, 99)),
  ];
  console.log(`\nper stage, ${stages.completion.length} of the completed orders (every nth):`);
  console.log(
    table(
      ['stage (ms)', 'from → to', 'p50', 'p99'],
      [
        stageRow('intake', 'webhook sent → answered', stages.intake),
        stageRow('queue wait', 'answered → the attempt starts', stages.queue),
        stageRow('placement', 'claim → supplier order → completed', stages.placement),
        stageRow('completion', 'webhook sent → completed', stages.completion),
      ],
    ),
  );
  console.log(
    `\norders: sent ${sentAt.size}, accepted ${accepted}, refused ${refused.length}, connection errors ${errors}, ` +
      `completed ${completedAfter.length}, lost ${lost}, duplicated ${duplicated}`,
  );
  console.log(`supplier orders placed: ${simOrders.length} for ${perReseller.size} reseller orders`);
  console.log(
    `achieved rate: ${fixed(webhookMs.length / loadSeconds, 1)} orders/s over ${fixed(loadSeconds, 1)} s; ` +
      `${pollRequests} API reads to observe completion`,
  );
  if (args.endpoint)
    console.log(
      `slow endpoint: ${deliveriesReceived} deliveries reached it during the run (each held ` +
        `${endpointDelayMs / 1000} s, then 500); the orders' figures above are to match a run without one`,
    );
  if (lost)
    console.log(
      `lost: ${outstanding.size} not completed within ${graceMs / 1000} s after the load, ${dead.length} dead`,
    );
  if (refused.length) console.log(`refused: ${refused.slice(0, 5).join('; ')}`);
  const perOrder = (ms: number) => fixed(ms / Math.max(1, accepted));
  console.log(
    `CPU per order, from the first order sent to the last completed: ${perOrder(cpuUsed.self + cpuUsed.children)} ms ` +
      `(this process and its worker threads ${perOrder(cpuUsed.self)}, DynamoDB Local ${perOrder(cpuUsed.children)}; ` +
      'the bench observing included): the work itself, which the load of the machine changes little',
  );
  const peak = memory.peak();
  memory.stop();
  console.log(
    `local runtime: ready in ${fixed(readyMs / 1000, 1)} s (target ${TARGET_READY_MS / 1000} s: ` +
      `${readyMs < TARGET_READY_MS ? 'PASS' : 'MISS'}); peak memory ${megabytes(peak.total)} ` +
      `(this process and its worker threads ${megabytes(peak.self)}, DynamoDB Local the rest; ` +
      `target ${megabytes(TARGET_MEMORY_BYTES)}: ${peak.total < TARGET_MEMORY_BYTES ? 'PASS' : 'MISS'})`,
  );
  clearInterval(environmentSampler);
  const environmentPeaks = [...peakEnvironments].sort((a, b) => b[1] - a[1]);
  console.log(
    `environments at their peak: ${environmentPeaks.reduce((sum, [, n]) => sum + n, 0)} (` +
      `${environmentPeaks.map(([name, n]) => `${name} ${n}`).join(', ')})`,
  );
  if (args['sdk-calls']) printSdkCalls(accepted);
  const logLines = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').filter(Boolean) : [];
  const levels = (level: string) => logLines.filter((line) => line.includes(`"level":"${level}"`)).length;
  console.log(
    `the functions' log: ${logFile} (${logLines.length} lines: ${levels('WARN')} WARN, ${levels('ERROR')} ERROR)`,
  );
  if (profileDir) {
    const { profile } = await mainProfile.post('Profiler.stop');
    writeFileSync(join(profileDir, 'CPU.main.cpuprofile'), JSON.stringify(profile));
    console.log(
      `profiles and invocations (written as the threads end): ${profileDir}; npm run bench:profile -- ${profileDir}`,
    );
  }
  if (lost || duplicated || refused.length || errors) exitCode = 1;
} catch (error) {
  clearInterval(environmentSampler);
  exitCode = 1;
  console.error(error);
} finally {
  receiver.closeAllConnections();
  receiver.close();
  await runtime.stop();
}
process.exit(exitCode);

/** The SDK calls per accepted order, by function and command (`--sdk-calls`), the bench's own reads apart. */
function printSdkCalls(orders: number) {
  const byFunction = new Map<string, [string, number][]>();
  for (const [key, n] of sdkCalls) {
    const [name, command] = key.split(' ');
    byFunction.set(name, [...(byFunction.get(name) ?? []), [command, n]]);
  }
  const rows = [...byFunction]
    .map(([name, commands]) => ({ name, commands, total: commands.reduce((sum, [, n]) => sum + n, 0) }))
    .sort((a, b) => b.total - a.total)
    .map(({ name, commands, total }) => [
      name,
      fixed(total / orders, 2),
      commands
        .sort((a, b) => b[1] - a[1])
        .map(([command, n]) => `${command} ${fixed(n / orders, 2)}`)
        .join(', '),
    ]);
  console.log(`\nAWS SDK calls per accepted order (${orders}), by function (the bench's API reads included):`);
  console.log(table(['function', 'calls per order', 'by command'], rows));
}
