import { ApiRequestError, unwrap } from '../client/client.js';
import type { ApiClient, AuditEntry, Job } from './types.js';

/**
 * "Needs a person" (issue 33): one list, newest first, of the jobs someone must look at, merged from
 * the API's own lists, each paged by its cursor:
 * - `dead` and `failed`: `GET /v1/sync_jobs?status=…`, by the job's `createdAt`;
 * - `held`: `GET /v1/sync_jobs?held=true` (CONTRACT.md §11), by the job's `createdAt`;
 * - `late`: `GET /v1/sync_jobs?late=true` (CONTRACT.md §16.2: past its due time, not shipped);
 * - `attention` and `declined` (a cancellation the supplier refused): the API has no such filter of
 *   jobs, so their audit entries (`sync_job.attention_required`, `sync_job.cancellation_declined`),
 *   by the entry's `createdAt`, each job read to keep only those it still applies to. A job is read
 *   only when its entry is among the rows the page still needs (the newest of what is in hand), so a
 *   page costs one read per audit entry it may show, not one per entry listed.
 * A job in several lists shows once, with every reason. No list is read ahead of what a page needs.
 */

export const REASONS = ['dead', 'failed', 'held', 'late', 'attention', 'declined'] as const;
export type Reason = (typeof REASONS)[number];

export interface Row {
  job: Job;
  reasons: Reason[];
  /** `<time>#<job id>`: the merge order, newest first. */
  sortKey: string;
}

export interface Filters {
  resellerStoreId?: string;
  reason?: Reason;
}

/** An audit entry's row before its job is read: the job id and the entry's place in the merge. */
interface Unread {
  jobId: string;
  reason: 'attention' | 'declined';
  sortKey: string;
}

/** A row in a list's buffer: read, or an audit entry whose job is read when it may be shown. */
type Buffered = Row | Unread;

const isRead = (row: Buffered): row is Row => 'job' in row;
const jobIdOf = (row: Buffered) => (isRead(row) ? row.job.id : row.jobId);

interface Fetched {
  rows: Buffered[];
  cursor: string | null;
}

type Reader = (api: ApiClient, filters: Filters, limit: number, cursor: string | null) => Promise<Fetched>;

const byJob = (reason: Reason) => (job: Job) => ({ job, reasons: [reason], sortKey: `${job.createdAt}#${job.id}` });

const jobList =
  (reason: Reason, query: { status?: 'dead' | 'failed'; held?: 'true'; late?: 'true' }): Reader =>
  async (api, filters, limit, cursor) => {
    const page = unwrap(
      await api.GET('/v1/sync_jobs', {
        params: {
          query: { ...query, reseller_store_id: filters.resellerStoreId, limit, starting_after: cursor ?? undefined },
        },
      }),
    );
    return { rows: page.data.map(byJob(reason)), cursor: page.has_more ? (page.data.at(-1)?.id ?? null) : null };
  };

/** Whether a job still needs a person for this reason (an audit entry outlives what it recorded). */
const STILL: Record<'attention' | 'declined', (job: Job) => boolean> = {
  attention: (job) => job.attention !== null,
  declined: (job) => job.cancellation?.status === 'declined' && job.status !== 'cancelled',
};

const auditList =
  (reason: 'attention' | 'declined', action: AuditEntry['action']): Reader =>
  async (api, filters, limit, cursor) => {
    const page = unwrap(
      await api.GET('/v1/audit_log', {
        params: {
          query: {
            action,
            resource_type: 'sync_job',
            reseller_store_id: filters.resellerStoreId,
            limit,
            starting_after: cursor ?? undefined,
          },
        },
      }),
    );
    return {
      rows: page.data.map((entry) => ({
        jobId: entry.resourceId,
        reason,
        sortKey: `${entry.createdAt}#${entry.resourceId}`,
      })),
      cursor: page.has_more ? (page.data.at(-1)?.id ?? null) : null,
    };
  };

/** An audit entry's job, read: its row, or null when the job is gone or the reason has passed. */
const readJob = async (api: ApiClient, row: Unread): Promise<Row | null> => {
  const { data, response } = await api.GET('/v1/sync_jobs/{id}', { params: { path: { id: row.jobId } } });
  return response.ok && data && STILL[row.reason](data)
    ? { job: data, reasons: [row.reason], sortKey: row.sortKey }
    : null;
};

/** Reads the jobs of the unread rows among `chosen` (in parallel), in place in their buffers. */
const readJobs = async (api: ApiClient, sources: SourceState[], chosen: Set<Buffered>) => {
  await Promise.all(
    sources.map(async (source) => {
      const read = await Promise.all(
        source.buffer.map((row) => (chosen.has(row) && !isRead(row) ? readJob(api, row) : row)),
      );
      source.buffer = read.filter((row): row is Buffered => row !== null);
    }),
  );
};

const READERS: Record<Reason, Reader> = {
  dead: jobList('dead', { status: 'dead' }),
  failed: jobList('failed', { status: 'failed' }),
  held: jobList('held', { held: 'true' }),
  late: jobList('late', { late: 'true' }),
  attention: auditList('attention', 'sync_job.attention_required'),
  declined: auditList('declined', 'sync_job.cancellation_declined'),
};

