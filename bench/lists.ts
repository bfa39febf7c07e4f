/**
 * `npm run bench:lists`: what a list page costs when an owner has 1,000, 10,000 and 100,000 sync
 * jobs, for every list and filter of SPEC 4.6, 4.7 and CONTRACT.md §2, §6 and §14 (one event per
 * ended job: as many events as jobs, less those under way).
 *
 * For each size it seeds one owner straight into a DynamoDB Local table (BatchWriteItem, items
 * built by the record modules, so they carry the service's own index attributes): 0.1 % of the
 * jobs `dead`, 1 % `failed`, 5 `pending` and 3 `processing` among the newest (work in flight),
 * the rest `completed`; two reseller stores with 90 % and 10 % of the jobs; for each dead job
 * the audit entries of its story (dead, retried, dead again). Every job is the first (and only) job
 * of its order (CONTRACT.md §10.8), so the order's record, in its store's list of orders; 1 % of each
 * store's orders have unrouted items (the job keeps them; the order's mark is in the store's list of
 * such orders) and 0.1 % route nowhere (an unrouted order record and its mark, no job: these orders are
 * not in the sync-job lists). Then it reads, through the list functions of shared/ in this process,
 * four pages of each list (the orders' of each store, and those with unrouted items, too): the
 * first, one from the middle (a cursor half-way down the list: for the orders, `starting_after` an
 * order's external id), the last (its `limit` oldest items) and the end (the page after the oldest
 * item, which a client reads when the last one said `has_more`). For each
 * it prints the round trips to DynamoDB, the read units they consumed (ReturnConsumedCapacity)
 * and the latency (median of `--runs`), and for the read units the ratio of the largest size to
 * the smallest size where the page is as full.
 *
 *   npm run bench:lists [-- --runs 3] [-- --skip <regexp of "list filter">] [-- --quick] [-- --sizes 1000,10000]
 *
 * A page's size is the same at every size: `limit` = the matches at the smallest size that has
 * any, at most 20. Target: every read-unit ratio ≤ 1.2. The exit code is 0 unless a page is wrong (an item
 * missing, repeated or out of order) or a list function fails; a missed target never fails it.
 */

import { syncJobId } from '../shared/core/ids.js';
import type { SyncJobStatus } from '../shared/domain/orders.js';
import { DEFAULT_ROUTING_POLICY } from '../shared/domain/routing.js';
import type { AuditAction, AuditEntry } from '../shared/entities/audit-entry.js';
import type { Event, EventType } from '../shared/entities/event.js';
import { CONNECTED } from '../shared/entities/store.js';
import type { SyncJob, UnroutedOrder } from '../shared/order-flow/order-sync-job.js';
import { fixed, flags, median, orderBody, positiveNumber, table, timedRuns, withBenchTable } from './common.js';
import { readUnits, recordRoundTrips } from './round-trips.js';
import { seededAuditEntry, seededJob, writeItems } from './seed.js';

const args = flags({ runs: { type: 'string' }, skip: { type: 'string' }, sizes: { type: 'string' } });
/** `--skip 'status=pending'`: leaves out the lists whose `<list> <filter>` matches the pattern. */
const SKIP = args.skip === undefined ? undefined : new RegExp(args.skip);
/** `--sizes 1000,10000`: the owners' sizes, smallest first (a shorter run than 100k on a busy machine). */
const SIZES =
  args.sizes !== undefined
    ? args.sizes.split(',').map((size) => Math.round(positiveNumber('sizes', size, 1000)))
    : args.quick
      ? [1_000, 2_000]
      : [1_000, 10_000, 100_000];
const RUNS = Math.round(positiveNumber('runs', args.runs, args.quick ? 1 : 3));
const TARGET_RATIO = 1.2;
const TABLE_NAME = 'bench-lists';

const pad = (n: number, width: number) => String(n).padStart(width, '0');

