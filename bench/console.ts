/**
 * `npm run bench:console`: the operator console's weight, and its list page with 10,000 jobs.
 *
 * 1. Weight: every file of the console as its function serves it (lib/console-build.ts: minified,
 *    gzipped). Budget: 150 kB gzipped in all (issue 33).
 * 2. The list page: the local runtime (in memory), one owner with one reseller store and 10,000 jobs
 *    written straight into the table (bench/seed.ts: items built by the record modules): 1 % dead,
 *    1 % failed, 0.5 % completed with `attention` and its audit entry, the rest completed. Debian's
 *    Chromium (playwright-core) opens the console with the key in the tab, and the time from the
 *    navigation to the first page's table is measured `--runs` times (median, 90th percentile and
 *    worst), with the page's own time to read and draw it (the page's User Timing measure). Target:
 *    the first page under a second, judged on the reloads (below). The seeded items are writes like
 *    any other, so the change stream hands each to the EventRecorder (lib/local/streams.ts); the
 *    measurement starts only once it has read them all and been quiet for a second, so the figure is
 *    the console's and not the recorder's catching up on 10,000 writes at once.
 *
 * What is judged. The local runtime starts a Lambda environment (a worker thread) per concurrent
 * invocation, as Lambda does. The first load after the runtime starts (the key entered) starts the
 * first environment of every function the page calls, a dozen cold starts on the same two cores that
 * on AWS run side by side in sandboxes of their own, once per idle period: it is printed on a line of
 * its own. The target is judged on the reloads after it, the page as an operator who has it open uses
 * it: at the median and at the 90th percentile, every reload printed.
 *
 *   npm run bench:console [-- --runs 20] [-- --jobs 10000]
 *
 * The exit code is 0 unless the page shows no table or the wrong rows; a missed target never fails it.
 */

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { unwrap } from '../client/client.js';
import { PAGE_DRAWN } from '../console/timing.js';
import { buildConsole } from '../lib/console-build.js';
import { localDocumentClient } from '../lib/local/dynamodb.js';
import { startLocalRuntime } from '../lib/local/runtime.js';
import { syncJobId } from '../shared/core/ids.js';
import { auditEntryItem } from '../shared/entities/audit-entry.js';
import { syncJobItem } from '../shared/order-flow/order-sync-job.js';
import {
  BENCH_API_KEYS,
  BENCH_KEY,
  BENCH_OWNER,
  benchApi,
  fixed,
  flags,
  median,
  percentile,
  positiveNumber,
  table,
} from './common.js';
import { seededAuditEntry, seededJob, writeItems } from './seed.js';

const BUDGET_KB = 150;
const TARGET_MS = 1000;
const args = flags({ runs: { type: 'string' }, jobs: { type: 'string' } });
const runs = positiveNumber('--runs', args.runs, 20);
const jobCount = positiveNumber('--jobs', args.jobs, 10_000);

const files = buildConsole(fileURLToPath(new URL('..', import.meta.url)));
const kb = (bytes: number) => fixed(bytes / 1024, 1);
const totalGzip = Object.values(files).reduce((sum, file) => sum + file.gzipBytes, 0);
console.log('The console as served (minified, gzipped):');
console.log(
  table(
    ['file', 'kB', 'kB gzipped'],
    [
      ...Object.entries(files).map(([name, file]) => [name, kb(file.bytes), kb(file.gzipBytes)]),
      ['all', kb(Object.values(files).reduce((sum, file) => sum + file.bytes, 0)), kb(totalGzip)],
    ],
  ),
);
console.log(`budget ${BUDGET_KB} kB gzipped: ${totalGzip / 1024 <= BUDGET_KB ? 'met' : 'MISSED'}\n`);

