/**
 * `npm run bench:deliveries`: integrators isolated (issue 39, item 4; docs/design.md, "Integrators
 * isolated"). Two receivers on 127.0.0.1: one answers 204 at once, one takes every request and never
 * answers (the sender gives up after its 15 s). Events are scheduled as the change stream's recorder
 * schedules them (`putEvent`, then `scheduleDeliveries`), at `--rate` a second for `--duration`
 * seconds, into the local runtime's delivery queue and its EventDeliveryWorker (its batch size and
 * concurrency as lib/routes.ts declares them). Two phases, each its own owner:
 *
 *   1. alone:  the owner's one endpoint answers at once;
 *   2. beside: the owner has both endpoints, every event goes to each.
 *
 * Prints, per phase and endpoint, the deliveries that reached the receiver and their latency (the
 * event's `created` to the request's arrival) p50/p99: the answering endpoint's stays what it is
 * with a hanging neighbour, and the hanging one is reached only by its leases' tries.
 *
 *   npm run bench:deliveries [-- --rate 200 --duration 10] [-- --quick]
 *
 * Exit code 1 when a delivery to the answering endpoint did not arrive within `--wait` seconds.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiClient } from '../client/client.js';
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

step('starting the local runtime');
const runtime = await startBenchRuntime({ apiKeys: `${BENCH_API_KEYS},${OTHER_OWNER}:${OTHER_KEY}` });
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
const { scheduleDeliveries } = await import('../shared/events/schedule-deliveries.js');
const { LEASES_PER_ENDPOINT, PROBE_MS } = await import('../shared/events/endpoint-leases.js');

const answering = await receiver(false);
const hanging = await receiver(true);
let exitCode = 0;

/** Schedules `events` events of `ownerId` at `rate` a second; their ids and creation times. */
const drive = async (ownerId: string) => {
  const created = new Map<string, number>();
  const started = Date.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < events; i++) {
    const due = started + (i * 1000) / rate;
    if (due > Date.now()) await sleep(due - Date.now());
    const at = new Date().toISOString();
    const event = {
      id: eventId('sync_job.completed', at),
      ownerId,
      type: 'sync_job.completed' as const,
      createdAt: at,
      object: { object: 'sync_job', id: `sj_bench_${i}`, status: 'completed' },
      endpointIds: [],
      failingEndpointIds: [],
    };
    created.set(event.id, Date.parse(at));
    pending.push(putEvent(event).then(scheduleDeliveries));
  }
  await Promise.all(pending);
  return created;
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

const row = (phase: string, endpoint: string, target: typeof answering, created: Map<string, number>) => {
  const ms = latencies(target, created);
  return [
    phase,
    endpoint,
    created.size,
    ms.length,
    ms.length ? fixed(percentile(ms, 50), 0) : '-',
    ms.length ? fixed(percentile(ms, 99), 0) : '-',
  ];
};

try {
  const alone = createApiClient({ baseUrl: runtime.apiUrl, apiKey: BENCH_KEY });
  const beside = createApiClient({ baseUrl: runtime.apiUrl, apiKey: OTHER_KEY });
  for (const [api, url] of [
    [alone, answering.url],
    [beside, answering.url],
    [beside, hanging.url],
  ] as const) {
    const made = await api.POST('/v1/webhook_endpoints', { body: { url, enabledEvents: ['*'] } });
    if (made.response.status !== 201) throw new Error(`creating an endpoint answered ${made.response.status}`);
  }
  console.log(
    `bench:deliveries — ${events} events at ${rate}/s (${durationSeconds} s) per phase; ` +
      `${LEASES_PER_ENDPOINT} leases per endpoint past ${PROBE_MS} ms; ${process.version}`,
  );

  step('phase 1: the answering endpoint alone');
  const first = await drive('owner_bench');
  const firstArrived = await arrived(answering, first);

  step('phase 2: the answering endpoint beside one that hangs');
  let mostOpen = 0;
  const watch = setInterval(() => {
    mostOpen = Math.max(mostOpen, hanging.open());
  }, 20);
  const second = await drive(OTHER_OWNER);
  const secondArrived = await arrived(answering, second);
  clearInterval(watch);

  console.log(
    `\n${table(
      ['phase', 'endpoint', 'events', 'reached it', 'p50 ms', 'p99 ms'],
      [
        row('alone', 'answers at once', answering, first),
        row('beside', 'answers at once', answering, second),
        row('beside', 'hangs', hanging, second),
      ],
    )}`,
  );
  console.log(
    `\nThe hanging receiver held at most ${mostOpen} requests open at once; its other tries ended at once ` +
      '(no lease free) and are tried again on the schedule of CONTRACT.md §14.',
  );
  if (firstArrived < first.size || secondArrived < second.size) {
    console.log(
      `LOST: ${first.size - firstArrived + second.size - secondArrived} deliveries to the answering endpoint ` +
        `did not arrive within ${waitSeconds} s`,
    );
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