interface Owner {
  size: number;
  ownerId: string;
  stores: { big: string; small: string };
  /** Newest first, as every list is ordered. */
  jobs: SyncJob[];
  entries: AuditEntry[];
  /** The orders none of whose items routes: records of their own, no job. */
  unroutedOrders: UnroutedOrder[];
  /** One event per job, of the type its status reports (CONTRACT.md §14), newest first; 1 % failing a delivery. */
  events: Event[];
  /** Every order (its first job's or its unrouted record's), newest first as its store's list. */
  orders: { id: string; externalOrderId: string; resellerStoreId: string; createdAt: string; unrouted: boolean }[];
}

/**
 * One owner's jobs, audit entries and orders, newest first; each has a timestamp of its own (a second
 * apart; an unrouted order half-way between two jobs), so every list's order is known.
 */
/** An event's id (`eventId`, shared/entities/event.ts), handed in: that module loads once the endpoint is set. */
type EventIdOf = (type: EventType, createdAt: string, ...parts: string[]) => string;

const START = Date.parse('2026-01-01T00:00:00.000Z');

/** The status of the `i`th job of `size` (oldest first): the newest in flight, 0.1 % dead, 1 % failed. */
const statusOf = (size: number, i: number): SyncJobStatus => {
  const newest = size - 1 - i;
  if (newest < 5) return 'pending';
  if (newest < 8) return 'processing';
  if (i % 1000 === 500) return 'dead';
  return i % 100 === 50 ? 'failed' : 'completed';
};

/** A dead job's story in the audit log: dead, retried, dead again, a minute apart. */
const deadStory = (job: SyncJob, size: number, i: number): AuditEntry[] =>
  (['sync_job.dead', 'sync_job.retried', 'sync_job.dead'] as AuditAction[]).map((action, n) =>
    seededAuditEntry(job, {
      id: `aud_${pad(size, 7)}${pad(i, 16)}${n}`,
      action,
      createdAt: new Date(START + i * 1000 + (n + 1) * 60_000).toISOString(),
    }),
  );

/** An order none of whose items routes, half a second after the `i`th job, in the same store. */
const unroutedOrderAfter = (job: SyncJob, size: number, i: number, order: { body: Uint8Array }): UnroutedOrder => {
  const unroutedId = String(size * 10_000_000 + i * 10 + 5);
  return {
    firstJobId: syncJobId(job.resellerStoreId, unroutedId, 0),
    ownerId: job.ownerId,
    resellerStoreId: job.resellerStoreId,
    externalOrderId: unroutedId,
    receivedAt: new Date(START + i * 1000 + 500).toISOString(),
    receivedVia: 'webhook',
    unroutedLines: [
      { position: 0, reason: 'no_vendor' },
      { position: 1, reason: 'no_source_store' },
    ],
    cancelledAt: null,
    order,
  };
};

/** The owner's jobs (oldest first), each its order's first, the dead ones' audit entries, the unrouted orders. */
const jobsOf = (size: number, ownerId: string, stores: Owner['stores'], order: { body: Uint8Array }) => {
  // Each state's jobs are dealt to the stores in turn, so the small store has its 10 % of each.
  const dealt = new Map<SyncJobStatus, number>();
  const smallStoreTakes = (status: SyncJobStatus) => {
    const n = dealt.get(status) ?? 0;
    dealt.set(status, n + 1);
    return status === 'pending' || status === 'processing' ? n % 3 === 2 : n % 10 === 9;
  };
  const jobs: SyncJob[] = [];
  const entries: AuditEntry[] = [];
  const unroutedOrders: UnroutedOrder[] = [];
  // Orders are counted per store, so each store has its 1 % with unrouted items and 0.1 % unrouted.
  const storeOrders = new Map<string, number>();
  for (let i = 0; i < size; i++) {
    const status = statusOf(size, i);
    const resellerStoreId = smallStoreTakes(status) ? stores.small : stores.big;
    const n = storeOrders.get(resellerStoreId) ?? 0;
    storeOrders.set(resellerStoreId, n + 1);
    // Numeric, as a platform's order ids are; the first job's id follows from it, as the service derives it.
    const externalOrderId = String(size * 10_000_000 + i * 10);
    const id = syncJobId(resellerStoreId, externalOrderId, 0);
    const job = seededJob({
      id,
      ownerId,
      resellerStoreId,
      createdAt: new Date(START + i * 1000).toISOString(),
      status,
    });
    // The order's record: its first (here its only) job, its body inline, 2 % of the orders polled.
    Object.assign(job, {
      externalOrderId,
      order,
      orderJobIds: [id],
      receivedVia: i % 50 === 7 ? 'poll' : 'webhook',
      unroutedLines: n % 100 === 30 ? [{ position: 1, reason: 'no_vendor' }] : null,
    } satisfies Partial<SyncJob>);
    jobs.push(job);
    if (n % 1000 === 250) unroutedOrders.push(unroutedOrderAfter(job, size, i, order));
    if (status === 'dead') entries.push(...deadStory(job, size, i));
  }
  return { jobs, entries, unroutedOrders };
};