/** One list's place: what was read and not shown yet, and where to read on. */
interface SourceState {
  reason: Reason;
  buffer: Buffered[];
  cursor: string | null;
  done: boolean;
  /** The API refused this list's filter (an API without holds): shown as a note, not an error. */
  unsupported?: string;
}

/** Where the merged list stands: a page is read from here, and the next page from what it returns. */
export interface ListState {
  filters: Filters;
  sources: SourceState[];
  /** Jobs already shown on an earlier page (a job in two lists shows once). */
  shown: string[];
}

export const startList = (filters: Filters): ListState => ({
  filters,
  sources: (filters.reason ? [filters.reason] : REASONS).map((reason) => ({
    reason,
    buffer: [],
    cursor: null,
    done: false,
  })),
  shown: [],
});

const refill = async (api: ApiClient, state: ListState, source: SourceState, limit: number) => {
  try {
    const { rows, cursor } = await READERS[source.reason](api, state.filters, limit, source.cursor);
    source.buffer.push(...rows);
    source.cursor = cursor;
    source.done = cursor === null;
  } catch (error) {
    // An API from before holds refuses `held` as an unknown parameter: the other lists still show.
    if (source.reason === 'held' && error instanceof ApiRequestError && error.param === 'held') {
      source.done = true;
      source.unsupported = 'This API does not list held jobs.';
      return;
    }
    throw error;
  }
};

/** The page of `limit` rows after `state`, and the state after it (`state` itself is left as it was). */
export const readPage = async (
  api: ApiClient,
  state: ListState,
  limit: number,
): Promise<{ rows: Row[]; next: ListState; hasMore: boolean; notes: string[] }> => {
  const next: ListState = structuredClone(state);
  const shown = new Set(next.shown);
  const rows = new Map<string, Row>();
  while (rows.size < limit) {
    // Every list that may hold the newest row must have one in hand before a row is chosen.
    const empty = next.sources.filter((source) => source.buffer.length === 0 && !source.done);
    await Promise.all(empty.map((source) => refill(api, next, source, limit)));
    if (empty.length && empty.some((source) => source.buffer.length === 0 && !source.done)) continue;
    const candidates = next.sources.filter((source) => source.buffer.length > 0);
    if (!candidates.length) break;
    const newest = candidates.reduce((a, b) => (b.buffer[0].sortKey > a.buffer[0].sortKey ? b : a));
    if (!isRead(newest.buffer[0]) && shown.has(jobIdOf(newest.buffer[0]))) {
      // Shown on an earlier page: not shown again, whatever its job says now.
      newest.buffer.shift();
      continue;
    }
    if (!isRead(newest.buffer[0])) {
      // Its job is read now, with those of the other unread entries that may still make this page: the
      // newest rows in hand, as many as the page lacks (a row read and dropped only makes room).
      const inHand = next.sources
        .flatMap((source) => source.buffer)
        .filter((row) => !shown.has(jobIdOf(row)))
        .sort((a, b) => (a.sortKey < b.sortKey ? 1 : a.sortKey > b.sortKey ? -1 : 0));
      await readJobs(api, next.sources, new Set([newest.buffer[0], ...inHand.slice(0, limit - rows.size)]));
      continue;
    }
    const row = newest.buffer.shift() as Row;
    const same = rows.get(row.job.id);
    if (same) same.reasons.push(...row.reasons.filter((reason) => !same.reasons.includes(reason)));
    else if (!shown.has(row.job.id)) rows.set(row.job.id, { ...row, reasons: [...row.reasons] });
  }
  // What is read ahead of a job already shown is not shown again: its reasons join the row on this page
  // (an unread entry of a job on this page is read first: its reason joins only if it still applies).
  await readJobs(
    api,
    next.sources,
    new Set(next.sources.flatMap((source) => source.buffer.filter((row) => rows.has(jobIdOf(row))))),
  );
  for (const source of next.sources)
    source.buffer = source.buffer.filter((row) => {
      const same = rows.get(jobIdOf(row));
      if (same && isRead(row)) same.reasons.push(...row.reasons.filter((reason) => !same.reasons.includes(reason)));
      return !same && !shown.has(jobIdOf(row));
    });
  // At the lists' end, whether anything is left depends on the unread entries' jobs: they are read.
  if (next.sources.every((source) => source.done && !source.buffer.some(isRead)))
    await readJobs(api, next.sources, new Set(next.sources.flatMap((source) => source.buffer)));
  next.shown = [...shown, ...rows.keys()];
  return {
    rows: [...rows.values()],
    next,
    hasMore: next.sources.some((source) => source.buffer.length > 0 || !source.done),
    notes: next.sources.flatMap((source) => (source.unsupported ? [source.unsupported] : [])),
  };
};

/** Since when the job has needed a person, for the row's age: the latest of its reasons' times. */
/** A late job needs a person from its due time. */
const lateSince = (job: Job) => (job.serviceLevel?.late ? job.serviceLevel.dueAt : undefined);

export const needsSince = (job: Job): string =>
  [job.deadAt, job.failedAt, job.hold?.since, job.attention?.since, job.cancellation?.endedAt, lateSince(job)]
    .filter((time): time is string => typeof time === 'string')
    .sort()
    .at(-1) ?? job.createdAt;
