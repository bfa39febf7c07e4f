import { unwrap } from '../client/client.js';
import { age, fieldForm, h, show } from './dom.js';
import {
  type Filters,
  type ListState,
  needsSince,
  REASONS,
  type Reason,
  type Row,
  readPage,
  startList,
} from './needs.js';
import { api } from './session.js';
import { PAGE_DRAWN } from './timing.js';
import type { Job } from './types.js';
import { alertBox, type Directory, heading, storeSelect, stores } from './ui.js';

/** The list page: the jobs that need a person (console/needs.ts), filters, search and cursors. */

export const PAGE_SIZE = 25;

const REASON_LABELS: Record<Reason, string> = {
  dead: 'dead',
  failed: 'failed',
  held: 'held',
  late: 'late',
  attention: 'needs attention',
  declined: 'cancellation declined',
};

const reasonText = (row: Row) =>
  row.reasons
    .map((reason) => {
      if (reason === 'held') return `held: ${row.job.hold?.reasons.join(', ') ?? '?'}`;
      if (reason === 'late') return `late: due ${row.job.serviceLevel?.dueAt ?? '?'}`;
      if (reason === 'attention') return `attention: ${row.job.attention?.reason ?? '?'}`;
      if (reason === 'declined') return `cancellation declined: ${row.job.cancellation?.reason ?? ''}`;
      return REASON_LABELS[reason];
    })
    .join('; ');

const jobLink = (job: Job) => h('a', { href: `#/jobs/${encodeURIComponent(job.id)}` }, job.id);

const jobsTable = (caption: string, rows: Row[], dir: Directory) =>
  h(
    'table',
    {},
    h('caption', {}, caption),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Job', 'Reseller order', 'Supplier store', 'Reason', 'Age', 'Attempts', 'Last error'].map((name) =>
          h('th', { scope: 'col' }, name),
        ),
      ),
    ),
    h(
      'tbody',
      {},
      rows.map((row) =>
        h(
          'tr',
          { 'data-job': row.job.id },
          h('td', {}, jobLink(row.job)),
          h('td', {}, row.job.externalOrderId, h('br'), h('small', {}, dir.name(row.job.resellerStoreId))),
          h('td', {}, dir.name(row.job.sourceStoreId)),
          h('td', {}, reasonText(row)),
          h('td', {}, age(needsSince(row.job))),
          h('td', {}, row.job.attempts),
          h('td', { class: 'error' }, row.job.errorMessage ?? '—'),
        ),
      ),
    ),
  );

/** Finds a job by its id, or the jobs of a reseller order by the order's id, in every store (or the filtered one). */
const search = async (term: string, filters: Filters, dir: Directory): Promise<Job[]> => {
  const client = api();
  if (/^sj_/.test(term)) {
    return [unwrap(await client.GET('/v1/sync_jobs/{id}', { params: { path: { id: term } } })) as Job];
  }
  const storeIds = filters.resellerStoreId ? [filters.resellerStoreId] : dir.resellerStores.map((store) => store.id);
  const orders = await Promise.all(
    storeIds.map(async (rst_id) => {
      const result = await client.GET('/v1/reseller_stores/{rst_id}/orders/{externalOrderId}', {
        params: { path: { rst_id, externalOrderId: term } },
      });
      return result.response.status === 404 ? null : unwrap(result);
    }),
  );
  const ids = orders.flatMap((order) => order?.syncJobIds ?? []);
  return Promise.all(
    ids.map(async (id) => unwrap(await client.GET('/v1/sync_jobs/{id}', { params: { path: { id } } })) as Job),
  );
};

const filtersOf = (query: URLSearchParams): Filters => ({
  resellerStoreId: query.get('store') || undefined,
  reason: (REASONS as readonly string[]).includes(query.get('reason') ?? '')
    ? (query.get('reason') as Reason)
    : undefined,
});