/** Every order (its first job's or its unrouted record's), newest first as its store's list. */
const ordersOf = (jobs: SyncJob[], unroutedOrders: UnroutedOrder[]): Owner['orders'] =>
  [
    ...jobs.map((j) => ({ ...j, unrouted: j.unroutedLines !== null })),
    ...unroutedOrders.map((o) => ({ ...o, id: o.firstJobId, createdAt: o.receivedAt, unrouted: true })),
  ]
    .map(({ id, externalOrderId, resellerStoreId, createdAt, unrouted }) => ({
      id,
      externalOrderId,
      resellerStoreId,
      createdAt,
      unrouted,
    }))
    .sort((a, b) => (a.createdAt === b.createdAt ? b.id.localeCompare(a.id) : b.createdAt.localeCompare(a.createdAt)));

/** A job's event, a quarter second after it: completed, dead, failed; none for a job still under way. */
const EVENT_OF: Partial<Record<SyncJobStatus, EventType>> = {
  completed: 'sync_job.completed',
  dead: 'sync_job.dead',
  failed: 'sync_job.failed',
};

/** The jobs' events, newest first as the list sorts them (`<created>#<id>`); 1 % failing a delivery. */
const eventsOf = (jobs: SyncJob[], size: number, eventIdOf: EventIdOf): Event[] =>
  jobs
    .flatMap((job, i): Event[] => {
      const type = EVENT_OF[job.status];
      if (!type) return [];
      const createdAt = new Date(Date.parse(job.createdAt) + 250).toISOString();
      return [
        {
          // Its id spells its type and time (its key), as the recorder's do.
          id: eventIdOf(type, createdAt, String(size), String(i)),
          ownerId: job.ownerId,
          type,
          createdAt,
          object: { id: job.id, object: 'sync_job', status: job.status },
          endpointIds: ['we_seeded00000000000000000000'],
          failingEndpointIds: i % 100 === 3 ? ['we_seeded00000000000000000000'] : [],
        },
      ];
    })
    .sort((a, b) => (`${a.createdAt}#${a.id}` < `${b.createdAt}#${b.id}` ? 1 : -1));

const ownerOf = (size: number, order: { body: Uint8Array }, eventIdOf: EventIdOf): Owner => {
  const ownerId = `owner_lists_${size}`;
  const stores = { big: `rst_b${pad(size, 23)}`, small: `rst_s${pad(size, 23)}` };
  const { jobs, entries, unroutedOrders } = jobsOf(size, ownerId, stores, order);
  return {
    size,
    ownerId,
    stores,
    // Events are made of the jobs oldest first (their ids count on it); the lists read newest first.
    events: eventsOf(jobs, size, eventIdOf),
    jobs: jobs.reverse(),
    entries: entries.reverse(),
    unroutedOrders,
    orders: ordersOf(jobs, unroutedOrders),
  };
};

type ListFunction = (
  owner: Owner,
  limit: number,
  startingAfter?: string,
) => Promise<{ data: { id: string }[]; hasMore: boolean }>;

interface ListCase {
  list: string;
  filter: string;
  /** The ids the list holds, newest first. */
  expected: (owner: Owner) => string[];
  read: ListFunction;
  /** A page size of its own (full at the larger sizes only), instead of what the smallest size holds. */
  limit?: number;
}

