/**
 * `npm run bench:reconcile`: one reconciler pass over 100,000 sync jobs in flight (issue 32, point 4),
 * run as the schedule runs it: invocation after invocation, each with the function's timeout as its
 * budget, each going on where the one before stopped, until the pass is done.
 *
 * It seeds a flash sale straight into a DynamoDB Local table (BatchWriteItem, items built by the
 * entity modules, so they carry the service's own index attributes): 90 % of the jobs of one owner,
 * the rest spread over 50 others; 70 % pending with a deferral due later, 20 % processing, 10 %
 * failed and waiting out their backoff; every 100th job stalled (pending, untouched for an hour),
 * so stalled jobs sit at the head, the middle and the tail of every partition. Then it calls the
 * reconciler of shared/ in this process, against that table and an in-process SQS emulator, with a
 * budget of `timeout` seconds a run (the function's 120 s by default, and a shorter one so the
 * resume shows), and prints for each timeout: the runs the pass took, the jobs and pages each run
 * read, the seconds a run and the whole pass spent, and whether every job was reached: the pass
 * read each job once (its runs' `inFlight` add up to the jobs seeded) and re-sent each stalled job
 * once (one message each on the queue). Before each timeout the stalled jobs are written back as
 * seeded and the pass item is reset.
 *
 *   npm run bench:reconcile [-- --jobs 100000] [-- --timeouts 120,30] [-- --quick]
 *
 * `--quick` seeds 2,000 jobs and gives a run 16 s (1 s of reading after the 15 s margin). The exit code
 * is 0 unless a job is not reached, or reached twice, in a pass; a slow run never fails it.
 */

import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { ensureTable, startDynamoDbLocal } from '../lib/local/dynamodb.js';
import { startSqs } from '../lib/local/sqs.js';
import { consumers } from '../lib/routes.js';
import type { SyncJobStatus } from '../shared/domain/orders.js';
import type { SyncJob } from '../shared/order-flow/order-sync-job.js';
import { fixed, flags, positiveNumber, step, table } from './common.js';
import { seededJob, writeItems } from './seed.js';

const args = flags({ jobs: { type: 'string' }, timeouts: { type: 'string' } });
const TABLE_NAME = 'bench-reconcile';
const JOBS = Math.round(positiveNumber('jobs', args.jobs, args.quick ? 2_000 : 100_000));
const STALLED_EVERY = 100;
/** The lease of the stack (visibility 180 s × 4 + 300 s): a job untouched for an hour is past it. */
const LEASE_SECONDS = 1_020;
/** The schedule's period: the time between two runs of a pass on AWS. */
const SCHEDULE_MINUTES = 5;
const reconcilerTimeout = () => consumers.find((c) => c.name === 'SyncReconciler')?.timeoutSeconds ?? 120;

const timeoutsOf = (value: string | undefined) => {
  const fallback = args.quick ? [16] : [reconcilerTimeout(), 30];
  if (value === undefined) return fallback;
  return value.split(',').map((t) => positiveNumber('timeouts', t, 0));
};

/** The sale's jobs, oldest first, 5 ms apart (200 orders a second); every STALLED_EVERY-th one stalled. */
const saleJobs = (now: number) => {
  const start = now - JOBS * 5 - 60_000;
  const hourAgo = new Date(now - 3_600_000).toISOString();
  const dueLater = new Date(now + 600_000).toISOString();
  const jobs: SyncJob[] = [];
  const stalled: SyncJob[] = [];
  for (let i = 0; i < JOBS; i++) {
    const ownerId = i % 10 === 9 ? `owner_small_${i % 50}` : 'owner_flash_sale';
    const createdAt = new Date(start + i * 5).toISOString();
    const id = `sj_bench${String(i).padStart(22, '0')}`;
    const isStalled = i % STALLED_EVERY === STALLED_EVERY / 2;
    const status: SyncJobStatus = isStalled || i % 10 < 7 ? 'pending' : i % 10 < 9 ? 'processing' : 'failed';
    const job = seededJob({ id, ownerId, resellerStoreId: 'rst_bench', createdAt, status });
    if (isStalled) {
      job.updatedAt = hourAgo;
      stalled.push(job);
    } else {
      job.updatedAt = new Date(now).toISOString();
      // A deferral due later, or a failure's backoff: either way within its lease.
      job.waitUntil = status === 'processing' ? null : dueLater;
    }
    jobs.push(job);
  }
  return { jobs, stalled };
};

interface Pass {
  timeout: number;
  runs: { seconds: number; inFlight: number; pages: number; resent: number; readUnits: number }[];
  messages: number;
}

/** The environment the shared modules read: the local table and sync queue, no metrics. */
const useLocalServices = (dynamodbEndpoint: string, sqsEndpoint: string, syncQueueUrl: string) =>
  Object.assign(process.env, {
    TABLE_NAME,
    SYNC_QUEUE_URL: syncQueueUrl,
    AWS_ENDPOINT_URL_DYNAMODB: dynamodbEndpoint,
    AWS_ENDPOINT_URL_SQS: sqsEndpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    POWERTOOLS_METRICS_DISABLED: 'true',
  });

