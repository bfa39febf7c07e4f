import { type ApiClient, deadJobRetryKey, type Schemas, unwrap, waitingOutRateLimits } from '../client/client.js';
import { SYNC_JOB_STATUSES, type SyncJobStatus } from '../shared/domain/orders.js';
import {
  API_OPTIONS,
  apiClientOf,
  DEFAULT_API_URL,
  type Io,
  parseOptions,
  positiveInteger,
  runAsMain,
  table,
  tool,
  UsageError,
} from './cli/command-line.js';

/**
 * `npm run jobs -- list [--held] | show <id> | retry <id> | retry --all-dead --store <rst_id> | hold <id> |
 * release <id>`: sync jobs
 * for an on-call engineer, through the typed API client, against the local service or a deployed
 * API (`--url`, `--key`).
 */

type SyncJob = Schemas['sync_job'];

const HELP = {
  main: `usage: npm run jobs -- <command> [options]

Sync jobs, through the API: the local service by default, or a deployed one.

commands:
  list                               sync jobs, newest first (--held: only held ones)
  show <sj_id>                       one job: status, cancellation, attempts, error, lines, parcels, audit
  retry <sj_id>                      retry a failed or dead job (it becomes pending again)
  retry --all-dead --store <rst_id>  retry every dead job of a reseller store
  hold <sj_id> [--note <text>]       hold a pending job: it goes to no supplier until released
  release <sj_id>                    release a held job: it goes to its supplier at once

options of every command:
  --url <url>   the API's base URL (default: $API_URL, else ${DEFAULT_API_URL});
                deployed: the stack's ApiUrl output
  --key <key>   an API key (default: $API_KEY); \`npm start\` prints one, \`npm run keys -- create\` issues one
  --json        JSON instead of text
  -h, --help    this help; \`npm run jobs -- <command> --help\` for one command's`,
  list: `usage: npm run jobs -- list [--status <status>] [--store <rst_id>] [--held] [--limit <n>]
                          [--url <url>] [--key <key>] [--json]

Sync jobs of the key's owner, newest first.

  --status <status>  only jobs in this status: ${SYNC_JOB_STATUSES.join(', ')}
  --store <rst_id>   only jobs of this reseller store
  --held             only held jobs (kept from their supplier: a delay, payment, risk, a test order, an operator)
  --limit <n>        at most n jobs (default 20; more than 100 are fetched page by page)`,
  hold: `usage: npm run jobs -- hold <sj_id> [--note <text>] [--url <url>] [--key <key>] [--json]

Holds a pending job (reason \`manual\`): it goes to no supplier until it is released or cancelled. The
note is kept in the \`sync_job.held\` audit entry. A job that is not pending cannot be held (exit 1).`,
  release: `usage: npm run jobs -- release <sj_id> [--url <url>] [--key <key>] [--json]

Releases a held job: every hold ends (delay, payment, risk, test order, manual) and it goes to its
supplier at once; audited as \`sync_job.released\`. A job that is not held cannot be released (exit 1).`,
  show: `usage: npm run jobs -- show <sj_id> [--url <url>] [--key <key>] [--json]

One sync job: its status and error, its attempts (newest first), its line items (shipped of ordered,
the price before and after the markup), its parcels with their tracking and lines, and the audit
entries about it.`,
  retry: `usage: npm run jobs -- retry <sj_id> [--url <url>] [--key <key>] [--json]
       npm run jobs -- retry --all-dead --store <rst_id> [--dry-run]
                          [--url <url>] [--key <key>] [--json]

Retries a failed or dead job: it becomes pending, is queued again, and the audit log records who
retried it. With --all-dead, every dead job of the reseller store, one after the other; --dry-run
only lists them. A retry answered 429 (the key's changes a second used up) is sent again once its
Retry-After has passed. Exits 1 when any retry failed.`,
};