/** The modules of shared/ the bench reads through, imported once the environment points at its table. */
const loadModules = async () => {
  const { dynamo } = await import('../shared/dynamo/table.js');
  const { syncJobItem } = await import('../shared/order-flow/order-sync-job.js');
  const { compressBody } = await import('../shared/order-flow/order-repository.js');
  const { auditEntryItem } = await import('../shared/entities/audit-entry.js');
  const { resellerStoreItem } = await import('../shared/entities/store.js');
  const { sourceStoreItem } = await import('../shared/entities/store.js');
  const { unroutedOrderItem, unroutedOrderMarkItem } = await import('../shared/order-flow/order-sync-job.js');
  const { listOrders } = await import('../shared/order-flow/reading.js');
  const { listSyncJobs } = await import('../shared/order-flow/reading.js');
  const { listAuditEntries } = await import('../shared/entities/audit-entry.js');
  const { listResellerStores } = await import('../shared/stores/stores.js');
  const { listSourceStores } = await import('../shared/stores/stores.js');
  const { eventId, eventItem } = await import('../shared/entities/event.js');
  const { listEvents } = await import('../shared/events/events.js');
  return {
    dynamo,
    syncJobItem,
    compressBody,
    auditEntryItem,
    resellerStoreItem,
    sourceStoreItem,
    unroutedOrderItem,
    unroutedOrderMarkItem,
    listOrders,
    listSyncJobs,
    listAuditEntries,
    listResellerStores,
    listSourceStores,
    eventId,
    eventItem,
    listEvents,
  };
};
type Modules = Awaited<ReturnType<typeof loadModules>>;

/** The owner's two reseller stores, each with its supplier, as items. */
const storeItemsOf = (owner: Owner, m: Modules) =>
  Object.values(owner.stores).flatMap((id, n) => {
    const store = {
      id,
      ownerId: owner.ownerId,
      name: `Store ${n}`,
      platform: 'storeplatform_a' as const,
      shopDomain: `${id}.myshopify.com`.replace(/_/g, '-'),
      secrets: { accessToken: 'ciphertext', webhookSecret: 'ciphertext' },
      previousWebhookSecret: null,
      connection: CONNECTED,
      webhooks: null,
      createdAt: new Date(Date.parse('2025-12-01T00:00:00.000Z') + n * 1000).toISOString(),
      updatedAt: '2025-12-01T00:00:00.000Z',
      deletedAt: null,
    };
    const source = {
      ...store,
      id: `sst_${id.slice(4)}`,
      shopDomain: `supplier-${store.shopDomain}`,
      resellerStoreId: id,
      vendorTag: 'Supplier',
      pricingMode: 'percentage' as const,
      pricingConfig: { type: 'percentage' as const, value: 30 },
    };
    return [m.resellerStoreItem({ ...store, routingPolicy: DEFAULT_ROUTING_POLICY }), m.sourceStoreItem(source)];
  });

/** Seeds one owner of `size` jobs into the table and says what it holds. */
const seedOwner = async (size: number, order: { body: Uint8Array }, m: Modules): Promise<Owner> => {
  const started = performance.now();
  const owner = ownerOf(size, order, m.eventId);
  // An order with unrouted items gets its mark beside its record, as the service writes it.
  const marks = owner.orders
    .filter((o) => o.unrouted)
    .map((o) =>
      m.unroutedOrderMarkItem({ firstJobId: o.id, resellerStoreId: o.resellerStoreId, receivedAt: o.createdAt }),
    );
  await writeItems(m.dynamo, TABLE_NAME, [
    ...owner.jobs.map(m.syncJobItem),
    ...owner.unroutedOrders.map(m.unroutedOrderItem),
    ...marks,
    ...owner.entries.map(m.auditEntryItem),
    ...owner.events.map(m.eventItem),
    ...storeItemsOf(owner, m),
  ]);
  const count = (status: SyncJobStatus) => owner.jobs.filter((j) => j.status === status).length;
  console.log(
    `seeded ${size.toLocaleString('en-US')} jobs in ${fixed((performance.now() - started) / 1000)} s: ` +
      `${count('dead')} dead, ${count('failed')} failed, ${count('pending')} pending, ` +
      `${count('processing')} processing, ${owner.entries.length} audit entries, ` +
      `${owner.jobs.filter((j) => j.resellerStoreId === owner.stores.small).length} in the small store; ` +
      `${owner.orders.length.toLocaleString('en-US')} orders, ` +
      `${marks.length - owner.unroutedOrders.length} with unrouted items, ` +
      `${owner.unroutedOrders.length} unrouted; ` +
      `${owner.events.length.toLocaleString('en-US')} events`,
  );
  return owner;
};

