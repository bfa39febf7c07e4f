/**
 * `npm run bench:cost`: what AWS would bill per order, and per million orders.
 *
 * Pushes a batch of signed single-supplier `orders/create` webhooks (default 500; `--quick` 20)
 * through the local runtime, waits until every order's sync job is `completed`, and counts what
 * AWS bills for (bench/meter.ts): HTTP API requests, Lambda requests and GB-seconds at the
 * configured memory, DynamoDB read and write request units as DynamoDB reports them, SQS
 * requests, KMS requests. Multiplied by bench/prices.ts.
 *
 *   npm run bench:cost [-- --orders 500] [-- --concurrency 4] [-- --quick] [-- --held <seconds>]
 *
 * `--held <seconds>`: the reseller store holds every order that long (`routingPolicy.holdSeconds`,
 * CONTRACT.md §11), so the run measures the held path: each order is on the reseller's shop (the
 * simulator) before its webhook, and is read again there when its delay ends.
 *
 * Counting runs from the first webhook until the work has ended; setting up the stores and
 * reading the jobs' statuses through the API are not counted, and long polls that return
 * nothing (the pollers waiting) are reported apart. Target: under $5 per million orders.
 * The exit code is 0 unless an order was refused or not completed; the cost never fails the run.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { paginateScan } from '@aws-sdk/lib-dynamodb';
import type { Node } from 'constructs';
import { createApiClient } from '../client/client.js';
import { loadConfig } from '../lib/config.js';
import { localDocumentClient } from '../lib/local/dynamodb.js';
import type { SdkCall } from '../lib/local/protocol.js';
import type { Item } from '../shared/dynamo/table.js';
import { TABLE_DEFINITION } from '../shared/dynamo/table-definition.js';
import { itemSize } from '../shared/order-flow/order-repository.js';
import { TAGGED_ATTRIBUTE } from '../shared/order-flow/order-sync-job.js';
import { PROJECT_ROOT } from './bundling.js';
import {
  benchApi,
  createStores,
  dynamoByOperation,
  fixed,
  flags,
  orderBody,
  placeOnResellerShop,
  positiveNumber,
  postOrderWebhook,
  progress,
  readJobs,
  sleep,
  startBenchRuntime,
  step,
  table,
} from './common.js';
import { COST_MEASUREMENT_RUN, type CostMeasurement, medianOf, percentileOf } from './cost-measurement.js';
import { captureFunctionLogs } from './logs.js';
import { createMeter, emptyUsage } from './meter.js';
import { PRICES } from './prices.js';

const TARGET_PER_MILLION = 5;
/** 0.0000002 rather than 2e-7: the way AWS's pages can be checked against it. */
const unitPrice = (price: number) => price.toFixed(12).replace(/0+$/, '');
/**
 * The functions an order runs through; any other invocation (the API reads of the bench) is not the order's.
 * The reseller order's tag (CONTRACT.md §12.5) is tried by SyncWorker once the supplier order is placed, before
 * the completion's write, which records it; FulfillmentWorker when that try fails (a 429, no answer in time:
 * shared/order-flow/tagging.ts `tagNow`).
 */
const PIPELINE = new Set(['OrdersWebhook', 'SyncWorker', 'SyncDeadLetter', 'EventRecorder', 'FulfillmentWorker']);
/** What an event and its delivery run through, for the delivery's own cost (phase 4). */
const DELIVERY = new Set([...PIPELINE, 'EventDeliveryWorker']);
/** CONTRACT.md §14 / issue 31: an order with no endpoint pays at most this many write units for its event. */
const EVENT_WRU_BUDGET = 1.0;
/** CONTRACT.md §12.5 / issue 29: the reseller order's tag adds one platform call per job and at most this many WRU. */
const TAG_WRU_BUDGET = 1.0;
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem']);
/** Write units DynamoDB Local reported for transactions that succeeded (AWS bills each item twice). */
const transactionalWru = (u: ReturnType<typeof createMeter>['meter']['usage']) =>
  [...u.dynamo.byOperation]
    .filter(([op]) => op.startsWith('TransactWriteItems') && !op.endsWith('(failed)'))
    .reduce((s, [, o]) => s + o.units, 0);
