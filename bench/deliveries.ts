/**
 * `npm run bench:deliveries`: integrators isolated (issue 39, item 4; shared/events/README.md). Two
 * receivers on 127.0.0.1: one answers 204 at once, one takes every request and never answers (the
 * sender gives up after its 15 s). What it drives is the delivery path alone, not orders: the events
 * and their deliveries are written first (as the change stream's recorder writes them, untimed), then
 * their messages go on the local runtime's delivery queue at `--rate` a second for `--duration`
 * seconds, into its EventDeliveryWorker (its batch size and concurrency as lib/routes.ts declares
 * them): the queue, the claim, the endpoint's lease while it is not known to answer promptly (new
 * endpoints are not; shared/events/README.md), the signed POST, the outcome's write; a try that could
 * hang goes to EventDeliverySlowTry by an asynchronous invoke. Three phases, each its own owner:
 *
 *   1. alone:  the owner's one endpoint answers at once;
 *   2. alone:  the owner's one endpoint hangs (measured for the POST's 15 s and 5 s more);
 *   3. beside: the owner has both endpoints, every event goes to each.
 *
 * Prints, per phase and endpoint, the deliveries that reached the receiver and their latency (the
 * message sent to the request's arrival) p50/p99, and the most requests the hanging receiver held
 * open at once (at most its leases), and whether each endpoint ended prompt (its tries leasing no more):
 * the answering endpoint's latency stays what it is alone.
 *
 *   npm run bench:deliveries [-- --rate 200 --duration 10] [-- --quick]
 *
 * Exit code 1 when a delivery to the answering endpoint did not arrive within `--wait` seconds.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiClient } from '../client/client.js';
import { LOG_FILE_ENV } from '../lib/local/environments.js';
import {
  BENCH_API_KEYS,
  BENCH_KEY,
  fixed,
  flags,
  percentile,
  positiveNumber,
  sleep,
  startBenchRuntime,
  step,
  table,
} from './common.js';

const args = flags({ rate: { type: 'string' }, duration: { type: 'string' }, wait: { type: 'string' } });
const rate = positiveNumber('rate', args.rate, args.quick ? 50 : 200);
const durationSeconds = positiveNumber('duration', args.duration, args.quick ? 2 : 10);
const waitSeconds = positiveNumber('wait', args.wait, args.quick ? 60 : 120);
const events = Math.round(rate * durationSeconds);

const OTHER_OWNER = 'owner_bench_beside';
const OTHER_KEY = 'sk_test_bench_beside';
const HANGING_OWNER = 'owner_bench_hanging';
const HANGING_KEY = 'sk_test_bench_hanging';

/** A receiver on 127.0.0.1: the arrival time of each event id's request; `hang`: it never answers. */
const receiver = async (hang: boolean) => {
  const arrivals = new Map<string, number>();
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const id = String(req.headers['webhook-id'] ?? '');
    if (!arrivals.has(id)) arrivals.set(id, Date.now());
    req.resume();
    if (hang) {
      open.add(res);
      res.on('close', () => open.delete(res));
      return;
    }
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`,
    arrivals,
    /** Requests held open right now. */
    open: () => open.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.close(() => resolve());
      }),
  };
};

// The functions log to a file (one line a failed try: thousands), the figures to the terminal.
const logFile = join(tmpdir(), `bench-deliveries-${Date.now()}.log`);
process.env[LOG_FILE_ENV] = logFile;

step('starting the local runtime');
const runtime = await startBenchRuntime({
  apiKeys: `${BENCH_API_KEYS},${OTHER_OWNER}:${OTHER_KEY},${HANGING_OWNER}:${HANGING_KEY}`,
  // CONTRACT.md §14's schedule as on AWS: a failed try comes back after 5 s, then 5 minutes.
  deliveryRetrySeconds: [5, 300, 1800, 7200, 18000, 36000, 36000],
});
Object.assign(process.env, {
  TABLE_NAME: runtime.tableName,
  DELIVERY_QUEUE_URL: runtime.queues.delivery.url,
  AWS_ENDPOINT_URL_DYNAMODB: runtime.endpoints.dynamodb,
  AWS_ENDPOINT_URL_SQS: runtime.endpoints.sqs,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
});
// The shared clients are built when first imported: only now, with the environment set.
const { eventId, putEvent } = await import('../shared/entities/event.js');
const { eventDeliveryPut, newDelivery } = await import('../shared/entities/event-delivery.js');
const { putAlone } = await import('../shared/dynamo/table.js');
const { sendDeliveries } = await import('../shared/events/delivery-queue.js');
const { leasesPerEndpoint } = await import('../shared/entities/endpoint-leases.js');
const { webhookEndpointFrom, webhookEndpointKey } = await import('../shared/entities/webhook-endpoint.js');
const { getItem } = await import('../shared/dynamo/table.js');

const answering = await receiver(false);
const hanging = await receiver(true);
let exitCode = 0;

/** Runs `work` over `items`, `width` at a time. */
const inBatches = async <T>(items: T[], width: number, work: (item: T) => Promise<unknown>) => {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(work));
};

/**
 * Writes `events` events of `ownerId` for `endpointIds`, each with its deliveries, as the recorder
 * writes them (untimed); then sends their messages at `rate` a second, 10 (a SendMessageBatch) at a
 * time. Each event id and when its messages were sent.
 */
const drive = async (ownerId: string, endpointIds: string[]) => {
  const at = new Date().toISOString();
  const written = Array.from({ length: events }, (_, i) => ({
    id: eventId('sync_job.completed', at, `sj_bench_${ownerId}_${i}`),
    ownerId,
    type: 'sync_job.completed' as const,
    createdAt: at,
    object: { object: 'sync_job', id: `sj_bench_${i}`, status: 'completed' },
    endpointIds,
    failingEndpointIds: [],
  }));
  await inBatches(written, 25, async (event) => {
    await putEvent(event);
    await Promise.all(endpointIds.map((id) => putAlone(eventDeliveryPut(newDelivery(event, id)))));
  });
  const sentAt = new Map<string, number>();
  const started = Date.now();
  const sending: Promise<void>[] = [];
  for (let i = 0; i < events; i += 10) {
    const due = started + (i * 1000) / rate;
    if (due > Date.now()) await sleep(due - Date.now());
    const chunk = written.slice(i, i + 10);
    for (const event of chunk) sentAt.set(event.id, Date.now());
    const messages = chunk.flatMap((event) =>
      endpointIds.map((endpointId) => ({ eventId: event.id, endpointId, attempts: 0 })),
    );
    sending.push(sendDeliveries(messages));
  }
  await Promise.all(sending);
  return { sentAt, sendSeconds: (Date.now() - started) / 1000 };
};

/** Waits until `receiver` has every event of `created`, or `waitSeconds` pass. */
const arrived = async (target: typeof answering, created: Map<string, number>) => {
  const until = Date.now() + waitSeconds * 1000;
  const count = () => [...created.keys()].filter((id) => target.arrivals.has(id)).length;
  while (count() < created.size && Date.now() < until) await sleep(200);
  return count();
};

const latencies = (target: typeof answering, created: Map<string, number>) =>
  [...created].flatMap(([id, at]) => {
    const arrival = target.arrivals.get(id);
    return arrival === undefined ? [] : [arrival - at];
  });

const row = (
  phase: string,
  endpoint: string,
  target: typeof answering,
  { sentAt, sendSeconds }: Awaited<ReturnType<typeof drive>>,
) => {
  const ms = latencies(target, sentAt);
  return [
    phase,
    endpoint,
    sentAt.size,
    fixed(sendSeconds, 1),
    ms.length,
    ms.length ? fixed(percentile(ms, 50), 0) : '-',
    ms.length ? fixed(percentile(ms, 99), 0) : '-',
  ];
};

/** The endpoint's id, made by the owner's key; `url` its receiver. */
const makeEndpoint = async (api: ReturnType<typeof createApiClient>, url: string) => {
  const made = await api.POST('/v1/webhook_endpoints', { body: { url, enabledEvents: ['*'] } });
  if (made.response.status !== 201 || !made.data)
    throw new Error(`creating an endpoint answered ${made.response.status}`);
  return made.data.id;
};

try {
  const alone = createApiClient({ baseUrl: runtime.apiUrl, apiKey: BENCH_KEY });
  const beside = createApiClient({ baseUrl: runtime.apiUrl, apiKey: OTHER_KEY });
  const hangingAlone = createApiClient({ baseUrl: runtime.apiUrl, apiKey: HANGING_KEY });
  const aloneIds = [await makeEndpoint(alone, answering.url)];
  const hangingIds = [await makeEndpoint(hangingAlone, hanging.url)];
  const besideIds = [await makeEndpoint(beside, answering.url), await makeEndpoint(beside, hanging.url)];
  console.log(
    `bench:deliveries — ${events} events at ${rate}/s (${durationSeconds} s) per phase, straight onto the ` +
      `delivery queue; ${leasesPerEndpoint()} leases per endpoint; ${process.version}`,
  );

  step('phase 1: the answering endpoint alone');
  const first = await drive('owner_bench', aloneIds);
  const firstArrived = await arrived(answering, first.sentAt);

  let mostOpen = 0;
  const watch = setInterval(() => {
    mostOpen = Math.max(mostOpen, hanging.open());
  }, 20);
  step('phase 2: the hanging endpoint alone');
  const hung = await drive(HANGING_OWNER, hangingIds);
  // Its tries never end in an answer: what reached it within the POST's 15 s and 5 s more.
  await sleep(20_000);
  const mostOpenAlone = mostOpen;
  mostOpen = 0;

  step('phase 3: the answering endpoint beside one that hangs');
  const second = await drive(OTHER_OWNER, besideIds);
  const secondArrived = await arrived(answering, second.sentAt);
  clearInterval(watch);

  console.log(
    `\n${table(
      ['phase', 'endpoint', 'events', 'sent in s', 'reached it', 'p50 ms', 'p99 ms'],
      [
        row('alone', 'answers at once', answering, first),
        row('alone', 'hangs', hanging, hung),
        row('beside', 'answers at once', answering, second),
        row('beside', 'hangs', hanging, second),
      ],
    )}`,
  );
  console.log(
    `\nThe hanging receiver held at most ${mostOpenAlone} requests open at once alone, ${mostOpen} beside ` +
      `(its leases: ${leasesPerEndpoint()}); its other tries failed unsent, and are tried again on the schedule ` +
      'of CONTRACT.md §14.',
  );
  const prompt = async (ownerId: string, id: string) =>
    (await getItem(webhookEndpointKey(ownerId, id), webhookEndpointFrom, true))?.promptSince ? 'yes' : 'no';
  console.log(
    `Prompt at the end (no lease): alone ${await prompt('owner_bench', aloneIds[0])}, beside ` +
      `${await prompt(OTHER_OWNER, besideIds[0])}; the hanging one ${await prompt(HANGING_OWNER, hangingIds[0])} ` +
      `alone, ${await prompt(OTHER_OWNER, besideIds[1])} beside.`,
  );
  console.log(`The functions' log: ${logFile}`);
  if (firstArrived < first.sentAt.size || secondArrived < second.sentAt.size) {
    const lost = first.sentAt.size - firstArrived + second.sentAt.size - secondArrived;
    console.log(`LOST: ${lost} deliveries to the answering endpoint did not arrive within ${waitSeconds} s`);
    exitCode = 1;
  }
} catch (error) {
  console.error(error);
  exitCode = 1;
} finally {
  await answering.close();
  await hanging.close();
  await runtime.stop();
}
process.exit(exitCode);