const storeOf = (owner: Owner, which?: 'big' | 'small') => (which ? owner.stores[which] : undefined);

/** The sync jobs' list, by status and store. */
const syncJobCases = (m: Modules): ListCase[] =>
  [undefined, 'pending', 'processing', 'completed', 'failed', 'dead'].flatMap((status) =>
    ([undefined, 'big', 'small'] as const).map((store) => ({
      list: 'sync_jobs',
      filter: [status && `status=${status}`, store && `store=${store}`].filter(Boolean).join(' ') || '(none)',
      expected: (owner: Owner) =>
        owner.jobs
          .filter((j) => (!status || j.status === status) && (!store || j.resellerStoreId === storeOf(owner, store)))
          .map((j) => j.id),
      read: (owner: Owner, limit: number, after?: string) =>
        m.listSyncJobs(owner, limit, after, {
          status: status as SyncJobStatus | undefined,
          resellerStoreId: storeOf(owner, store),
        }),
    })),
  );

const resourceOf = (owner: Owner) => owner.entries[0].resourceId;

/** The audit log, by action, store and resource, and by resource type. */
const auditCases = (m: Modules): ListCase[] => {
  const combinations = ([undefined, 'sync_job.dead', 'sync_job.retried'] as const).flatMap((action) =>
    ([undefined, 'big', 'small'] as const).flatMap((store) =>
      [false, true].map((resource) => ({ action, store, resource })),
    ),
  );
  const cases: ListCase[] = combinations.map(({ action, store, resource }) => {
    const filter =
      [action && `action=${action}`, store && `store=${store}`, resource && 'resource_id'].filter(Boolean).join(' ') ||
      '(none)';
    const matches = (owner: Owner, e: AuditEntry) =>
      (!action || e.action === action) &&
      (!store || e.resellerStoreId === storeOf(owner, store)) &&
      (!resource || e.resourceId === resourceOf(owner));
    return {
      list: 'audit_log',
      filter,
      expected: (owner) => owner.entries.filter((e) => matches(owner, e)).map((e) => e.id),
      read: (owner, limit, after) =>
        m.listAuditEntries(owner, limit, after, {
          action,
          resellerStoreId: storeOf(owner, store),
          resourceId: resource ? resourceOf(owner) : undefined,
        }),
    };
  });
  cases.push({
    list: 'audit_log',
    filter: 'resource_type=sync_job',
    expected: (owner) => owner.entries.map((e) => e.id),
    read: (owner, limit, after) => m.listAuditEntries(owner, limit, after, { resourceType: 'sync_job' }),
  });
  return cases;
};

/** The stores' lists, and the orders' of each store (the unrouted ones again with pages of 20). */
const storeAndOrderCases = (m: Modules): ListCase[] => {
  const cases: ListCase[] = [
    {
      list: 'reseller_stores',
      filter: '(none)',
      expected: (owner) => [owner.stores.small, owner.stores.big],
      read: (owner, limit, after) => m.listResellerStores({ ownerId: owner.ownerId }, limit, after),
    },
    {
      list: 'source_stores',
      filter: '(none)',
      expected: (owner) => [`sst_${owner.stores.big.slice(4)}`],
      read: (owner, limit, after) => m.listSourceStores({ ownerId: owner.ownerId }, owner.stores.big, limit, after),
    },
  ];
  // The unrouted orders are few at 1k (10 and 1): their lists again with pages of 20, as a client reads them.
  for (const [unrouted, limit] of [[false], [true], [true, 20]] as const) {
    for (const store of ['big', 'small'] as const) {
      cases.push({
        list: 'orders',
        limit,
        filter: [unrouted && 'unrouted=true', `store=${store}`].filter(Boolean).join(' '),
        // The cursor (`starting_after`) is an order's external id: the pages are compared by it.
        expected: (owner) =>
          owner.orders
            .filter((o) => o.resellerStoreId === owner.stores[store] && (!unrouted || o.unrouted))
            .map((o) => o.externalOrderId),
        read: async (owner, limit, after) => {
          const page = await m.listOrders(owner, owner.stores[store], limit, after, { unrouted });
          return { data: page.data.map((o) => ({ id: o.externalOrderId })), hasMore: page.hasMore };
        },
      });
    }
  }
  return cases;
};