/** Pages through `GET /v1/sync_jobs` until `limit` jobs (or the end). */
const listJobs = async (
  api: ApiClient,
  filters: { status?: SyncJobStatus; reseller_store_id?: string; held?: 'true' },
  limit: number,
  onPage?: (count: number) => void,
) => {
  const jobs: SyncJob[] = [];
  let startingAfter: string | undefined;
  for (;;) {
    const page = unwrap(
      await api.GET('/v1/sync_jobs', {
        params: { query: { ...filters, limit: Math.min(100, limit - jobs.length), starting_after: startingAfter } },
      }),
    );
    jobs.push(...page.data);
    onPage?.(jobs.length);
    if (!page.has_more || jobs.length >= limit || page.data.length === 0) return jobs;
    startingAfter = page.data.at(-1)?.id;
  }
};

const jobRow = (job: SyncJob) => ({
  ...job,
  held: job.hold ? job.hold.reasons.join(',') : '',
  error: job.errorMessage && job.errorMessage.length > 60 ? `${job.errorMessage.slice(0, 59)}…` : job.errorMessage,
});

const JOB_COLUMNS = {
  id: 'ID',
  status: 'STATUS',
  attempts: 'ATTEMPTS',
  resellerStoreId: 'RESELLER STORE',
  externalOrderId: 'ORDER',
  updatedAt: 'UPDATED',
  held: 'HELD',
  error: 'ERROR',
};

const status = (value: string | undefined) => {
  if (value === undefined) return undefined;
  if (!(SYNC_JOB_STATUSES as readonly string[]).includes(value))
    throw new UsageError(`--status must be one of ${SYNC_JOB_STATUSES.join(', ')}`);
  return value as SyncJobStatus;
};

const list = async (args: string[], io: Io) => {
  const { values } = parseOptions(
    args,
    {
      ...API_OPTIONS,
      status: { type: 'string' },
      store: { type: 'string' },
      held: { type: 'boolean' },
      limit: { type: 'string' },
    },
    0,
  );
  if (values.help) return void io.out(HELP.list);
  const filters = {
    status: status(values.status),
    reseller_store_id: values.store,
    ...(values.held ? { held: 'true' as const } : {}),
  };
  const limit = positiveInteger('limit', values.limit, 20);
  const jobs = await listJobs(apiClientOf(values, io), filters, limit);
  if (values.json) return void io.out(JSON.stringify(jobs, null, 2));
  if (!jobs.length) return void io.out('no sync jobs');
  for (const line of table(jobs.map(jobRow), JOB_COLUMNS)) io.out(line);
};

const field = (name: string, value: unknown) =>
  `${name.padEnd(18)}${value === null || value === undefined ? '-' : String(value)}`;

/** A job's own fields, one a line, and its cancellation, attention and hold. */
const printJob = (job: SyncJob, io: Io) => {
  for (const name of [
    'id',
    'status',
    'attempts',
    'resellerStoreId',
    'sourceStoreId',
    'externalOrderId',
    'sourceOrderId',
    'errorMessage',
    'createdAt',
    'updatedAt',
    'completedAt',
    'failedAt',
    'deadAt',
    'cancelledAt',
  ] as const)
    io.out(field(name, job[name]));
  const { cancellation, attention } = job;
  if (cancellation)
    io.out(
      field(
        'cancellation',
        `${cancellation.status}, requested by the ${cancellation.requestedBy} at ${cancellation.requestedAt}` +
          `${cancellation.reason ? `: ${cancellation.reason}` : ''}`,
      ),
    );
  if (attention) io.out(field('attention', `since ${attention.since}: ${attention.reason}`));
  if (job.hold) {
    const until = job.hold.until ? `, delay until ${job.hold.until}` : '';
    io.out(field('hold', `${job.hold.reasons.join(', ')} since ${job.hold.since}${until}`));
  }
};