// The change stream's records handed to the EventRecorder, and when it was last invoked.
const RECORDER = 'EventRecorder';
const recorder = { records: 0, last: 0 };
const runtime = await startLocalRuntime({
  onInvoke: (name, _ms, batch) => {
    if (name !== RECORDER) return;
    recorder.records += batch ?? 1;
    recorder.last = performance.now();
  },
  port: 0,
  dataDir: ':memory:',
  simulator: { port: 0 },
  apiKeys: BENCH_API_KEYS,
  scheduleIntervalSeconds: 3600,
});
let failed = false;
try {
  const api = benchApi(runtime.apiUrl);
  const store = unwrap(
    await api.POST('/v1/reseller_stores', {
      body: {
        name: 'Bench Reseller',
        platform: 'storeplatform_a',
        shopDomain: 'bench-console.myshopify.com',
        accessToken: 'shpat_bench_console',
        webhookSecret: 'whsec_bench_console',
      },
    }),
  );
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  const jobs = Array.from({ length: jobCount }, (_, i) => {
    const status = i % 100 === 1 ? 'dead' : i % 100 === 2 ? 'failed' : 'completed';
    const createdAt = new Date(start + i * 1000).toISOString();
    const job = seededJob({
      id: syncJobId(store.id, String(1_000_000 + i), 0),
      ownerId: BENCH_OWNER,
      resellerStoreId: store.id,
      createdAt,
      status,
    });
    return i % 200 === 3 ? { ...job, attention: { reason: 'an edit changed its line items', since: createdAt } } : job;
  });
  const attention = jobs
    .filter((job) => job.attention)
    .map((job, n) =>
      seededAuditEntry(job, {
        id: `aud_bench${String(n).padStart(20, '0')}`,
        action: 'sync_job.attention_required',
        createdAt: job.createdAt,
      }),
    );
  const doc = localDocumentClient(runtime.endpoints.dynamodb);
  const items = [...jobs.map(syncJobItem), ...attention.map(auditEntryItem)];
  await writeItems(doc, runtime.tableName, items);
  const count = (status: string) => jobs.filter((job) => job.status === status).length;
  console.log(
    `seeded ${jobCount.toLocaleString('en-US')} jobs: ${count('dead')} dead, ${count('failed')} failed, ` +
      `${attention.length} with attention (and its audit entry), the rest completed`,
  );
  // Wait for the change stream: every seeded item handed to the recorder, then a quiet second.
  const seeded = performance.now();
  while (recorder.records < items.length || performance.now() - recorder.last < 1000) {
    if (performance.now() - seeded > 600_000) throw new Error(`the ${RECORDER} did not drain in 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  console.log(
    `the ${RECORDER} read the ${recorder.records.toLocaleString('en-US')} stream records in ` +
      `${fixed((recorder.last - seeded) / 1000, 1)} s; measuring from then on`,
  );

  const browser = await chromium.launch({
    executablePath:
      process.env.CHROMIUM_PATH || execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim(),
    args: ['--no-sandbox'],
  });
  const page = await browser.newPage();
  await page.goto(`${runtime.apiUrl}/console/`);
  await page.getByLabel('API key').fill(BENCH_KEY);
  /**
   * The first page's table, once drawn: when (ms from the navigation) and the page's own part of it
   * (the lists read and drawn), as the page's User Timing measure has them. Timed in the page, not by
   * when Playwright sees the table: its `waitFor` polls at 0, 20, 50, 100, 100 and then every 500 ms,
   * so a table drawn at 400 ms would be seen at about 900.
   */
  const drawn = async () => {
    await page.locator('tbody tr').first().waitFor();
    return page.evaluate((name) => {
      const [measure] = performance.getEntriesByName(name, 'measure');
      return { ms: measure.startTime + measure.duration, inPage: measure.duration };
    }, PAGE_DRAWN);
  };
  const entered = await page.evaluate(() => performance.now());
  await page.keyboard.press('Enter');
  const firstLoad = (await drawn()).ms - entered;
  /** One reload: from the navigation to the first page's table drawn. */
  const reload = async () => {
    await page.reload();
    return drawn();
  };
  const times: number[] = [];
  const inPage: number[] = [];
  for (let run = 0; run < runs; run++) {
    const measured = await reload();
    times.push(measured.ms);
    inPage.push(measured.inPage);
  }
  const rows = await page.locator('tbody tr').count();
  // The newest of the merged lists: the newest dead, failed or attention job first.
  const newest = jobs.filter((job) => job.status !== 'completed' || job.attention).at(-1)!;
  const first = await page.locator('tbody tr').first().getAttribute('data-job');
  if (rows !== 25 || first !== newest.id) {
    console.error(`wrong first page: ${rows} rows, first ${first}, expected 25 rows from ${newest.id}`);
    failed = true;
  }
  await browser.close();
  console.log(
    `\nThe list page's first page (${rows} rows) in Chromium:\n` +
      `- the first load, from the key entered (every function's first environments starting): ` +
      `${fixed(firstLoad, 0)} ms\n` +
      `- ${runs} reloads after it:\n` +
      table(
        ['', 'median ms', 'p90 ms', 'worst ms'],
        [
          ['navigation to the table', ...[50, 90, 100].map((p) => fixed(percentile(times, p), 0))],
          ['the page: read the lists and draw', ...[50, 90, 100].map((p) => fixed(percentile(inPage, p), 0))],
        ],
      ),
  );
  console.log(`each reload, navigation to the table (ms): ${times.map((ms) => fixed(ms, 0)).join(', ')}`);
  const under = times.filter((ms) => ms < TARGET_MS).length;
  const verdict = (ms: number) => (ms < TARGET_MS ? 'met' : 'MISSED');
  console.log(
    `target under ${TARGET_MS} ms: ${verdict(median(times))} at the median, ${verdict(percentile(times, 90))} at p90 ` +
      `(${under} of ${runs} reloads under it)`,
  );
} finally {
  await runtime.stop();
}
process.exit(failed ? 1 : 0);