/** Events (CONTRACT.md §14): every type's list merged, one type, a group, the failing ones. */
const eventCases = (m: Modules): ListCase[] => {
  const eventFilters: [string, Parameters<Modules['listEvents']>[3]][] = [
    ['(none)', {}],
    ['type=sync_job.completed', { type: { exact: 'sync_job.completed' } }],
    ['type=sync_job.dead', { type: { exact: 'sync_job.dead' } }],
    ['type=sync_job.*', { type: { group: 'sync_job' } }],
    ['delivery_success=false', { failing: true }],
  ];
  return eventFilters.map(([filter, filters]) => {
    const types = filters.type && 'exact' in filters.type ? [filters.type.exact] : undefined;
    return {
      list: 'events',
      filter,
      expected: (owner: Owner) =>
        owner.events
          .filter((e) => (!types || types.includes(e.type)) && (!filters.failing || e.failingEndpointIds.length > 0))
          .map((e) => e.id),
      read: (owner: Owner, limit: number, after?: string) =>
        m.listEvents({ ownerId: owner.ownerId }, limit, after, filters),
    };
  });
};

type Page = 'first' | 'middle' | 'last' | 'end';
interface Figures {
  trips: number;
  units: number;
  ms: number;
  full: boolean;
}

/** One page of `c` for `owner`, read `RUNS` times: its figures, undefined where the list has no such page. */
const measurePage = async (
  c: ListCase,
  owner: Owner,
  limit: number,
  page: Page,
  recorder: ReturnType<typeof recordRoundTrips>,
  failures: string[],
): Promise<Figures | undefined> => {
  const ids = c.expected(owner);
  // The cursor: none; half-way down (with a full page after it); the one before the last `limit` items.
  const last = ids.length - limit - 1;
  const at = { first: -1, middle: Math.min(Math.floor(ids.length / 2), last), last, end: ids.length - 1 }[page];
  const cursor = at >= 0 ? ids[at] : undefined;
  if (page !== 'first' && cursor === undefined) return undefined;
  const want = ids.slice(at + 1, at + 1 + limit);
  const { ms, answers } = await timedRuns(RUNS, () =>
    recorder
      .during(() => c.read(owner, limit, cursor))
      .catch((error) => {
        throw new Error(`${c.list} ${c.filter} ${page} at ${owner.size} after ${cursor}: ${error}`);
      }),
  );
  for (const recorded of answers) {
    const got = recorded.result.data.map((item) => item.id);
    // A page may be short (an inexact source); what it holds must be the next items.
    if (got.length === 0 && want.length > 0) failures.push(`${c.list} ${c.filter} ${page}: empty page`);
    if (page === 'end' && recorded.result.hasMore) failures.push(`${c.list} ${c.filter}: has_more at the end`);
    if (got.join() !== want.slice(0, got.length).join())
      failures.push(`${c.list} ${c.filter} ${page} at ${owner.size}: wrong items`);
  }
  const trips = answers.at(-1)?.trips ?? [];
  // Comparable across sizes: a page as full as `limit` allows (the end page: a list that has items).
  const full = page === 'end' ? ids.length > 0 : want.length === limit;
  return { trips: trips.length, units: readUnits(trips), ms: median(ms), full };
};