/** Write units of the event items (`EVT#…`: the event, its deliveries) in a usage. */
const eventWru = (u: ReturnType<typeof createMeter>['meter']['usage']) =>
  [...u.dynamo.byOperation]
    .filter(
      ([op]) => /\bEVT\b/.test(op) && !op.startsWith('Query') && !op.startsWith('Get') && !op.startsWith('BatchGet'),
    )
    .reduce((s, [, o]) => s + o.units, 0);

const args = flags({
  orders: { type: 'string' },
  concurrency: { type: 'string' },
  timeout: { type: 'string' },
  held: { type: 'string' },
  out: { type: 'string' },
});
const outFile = args.out ?? join(PROJECT_ROOT, COST_MEASUREMENT_RUN);
const heldSeconds = args.held === undefined ? 0 : Math.round(positiveNumber('held', args.held, 1));
const orders = Math.round(positiveNumber('orders', args.orders, args.quick ? 20 : 500));
const concurrency = Math.round(positiveNumber('concurrency', args.concurrency, 4));
const timeoutMs = positiveNumber('timeout', args.timeout, 60 + heldSeconds + orders / 5) * 1000;

/** The memory every function is deployed with: lib/config.ts's value for cdk.json's context. */
const memoryMb = (() => {
  const context = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context ?? {};
  return loadConfig({ node: { tryGetContext: (key: string) => context[key] } } as unknown as { node: Node }).memorySize;
})();

const { meter, onInvoke, onSdkCall } = createMeter();
/**
 * The tag's own writes: the writes of a job (`SJ#`) that set its `tagged` but not its `status` (whichever worker
 * makes them): the completion's, which records the tag tried just before it, is the order's, not the tag's;
 * its store's `apiVersion` (CONTRACT.md §12.4, once per environment and store) is not the tag's. A failed
 * conditional write is billed 1 unit, as the meter counts it.
 */
const tagWrites = { calls: 0, wru: 0 };
/** The EventRecorder's writes, counted or not: the settle waits for one event per job (the change stream lags). */
let eventWrites = 0;
const onSdkCallAndTags = (call: SdkCall) => {
  onSdkCall(call);
  if (call.functionName === 'EventRecorder' && call.service === 'DynamoDB' && WRITES.has(call.command)) eventWrites++;
  if (!meter.counting || !PIPELINE.has(call.functionName) || call.service !== 'DynamoDB') return;
  const input = call.input as { Key?: { PK?: unknown }; ExpressionAttributeNames?: Record<string, string> };
  if (!WRITES.has(call.command) || !String(input.Key?.PK ?? '').startsWith('SJ#')) return;
  const names = Object.values(input.ExpressionAttributeNames ?? {});
  if (!names.includes(TAGGED_ATTRIBUTE) || names.includes('status')) return;
  tagWrites.calls++;
  const consumed = call.consumedCapacity as { CapacityUnits?: number } | { CapacityUnits?: number }[] | undefined;
  const units = [consumed ?? []].flat().reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
  tagWrites.wru += call.error === undefined ? units : 1;
};
// The functions log as deployed (lib/config.ts's default logLevel, INFO) and write their EMF metrics lines,
// so the bytes they log per order are measured (bench/logs.ts).
process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
process.env.POWERTOOLS_METRICS_DISABLED = 'false';
step('starting the local runtime');
const runtime = await startBenchRuntime({ onInvoke, onSdkCall: onSdkCallAndTags });
const logs = captureFunctionLogs(() => meter.counting);
const logSnapshot = () => new Map([...logs.count.byLevel].map(([level, c]) => [level, { ...c }]));

/**
 * What the table holds, in bytes as DynamoDB bills storage: each item's size plus 100 bytes, and each
 * index entry's (its keys and projected attributes, plus 100 bytes).
 */