const main = async () => {
  const [dynamodb, sqsEmulator] = await Promise.all([startDynamoDbLocal(), startSqs()]);
  try {
    await ensureTable(dynamodb.endpoint, TABLE_NAME);
    const { queue } = await sqsEmulator.createQueuePair('sync', { visibilityTimeoutSeconds: 180, maxReceiveCount: 3 });
    useLocalServices(dynamodb.endpoint, sqsEmulator.endpoint, queue.url);
    // The shared clients are built when first imported: only now, with the environment set.
    const { dynamo } = await import('../shared/dynamo/table.js');
    const { syncJobItem } = await import('../shared/order-flow/order-sync-job.js');
    const { keepReconcilePass, newReconcilePass } = await import('../shared/entities/reconcile-pass.js');
    const { reconcile, RECONCILE_MARGIN_MS } = await import('../shared/order-flow/placing-reconciler.js');
    // One line a stalled job: a thousand of them would bury the figures.
    (await import('../shared/core/telemetry.js')).logger.setLogLevel('ERROR');

    const { jobs, stalled } = saleJobs(Date.now());
    step(`seeding ${JOBS.toLocaleString('en-US')} jobs in flight`);
    const seeding = performance.now();
    await writeItems(dynamo, TABLE_NAME, jobs.map(syncJobItem), 8);
    const seedSeconds = (performance.now() - seeding) / 1000;
    console.log(
      `seeded ${JOBS.toLocaleString('en-US')} jobs in ${fixed(seedSeconds)} s ` +
        `(${fixed(JOBS / seedSeconds, 0)} puts/s): ${stalled.length} stalled`,
    );

    const queued = async () => {
      const out = await sqsEmulator.client.send(
        new GetQueueAttributesCommand({ QueueUrl: queue.url, AttributeNames: ['ApproximateNumberOfMessages'] }),
      );
      return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0);
    };
    // No dependency a stalled pending job's re-send calls on: no platform is asked, no secret read.
    const deps = { cipher: { encrypt: async () => '', decrypt: async () => '' }, platforms: () => undefined } as never;

    const passes: Pass[] = [];
    for (const timeout of timeoutsOf(args.timeouts)) {
      // The stalled jobs as seeded again, and a fresh pass: each timeout starts from the same table.
      await writeItems(dynamo, TABLE_NAME, stalled.map(syncJobItem), 8);
      await keepReconcilePass(newReconcilePass(new Date().toISOString()));
      const before = await queued();
      step(`a pass with ${timeout} s a run`);
      const pass: Pass = { timeout, runs: [], messages: 0 };
      for (let complete = false; !complete && pass.runs.length < 1_000; ) {
        const started = performance.now();
        const deadline = Date.now() + timeout * 1000;
        const report = await reconcile(deps, LEASE_SECONDS, { remainingMs: () => deadline - Date.now() });
        const seconds = (performance.now() - started) / 1000;
        pass.runs.push({ seconds, ...pick(report) });
        process.stderr.write(`  run ${pass.runs.length}: ${report.inFlight} jobs, ${fixed(seconds)} s\n`);
        complete = report.passComplete;
      }
      pass.messages = (await queued()) - before;
      passes.push(pass);
    }
    report(passes, stalled.length, RECONCILE_MARGIN_MS);
  } finally {
    await Promise.all([dynamodb.stop(), sqsEmulator.stop()]);
  }
};

type RunFigures = Omit<Pass['runs'][number], 'seconds'>;

const pick = ({ inFlight, pages, resent, readUnits }: RunFigures): RunFigures => ({
  inFlight,
  pages,
  resent,
  readUnits,
});

const sum = (pass: Pass, field: keyof Pass['runs'][number]) => pass.runs.reduce((n, run) => n + run[field], 0);

const report = (passes: Pass[], stalled: number, marginMs: number) => {
  console.log('');
  console.log(
    table(
      [
        'timeout s',
        'reading s/run',
        'runs',
        'jobs/run (max)',
        'pages',
        's/run (max)',
        'pass s',
        'jobs/s',
        'read units',
      ],
      passes.map((pass) => [
        pass.timeout,
        fixed(pass.timeout - marginMs / 1000, 0),
        pass.runs.length,
        Math.max(...pass.runs.map((r) => r.inFlight)).toLocaleString('en-US'),
        sum(pass, 'pages'),
        fixed(Math.max(...pass.runs.map((r) => r.seconds))),
        fixed(sum(pass, 'seconds')),
        fixed(sum(pass, 'inFlight') / sum(pass, 'seconds'), 0),
        fixed(sum(pass, 'readUnits'), 0),
      ]),
    ),
  );
  console.log('');
  let wrong = false;
  for (const pass of passes) {
    const read = sum(pass, 'inFlight');
    const resent = sum(pass, 'resent');
    const ok = read === JOBS && resent === stalled && pass.messages === stalled;
    wrong ||= !ok;
    console.log(
      `${pass.timeout} s a run: ${pass.runs.length} run(s), every job reached within ` +
        `${pass.runs.length} × ${SCHEDULE_MINUTES} min; jobs read ${read.toLocaleString('en-US')} of ` +
        `${JOBS.toLocaleString('en-US')}, stalled re-sent ${resent} of ${stalled} (${pass.messages} messages): ` +
        (ok ? 'ALL REACHED ONCE' : 'WRONG'),
    );
  }
  if (wrong) process.exitCode = 1;
};

await main();