/** The rows of one list case, a page a row, with the read-unit ratio of each (pushed to `ratios`). */
const measureCase = async (
  c: ListCase,
  owners: Owner[],
  recorder: ReturnType<typeof recordRoundTrips>,
  failures: string[],
  ratios: number[],
) => {
  const rows: (string | number)[][] = [];
  // The same page size at every size: what the smallest size holding any match holds, at most 20.
  const smallest = owners.map((o) => c.expected(o).length).find((n) => n > 0) ?? 0;
  const limit = c.limit ?? Math.max(1, Math.min(20, smallest));
  for (const page of ['first', 'middle', 'last', 'end'] as const) {
    const figures: (Figures | undefined)[] = [];
    for (const owner of owners) figures.push(await measurePage(c, owner, limit, page, recorder, failures));
    if (figures.every((f) => f === undefined)) continue;
    // The largest size against the smallest whose page holds as many items.
    const low = figures.find((f) => f?.full);
    const high = figures.at(-1);
    const ratio = low && high && low !== high && high.full ? high.units / low.units : NaN;
    if (Number.isFinite(ratio)) ratios.push(ratio);
    rows.push([
      c.list,
      c.filter,
      limit,
      page,
      ...figures.flatMap((f) => (f ? [f.trips, fixed(f.units), fixed(f.ms)] : ['-', '-', '-'])),
      Number.isFinite(ratio) ? fixed(ratio, 2) : '-',
    ]);
  }
  return rows;
};

/** The table of every page, the worst ratio against the target, the most round trips; wrong pages fail the run. */
const report = (rows: (string | number)[][], ratios: number[], failures: string[]) => {
  const sizeLabel = (size: number) => (size >= 1000 ? `${size / 1000}k` : String(size));
  console.log('');
  console.log(
    table(
      [
        'list',
        'filter',
        'limit',
        'page',
        ...SIZES.flatMap((s) => [`trips ${sizeLabel(s)}`, `RRU ${sizeLabel(s)}`, `ms ${sizeLabel(s)}`]),
        'RRU ×',
      ],
      rows,
    ),
  );
  const worst = Math.max(...ratios);
  const over = rows.filter((r) => Number(r.at(-1)) > TARGET_RATIO);
  console.log(
    'RRU ×: read units at the largest size over those at the smallest size where the page is as full ' +
      '(holds `limit` items; for the end page, follows a list that has items).',
  );
  console.log('');
  console.log(
    `${rows.length} pages; largest read-unit ratio ${fixed(worst, 2)} (target ≤ ${TARGET_RATIO}): ` +
      (over.length ? `MISS for ${over.map((r) => `${r[0]} ${r[1]} ${r[3]}`).join('; ')}` : 'PASS'),
  );
  const tripCounts = rows.flatMap((r) =>
    r
      .slice(4, -1)
      .filter((_, i) => i % 3 === 0)
      .map(Number),
  );
  console.log(`most round trips for one page: ${Math.max(...tripCounts.filter(Number.isFinite))} (target ≤ 3)`);
  if (failures.length) {
    console.error(`wrong pages:\n${[...new Set(failures)].join('\n')}`);
    process.exitCode = 1;
  }
};

const main = () =>
  withBenchTable(TABLE_NAME, async () => {
    const m = await loadModules();
    // The order every job keeps, as the service keeps it: the raw webhook body, compressed.
    const order = { body: m.compressBody(Buffer.from(orderBody(1, 'Supplier'))) };
    const recorder = recordRoundTrips(m.dynamo);
    const owners: Owner[] = [];
    for (const size of SIZES) owners.push(await seedOwner(size, order, m));
    const cases = [...syncJobCases(m), ...auditCases(m), ...storeAndOrderCases(m), ...eventCases(m)];
    const failures: string[] = [];
    const rows: (string | number)[][] = [];
    const ratios: number[] = [];
    // One untimed pass first: DynamoDB Local's JVM compiles its hot paths on the first requests.
    const measured = cases.filter((c) => !SKIP?.test(`${c.list} ${c.filter}`));
    for (const c of measured) await c.read(owners[0], 1);
    for (const c of measured) rows.push(...(await measureCase(c, owners, recorder, failures, ratios)));
    report(rows, ratios, failures);
  });

await main();