const tableBytes = async () => {
  const doc = localDocumentClient(runtime.endpoints.dynamodb);
  const byKind = new Map<string, { items: number; bytes: number }>();
  let indexBytes = 0;
  for await (const page of paginateScan({ client: doc }, { TableName: runtime.tableName })) {
    for (const item of (page.Items ?? []) as Item[]) {
      const kind = String(item.PK).split('#')[0];
      const entry = byKind.get(kind) ?? { items: 0, bytes: 0 };
      entry.items++;
      entry.bytes += itemSize(item) + 100;
      byKind.set(kind, entry);
      for (const gsi of TABLE_DEFINITION.globalIndexes) {
        const pk = gsi.partitionKey.name;
        const sk = gsi.sortKey.name;
        if (item[pk] === undefined || item[sk] === undefined) continue;
        const names = [
          'PK',
          'SK',
          pk,
          sk,
          ...(gsi.projection.type === 'INCLUDE' ? gsi.projection.nonKeyAttributes : []),
        ];
        indexBytes +=
          itemSize(Object.fromEntries(names.filter((n) => item[n] !== undefined).map((n) => [n, item[n]]))) + 100;
      }
    }
  }
  const bytes = [...byKind.values()].reduce((sum, k) => sum + k.bytes, 0);
  return { bytes, indexBytes, byKind };
};
let exitCode = 0;
try {
  const stores = await createStores(runtime.apiUrl, heldSeconds ? { routingPolicy: { holdSeconds: heldSeconds } } : {});
  const simOrders = async () =>
    (
      (await (await fetch(`${runtime.simulator!.url}/_sim/orders?shopDomain=${stores.sourceShopDomain}`)).json()) as {
        orders: unknown[];
      }
    ).orders.length;

  console.log(
    `bench:cost — ${orders} single-supplier orders, ${concurrency} at a time, ` +
      `${memoryMb} MB functions, ${process.version}${heldSeconds ? `, every order held ${heldSeconds} s` : ''}`,
  );

  const storedBefore = await tableBytes();

  // 1. The orders, counted from the first webhook.
  const jobIds = new Set<string>();
  const refused: string[] = [];
  const firstId = Date.now() * 1000;
  let next = 0;
  let webhookRequests = 0;
  meter.counting = true;
  const started = performance.now();
  const sending = progress('sending orders', orders);
  // The platform's side: no API key, a signature per body.
  const platform = createApiClient({ baseUrl: runtime.apiUrl });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < orders) {
        const body = orderBody(firstId + next++, stores.vendor);
        // A held order is read again from the reseller's shop when its delay ends: it is there (not billed).
        // An unheld one is not: its tag (CONTRACT.md §12.5) is refused (404) and given up, one call and
        // one write as a tag that succeeds. Not placed, as placing orders of 16-digit ids moves the
        // simulator's order ids, so the supplier's ids grow and with them the job item (docs/performance.md).
        if (heldSeconds) await placeOnResellerShop(runtime.simulator!.url, stores.resellerShopDomain, body);
        const { data, error, response } = await postOrderWebhook(platform, stores, body);
        webhookRequests++;
        if (data?.syncJobIds.length !== 1) refused.push(`${response.status} ${JSON.stringify(data ?? error)}`);
        for (const id of data?.syncJobIds ?? []) jobIds.add(id);
        sending.tick();
      }
    }),
  );
  const sentMs = performance.now() - started;

  // 2. Wait until every job is completed and its reseller order tagged. EndResult = the sync worker has handled
  // a message per job (and tried its tag, the fulfillment worker any left to it), the supplier has every
  // order, and nothing of the order's pipeline ran for a moment (the poller deletes a batch after its
  // invocation). Only then is counting paused to read the jobs through
  // the API, whose own reads are not the orders' cost; if some job is not completed yet (a retry
  // is due), counting resumes until the next settle.
  const lastPipelineInvoke = () => Math.max(0, ...[...PIPELINE].map((n) => meter.lastInvokeAt.get(n) ?? 0));
  const deadline = Date.now() + timeoutMs;
  let notCompleted = [...jobIds];
  let invocationsWhilePaused = 0;
  const settling = progress('waiting for the worker to handle every job', jobIds.size);
  for (;;) {
    const handled = meter.usage.invocations.get('SyncWorker')?.records ?? 0;
    settling.at(Math.min(handled, jobIds.size), `${fixed((performance.now() - started) / 1000)} s`);
    // Each job's `sync_job.completed` recorded too (at most 10 s more): else the change stream's last batch may
    // run while counting is paused.
    const eventsIn = eventWrites >= jobIds.size || Date.now() - lastPipelineInvoke() > 10_000;
    const quiet = Date.now() - lastPipelineInvoke() > 750;
    if (handled >= jobIds.size && quiet && eventsIn && (await simOrders()) >= jobIds.size) {
      const before = lastPipelineInvoke();
      meter.counting = false;
      const { jobs } = await readJobs(runtime.apiUrl, new Set(notCompleted));
      notCompleted = notCompleted.filter((id) => jobs.get(id)?.status !== 'completed' || jobs.get(id)?.tagged === null);
      if (lastPipelineInvoke() !== before) invocationsWhilePaused++;
      if (!notCompleted.length) break;
      meter.counting = true;
    }
    if (Date.now() > deadline) {
      meter.counting = false;
      break;
    }
    await sleep(250);
  }
  const settledMs = performance.now() - started;

  const phase1Logs = logSnapshot();
  const phase1ByFunction = new Map(logs.count.byFunction);
  const storedAfter = await tableBytes();

  // 3. The bill.
  const u = meter.usage;
  const perOrder = (n: number) => n / orders;
  const invocations = [...u.invocations].filter(([name]) => PIPELINE.has(name));
  const lambdaRequests = invocations.reduce((s, [, i]) => s + i.count, 0);
  const gbSeconds = invocations.reduce((s, [, i]) => s + (i.billedMs / 1000) * (memoryMb / 1024), 0);
  const wru = u.dynamo.wru + u.dynamo.failedWritesWru;
  const sqsRequests = [...u.sqs.requests.values()].reduce((s, n) => s + n, 0);
  const kmsRequests = [...u.kms.values()].reduce((s, n) => s + n, 0);
  const lines: [string, number, number][] = [
    ['API Gateway HTTP API requests', perOrder(webhookRequests), PRICES.httpApiRequest],
    ['Lambda requests', perOrder(lambdaRequests), PRICES.lambdaRequest],
    [`Lambda GB-seconds (${memoryMb} MB, arm64)`, perOrder(gbSeconds), PRICES.lambdaGbSecond],
    ['DynamoDB write request units', perOrder(wru), PRICES.dynamoWru],
    ['DynamoDB read request units', perOrder(u.dynamo.rru), PRICES.dynamoRru],
    ['SQS requests', perOrder(sqsRequests), PRICES.sqsRequest],
    ['KMS requests', perOrder(kmsRequests), PRICES.kmsRequest],
  ];
  const total = lines.reduce((s, [, count, price]) => s + count * price * 1e6, 0);

  console.log(
    `\nOrders: ${orders} sent in ${fixed(sentMs / 1000, 1)} s; ` +
      `${jobIds.size - notCompleted.length} of ${jobIds.size} jobs completed after ${fixed(settledMs / 1000, 1)} s; ` +
      `refused ${refused.length}.`,
  );
  console.log(`\nCost per order (us-east-1, on-demand, prices of bench/prices.ts as of ${PRICES.asOf}):\n`);
  console.log(
    table(
      ['item', 'per order', '$ per unit', 'per order × $ per unit × 10^6 = $ per million orders'],
      [
        ...lines.map(([item, count, price]) => [
          item,
          fixed(count, 4),
          unitPrice(price),
          `${fixed(count, 4)} × ${unitPrice(price)} × 10^6 = ${fixed(count * price * 1e6, 4)}`,
        ]),
        ['total', '', '', fixed(total, 4)],
      ],
    ),
  );
  console.log(
    `\nCost per million single-supplier orders: $${fixed(total, 2)} (target < $${TARGET_PER_MILLION}): ` +
      (total < TARGET_PER_MILLION ? 'PASS' : 'MISS'),
  );

  // The local pollers hand the worker whatever one long poll returns; on AWS the event source
  // waits up to its 1 s batching window for 10 messages, so under steady traffic a worker
  // invocation, a ReceiveMessage and a DeleteMessageBatch serve ten orders. Same durations per message.
  const worker = u.invocations.get('SyncWorker');
  if (worker?.count) {
    const perBatch = 10;
    const messages = perOrder(worker.records);
    const receivesAndDeletes = perOrder(
      (u.sqs.requests.get('ReceiveMessage') ?? 0) + (u.sqs.requests.get('DeleteMessageBatch') ?? 0),
    );
    const batched =
      total -
      (perOrder(worker.count) - messages / perBatch) * PRICES.lambdaRequest * 1e6 -
      (receivesAndDeletes - (2 * messages) / perBatch) * PRICES.sqsRequest * 1e6;
    console.log(
      `With full batches of ${perBatch} (AWS's 1 s batching window under steady traffic; same duration per message): ` +
        `${fixed(messages / perBatch, 3)} worker invocations and ${fixed((2 * messages) / perBatch, 3)} ` +
        `receives + deletes per order: $${fixed(batched, 2)} per million orders.`,
    );
  }

  console.log('\nLambda, by function:');
  console.log(
    table(
      ['function', 'invocations/order', 'messages/batch', 'avg billed ms', 'GB-s/order'],
      invocations.map(([name, i]) => [
        name,
        fixed(perOrder(i.count), 3),
        i.records ? fixed(i.records / i.count, 2) : '-',
        fixed(i.billedMs / i.count, 1),
        fixed(perOrder((i.billedMs / 1000) * (memoryMb / 1024)), 5),
      ]),
    ),
  );
  console.log('\nDynamoDB, by operation (units as DynamoDB Local reports them with ReturnConsumedCapacity):');
  console.log(dynamoByOperation(u, (n) => fixed(perOrder(n), 3), '/order'));
  console.log(
    `  of the write units, ${fixed(perOrder(u.dynamo.gsiWru), 3)} per order are GSI writes: ` +
      'DynamoDB Local counts them in the total ' +
      `(total − table − indexes = ${fixed(u.dynamo.unexplained, 3)} over the run).`,
  );
  if (u.dynamo.failedWrites)
    console.log(
      `  ${u.dynamo.failedWrites} conditional write(s) failed: estimated at ${u.dynamo.failedWritesWru} WRU ` +
        '(DynamoDB bills them but reports no capacity).',
    );
  const eventUnits = perOrder(eventWru(u));
  console.log(
    `\nEvents (CONTRACT.md §14), no webhook endpoint: ${fixed(eventUnits, 3)} write units per order for its ` +
      `sync_job.completed (the event's one PutItem at its place in its type's list, no index entry, written by ` +
      `EventRecorder from the change stream; the order's own writes are unchanged). ` +
      `Budget +${EVENT_WRU_BUDGET.toFixed(1)}: ` +
      (eventUnits <= EVENT_WRU_BUDGET ? 'PASS' : 'MISS'),
  );
  // The tag's platform calls: every call the reseller's shop answered but those keeping its subscriptions.
  const simCalls = (
    (await (await fetch(`${runtime.simulator!.url}/_sim/calls`)).json()) as {
      calls: { shopDomain: string; subscription?: true }[];
    }
  ).calls.filter((c) => !c.subscription);
  const callsTo = (shopDomain: string) => simCalls.filter((c) => c.shopDomain === shopDomain).length;
  const tagUnits = perOrder(tagWrites.wru);
  const tagCalls = perOrder(callsTo(stores.resellerShopDomain));
  console.log(
    `\nTags (CONTRACT.md §12.5): ${fixed(tagCalls, 3)} platform call(s) per job to the reseller's shop ` +
      `(the supplier's: ${fixed(perOrder(callsTo(stores.sourceShopDomain)), 3)}); ${fixed(tagUnits, 3)} write units ` +
      `per order in ${fixed(perOrder(tagWrites.calls), 3)} write(s) ` +
      "(`tagged` on the job, its own writes: the completion's records SyncWorker's try; " +
      `${heldSeconds ? 'each order on the reseller’s shop' : 'no order on its shop: every tag refused'}). ` +
      `Budget 1 call and +${TAG_WRU_BUDGET.toFixed(1)} write units: ` +
      (tagCalls <= 1 && tagUnits <= TAG_WRU_BUDGET ? 'PASS' : 'MISS'),
  );
  console.log('\nSQS, by action (billable requests, 64 KiB chunks):');
  console.log(
    table(
      ['action', 'requests/order'],
      [...u.sqs.requests].map(([action, n]) => [action, fixed(perOrder(n), 3)]),
    ),
  );
  console.log(
    `\nKMS: ${[...u.kms].map(([action, n]) => `${action} ${n}`).join(', ') || 'no calls'} over the run ` +
      '(a decrypted secret is kept for its execution environment’s life).',
  );
  console.log(
    `\nNot billed to the orders: ${u.sqs.emptyReceives} long polls that returned nothing ` +
      `during the ${fixed(settledMs / 1000, 1)} s run (the local pollers wait 1 s per poll; on AWS the SQS ` +
      "event source mappings' long polls cost a fixed amount a month whatever the traffic).",
  );
  // The reconciler's run after the orders: what it reads does not depend on the completed jobs.
  const reconciler = (await runtime.invoke('SyncReconciler')) as { inFlight: number; readUnits: number };
  console.log(
    `\nReconciler run after the ${jobIds.size} orders: ${reconciler.inFlight} job(s) in flight, ` +
      `${reconciler.readUnits} read units (its Queries of the in-flight index; none of the completed jobs).`,
  );

  let deliveryRecord: CostMeasurement['delivery'] = null;
  let phase4LogsStart = logSnapshot();
  // 4. A delivery's own cost: the same orders with one webhook endpoint (a receiver on 127.0.0.1 that
  // answers 204), per order, less phase 1's per order.
  const deliveries = Math.min(orders, 100);
  let received = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  try {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await benchApi(runtime.apiUrl).POST('/v1/webhook_endpoints', { body: { url, enabledEvents: ['*'] } });
    // The recorder keeps an owner's endpoints 10 s (shared/events/schedule-deliveries.ts).
    await sleep(11_000);
    const phase1 = u;
    phase4LogsStart = logSnapshot();
    meter.usage = emptyUsage();
    meter.counting = true;
    const base = firstId + orders;
    for (let i = 0; i < deliveries; i += concurrency)
      await Promise.all(
        Array.from({ length: Math.min(concurrency, deliveries - i) }, (_, k) =>
          postOrderWebhook(platform, stores, orderBody(base + i + k, stores.vendor)),
        ),
      );
    const last = () => Math.max(0, ...[...DELIVERY].map((n) => meter.lastInvokeAt.get(n) ?? 0));
    const until = Date.now() + timeoutMs;
    // Until every delivery arrived and every order of this phase was placed and tagged, as in phase 1.
    const records = (name: string) => meter.usage.invocations.get(name)?.records ?? 0;
    while (
      (received < deliveries || records('SyncWorker') < deliveries || Date.now() - last() < 1500) &&
      Date.now() < until
    )
      await sleep(250);
    meter.counting = false;
    const d = meter.usage;
    const lambda = (usage: typeof d, names: Set<string>) =>
      [...usage.invocations].filter(([n]) => names.has(n)).reduce((s, [, i]) => s + i.count, 0);
    const sqsOf = (usage: typeof d) => [...usage.sqs.requests.values()].reduce((s, n) => s + n, 0);
    const delta = (withOne: number, without: number) => withOne / deliveries - without / orders;
    const rows: [string, number, number][] = [
      ['DynamoDB write request units', delta(d.dynamo.wru + d.dynamo.failedWritesWru, wru), PRICES.dynamoWru],
      ['DynamoDB read request units', delta(d.dynamo.rru, phase1.dynamo.rru), PRICES.dynamoRru],
      ['Lambda requests', delta(lambda(d, DELIVERY), lambda(phase1, DELIVERY)), PRICES.lambdaRequest],
      ['SQS requests', delta(sqsOf(d), sqsRequests), PRICES.sqsRequest],
      [
        'KMS requests',
        delta(
          [...d.kms.values()].reduce((s, n) => s + n, 0),
          kmsRequests,
        ),
        PRICES.kmsRequest,
      ],
    ];
    const perMillion = rows.reduce((s, [, n, price]) => s + n * price * 1e6, 0);
    deliveryRecord = {
      deliveries,
      wru: rows[0][1],
      transactionalWru: Math.max(0, delta(transactionalWru(d), transactionalWru(phase1))),
      rru: rows[1][1],
      lambdaRequests: rows[2][1],
      sqsRequests: rows[3][1],
      kmsRequests: rows[4][1],
      logBytes:
        [...logs.count.byLevel].reduce(
          (sum, [level, c]) => sum + c.bytes - (phase4LogsStart.get(level)?.bytes ?? 0),
          0,
        ) /
          deliveries -
        [...phase1Logs.values()].reduce((sum, c) => sum + c.bytes, 0) / orders,
      workerBilledMs: medianOf(d.invocations.get('EventDeliveryWorker')?.billed ?? []),
      workerBilledMsP10: percentileOf(d.invocations.get('EventDeliveryWorker')?.billed ?? [], 10),
    };
    console.log(
      `\nA delivery (${deliveries} orders to one endpoint answering 204, ${received} deliveries received), ` +
        'per order with one endpoint less per order with none:\n',
    );
    console.log(
      table(
        ['item', 'per delivery', '$ per million deliveries'],
        [
          ...rows.map(([item, n, price]) => [item, fixed(n, 3), fixed(n * price * 1e6, 4)]),
          ['total', '', fixed(perMillion, 4)],
        ],
      ),
    );
    console.log(
      `  of the write units, ${fixed(eventWru(d) / deliveries - eventUnits, 3)} on the event and delivery ` +
        'items (EVT#…).',
    );
    console.log(
      '  (Lambda GB-seconds left out: a delivery is a POST whose time is the receiver’s; 20 ms at 256 MB would add ' +
        `$${fixed(0.02 * (memoryMb / 1024) * PRICES.lambdaGbSecond * 1e6, 4)} per million.)`,
    );
  } finally {
    await new Promise((done) => receiver.close(done));
  }

  // 5. The measurement, for bench:monthly (bench/cost-measurement.ts).
  const measurement: CostMeasurement = {
    measuredAt: new Date().toISOString(),
    command: `npm run bench:cost --${args.quick ? ' --quick' : ''} --orders ${orders} --concurrency ${concurrency}`,
    node: process.version,
    loadAverage: Number(loadavg()[0].toFixed(1)),
    cores: availableParallelism(),
    memoryMb,
    orders,
    completed: jobIds.size - notCompleted.length,
    perOrder: {
      httpRequests: perOrder(webhookRequests),
      wru: perOrder(wru),
      rru: perOrder(u.dynamo.rru),
      sqs: Object.fromEntries([...u.sqs.requests].map(([action, n]) => [action, perOrder(n)])),
      kms: Object.fromEntries([...u.kmsByFunction].map(([fn, n]) => [fn, perOrder(n)])),
      platformCalls: { supplier: perOrder(callsTo(stores.sourceShopDomain)), reseller: tagCalls },
      logBytes: Object.fromEntries([...phase1Logs].map(([level, c]) => [level, perOrder(c.bytes)])),
      logBytesByFunction: Object.fromEntries([...phase1ByFunction].map(([fn, b]) => [fn, perOrder(b)])),
      storedBytes: perOrder(storedAfter.bytes - storedBefore.bytes),
      indexBytes: perOrder(storedAfter.indexBytes - storedBefore.indexBytes),
    },
    emfMetrics: [...logs.count.metrics].sort(),
    functions: Object.fromEntries(
      invocations.map(([name, i]) => [
        name,
        {
          invocations: perOrder(i.count),
          recordsPerInvocation: i.records ? i.records / i.count : 1,
          billedMsMedian: medianOf(i.billed),
          billedMsMean: i.billedMs / i.count,
          billedMsP10: percentileOf(i.billed, 10),
        },
      ]),
    ),
    delivery: deliveryRecord,
  };
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, `${JSON.stringify(measurement, null, 2)}\n`);
  console.log(`\nThe measurement for bench:monthly: ${outFile}`);

  if (invocationsWhilePaused)
    console.log(
      `Warning: the pipeline ran while counting was paused ${invocationsWhilePaused} time(s); the counts may be low.`,
    );

  if (refused.length || notCompleted.length) {
    exitCode = 1;
    console.log(
      `\nFAILED: ${refused.length} webhook(s) refused (${refused.slice(0, 3).join('; ')}), ` +
        `${notCompleted.length} job(s) not completed within ${timeoutMs / 1000} s.`,
    );
  }
} catch (error) {
  exitCode = 1;
  console.error(error);
} finally {
  meter.counting = false;
  logs.stop();
  await runtime.stop();
}
process.exit(exitCode);