/** A job's attempt history, lines, parcels and audit entries, a block each. */
const printJobLists = (
  job: SyncJob,
  history: Schemas['sync_job_attempt'][],
  audit: Schemas['audit_log_entry'][],
  io: Io,
) => {
  io.out('');
  io.out(history.length ? 'attempt history (newest first):' : 'attempt history: none');
  for (const a of history)
    io.out(
      `  #${a.number}  ${a.endedAt}  ${a.trigger}  ${a.outcome}${a.count > 1 ? ` ×${a.count}` : ''}` +
        `  ${a.platformStatus ?? '-'}  ${a.durationMs} ms${a.errorMessage ? `  ${a.errorMessage}` : ''}`,
    );
  io.out(job.lineItems.length ? `line items (${job.fulfillmentStatus}):` : 'line items: none');
  for (const line of job.lineItems)
    io.out(
      `  ${line.resellerLineItemId ?? '-'} → ${line.sourceLineItemId ?? '-'}` +
        `  ${line.sku ?? '-'}  ${line.title ?? '-'}${line.variantTitle ? ` (${line.variantTitle})` : ''}` +
        `  shipped ${line.fulfilledQuantity}/${line.quantity}` +
        `  ${line.price} → ${line.sourcePrice ?? '-'}`,
    );
  io.out(job.fulfillments.length ? 'fulfillments (parcels):' : 'fulfillments: none');
  for (const f of job.fulfillments)
    io.out(
      `  ${f.sourceFulfillmentId}  ${f.status}  ${f.trackingCompany ?? '-'} ${f.trackingNumbers.join(', ') || '-'}` +
        `  ${f.lineItems ? f.lineItems.map((l) => `${l.resellerLineItemId}×${l.quantity}`).join(' ') : 'whole job'}` +
        `  attempts ${f.attempts}${f.errorMessage ? `  ${f.errorMessage}` : ''}`,
    );
  io.out(audit.length ? 'audit log:' : 'audit log: none');
  for (const entry of audit)
    io.out(
      `  ${entry.createdAt}  ${entry.action}  by ${entry.actor.type === 'system' ? 'system' : entry.actorId}` +
        `  ${JSON.stringify(entry.metadata)}`,
    );
};

const show = async (args: string[], io: Io) => {
  const { values, positionals } = parseOptions(args, API_OPTIONS, 1);
  if (values.help) return void io.out(HELP.show);
  const [id] = positionals;
  if (!id) throw new UsageError('show needs a sync job id (sj_…)');
  const api = apiClientOf(values, io);
  const job = unwrap(await api.GET('/v1/sync_jobs/{id}', { params: { path: { id } } }));
  const audit = unwrap(
    await api.GET('/v1/audit_log', { params: { query: { resource_type: 'sync_job', resource_id: id, limit: 100 } } }),
  ).data;
  const history = unwrap(
    await api.GET('/v1/sync_jobs/{id}/attempts', { params: { path: { id }, query: { limit: 100 } } }),
  ).data;
  if (values.json) return void io.out(JSON.stringify({ ...job, attemptHistory: history, auditLog: audit }, null, 2));
  printJob(job, io);
  printJobLists(job, history, audit, io);
};

/** A retry, sent again after each `429 rate_limited` once its `Retry-After` has passed (said on stderr). */
const retryOne = async (api: ApiClient, io: Io, id: string, idempotencyKey?: string) =>
  unwrap(
    await waitingOutRateLimits(
      () =>
        api.POST('/v1/sync_jobs/{id}/retry', {
          params: { path: { id }, header: idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : undefined },
        }),
      { onWait: (ms) => io.err(`rate limited (429): waiting ${ms / 1000} s, as Retry-After says`) },
    ),
  );