const searchForm = (filters: Filters, dir: Directory, results: HTMLElement) => {
  const input = h('input', { id: 'search', name: 'search', type: 'search', autocomplete: 'off' });
  return fieldForm(
    {
      role: 'search',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const term = input.value.trim();
        if (!term) return show(results);
        show(results, h('p', { role: 'status' }, 'Searching…'));
        try {
          const jobs = await search(term, filters, dir);
          show(
            results,
            jobs.length
              ? jobsTable(
                  `Search results for ${term}`,
                  jobs.map((job) => ({ job, reasons: [], sortKey: '' })),
                  dir,
                )
              : h('p', { role: 'status' }, `No job and no reseller order with the id ${term}.`),
          );
        } catch (error) {
          show(results, alertBox(error));
        }
      },
    },
    'Search',
    input,
    'Find',
    h('small', { class: 'hint' }, ' a job id (sj_…) or a reseller order id'),
  );
};

const filterForm = (filters: Filters, dir: Directory) =>
  h(
    'form',
    {
      class: 'filters',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const data = new FormData(event.target as HTMLFormElement);
        const query = new URLSearchParams();
        for (const name of ['store', 'reason']) if (data.get(name)) query.set(name, String(data.get(name)));
        location.hash = `#/?${query}`;
      },
    },
    storeSelect('store', 'Reseller store', 'All reseller stores', dir, filters.resellerStoreId),
    ' ',
    h('label', { for: 'reason' }, 'Reason'),
    h(
      'select',
      { id: 'reason', name: 'reason' },
      h('option', { value: '' }, 'Every reason'),
      REASONS.map((reason) =>
        h('option', { value: reason, selected: reason === filters.reason }, REASON_LABELS[reason]),
      ),
    ),
    ' ',
    h('button', { type: 'submit' }, 'Filter'),
  );

export const listPage = async (main: HTMLElement, query: URLSearchParams) => {
  const filters = filtersOf(query);
  const started = performance.now();
  // The first page is read while the stores' names are: neither waits for the other.
  let first: ReturnType<typeof readPage> | undefined = readPage(api(), startList(filters), PAGE_SIZE);
  first.catch(() => undefined);
  const dir = await stores();
  const results = h('div', { 'aria-live': 'polite' });
  const listArea = h('div', {});
  show(main, heading('Needs a person'), searchForm(filters, dir, results), results, filterForm(filters, dir), listArea);
  const starts: ListState[] = [startList(filters)];
  const go = (index: number) =>
    renderPage(index)
      .then(() => {
        // The keyboard's place after a page turn: the new page's table, not the body.
        const caption = listArea.querySelector<HTMLElement>('caption');
        caption?.setAttribute('tabindex', '-1');
        caption?.focus();
      })
      .catch((error) => show(listArea, alertBox(error)));
  const renderPage = async (index: number) => {
    show(listArea, h('p', { role: 'status' }, 'Loading…'));
    const since = first ? started : performance.now();
    const page = await (first ?? readPage(api(), starts[index], PAGE_SIZE));
    first = undefined;
    starts[index + 1] = page.next;
    const pager = h(
      'nav',
      { 'aria-label': 'Pages', class: 'pager' },
      index > 0 && h('button', { type: 'button', onclick: () => go(index - 1) }, 'Previous page'),
      ` Page ${index + 1} `,
      page.hasMore && h('button', { type: 'button', onclick: () => go(index + 1) }, 'Next page'),
    );
    show(
      listArea,
      page.notes.map((note) => h('p', { class: 'note' }, note)),
      page.rows.length
        ? jobsTable(`Jobs that need a person, newest first (page ${index + 1})`, page.rows, dir)
        : h('p', { role: 'status' }, 'Nothing needs a person.'),
      pager,
    );
    // For bench:console (User Timing): from the page's start (the first page) or the page turn to the
    // drawn table; the measure's end is the time from the navigation, however often a tool polls.
    performance.measure(PAGE_DRAWN, { start: since, end: performance.now() });
  };
  await renderPage(0).catch((error) => show(listArea, alertBox(error)));
};