const retryAllDead = async (api: ApiClient, store: string, dryRun: boolean, json: boolean, io: Io) => {
  // Every id first: a retried job leaves the `dead` list, which would move the cursor under us.
  const dead = await listJobs(api, { status: 'dead', reseller_store_id: store }, Number.MAX_SAFE_INTEGER, (n) =>
    io.err(`listing dead jobs… ${n}`),
  );
  if (dryRun || !dead.length) {
    if (json) return void io.out(JSON.stringify(dead, null, 2));
    if (!dead.length) return void io.out(`no dead jobs in ${store}`);
    for (const line of table(dead.map(jobRow), JOB_COLUMNS)) io.out(line);
    return void io.out(`${dead.length} dead job(s) would be retried (--dry-run)`);
  }
  const failures: { id: string; reason: string }[] = [];
  const retried: SyncJob[] = [];
  let lastProgress = Date.now();
  for (const [i, job] of dead.entries()) {
    try {
      // The console's bulk retry sends the same key: between them, a dead job is retried once.
      retried.push(await retryOne(api, io, job.id, deadJobRetryKey(job)));
    } catch (error) {
      failures.push({ id: job.id, reason: error instanceof Error ? error.toString() : String(error) });
    }
    if (Date.now() - lastProgress > 2000 || i === dead.length - 1) {
      io.err(`retrying dead jobs ${i + 1}/${dead.length}`);
      lastProgress = Date.now();
    }
  }
  if (json) io.out(JSON.stringify({ retried, failures }, null, 2));
  else {
    io.out(`retried ${retried.length} of ${dead.length} dead job(s) in ${store}`);
    for (const failure of failures) io.out(`  ${failure.id}: ${failure.reason}`);
  }
  return failures.length ? 1 : 0;
};

const retry = async (args: string[], io: Io) => {
  const { values, positionals } = parseOptions(
    args,
    { ...API_OPTIONS, 'all-dead': { type: 'boolean' }, store: { type: 'string' }, 'dry-run': { type: 'boolean' } },
    1,
  );
  if (values.help) return void io.out(HELP.retry);
  const [id] = positionals;
  if (values['all-dead']) {
    if (id) throw new UsageError('give a job id or --all-dead, not both');
    if (!values.store) throw new UsageError('--all-dead needs --store <rst_id>');
    return retryAllDead(apiClientOf(values, io), values.store, values['dry-run'] ?? false, values.json ?? false, io);
  }
  if (!id) throw new UsageError('retry needs a sync job id (sj_…), or --all-dead --store <rst_id>');
  if (values.store || values['dry-run']) throw new UsageError('--store and --dry-run go with --all-dead');
  const job = await retryOne(apiClientOf(values, io), io, id);
  if (values.json) return void io.out(JSON.stringify(job, null, 2));
  io.out(`${job.id} is ${job.status} again (attempts so far: ${job.attempts})`);
};

const hold = async (args: string[], io: Io) => {
  const { values, positionals } = parseOptions(args, { ...API_OPTIONS, note: { type: 'string' } }, 1);
  if (values.help) return void io.out(HELP.hold);
  const [id] = positionals;
  if (!id) throw new UsageError('hold needs a sync job id (sj_…)');
  const body = values.note === undefined ? {} : { note: values.note };
  const job = unwrap(await apiClientOf(values, io).POST('/v1/sync_jobs/{id}/hold', { params: { path: { id } }, body }));
  if (values.json) return void io.out(JSON.stringify(job, null, 2));
  io.out(`${job.id} is held (${job.hold?.reasons.join(', ')})`);
};

const release = async (args: string[], io: Io) => {
  const { values, positionals } = parseOptions(args, API_OPTIONS, 1);
  if (values.help) return void io.out(HELP.release);
  const [id] = positionals;
  if (!id) throw new UsageError('release needs a sync job id (sj_…)');
  const job = unwrap(await apiClientOf(values, io).POST('/v1/sync_jobs/{id}/release', { params: { path: { id } } }));
  if (values.json) return void io.out(JSON.stringify(job, null, 2));
  io.out(`${job.id} is released: it goes to its supplier now`);
};

export const main = tool('jobs', HELP.main, { list, show, retry, hold, release });

runAsMain(import.meta.url, main);
