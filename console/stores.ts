import { unwrap } from '../client/client.js';
import { h, show, time } from './dom.js';
import { api } from './session.js';
import type { ResellerStore, SourceStore } from './types.js';
import { alertBox, heading, stores } from './ui.js';

/** Reseller and source stores with what the API shows of their health (CONTRACT.md §12). */

const unknown = 'not shown';

const webhooks = ({ webhooks: w }: ResellerStore | SourceStore) =>
  w === undefined
    ? unknown
    : w
      ? `${w.status}${w.missing?.length ? ` (missing ${w.missing.join(', ')})` : ''}${w.error ? `: ${w.error}` : ''}`
      : '—';

const health = (store: ResellerStore | SourceStore) => [
  h('td', {}, webhooks(store)),
  h(
    'td',
    {},
    store.connection === undefined
      ? unknown
      : store.connection
        ? `${store.connection.state}${store.connection.reason ? `: ${store.connection.reason}` : ''}`
        : '—',
  ),
  h('td', {}, store.tokenExpiresAt === undefined ? unknown : time(store.tokenExpiresAt)),
  h('td', {}, store.lastPolledAt === undefined ? unknown : time(store.lastPolledAt)),
];

const HEAD = ['Store', 'Kind', 'Platform and shop', 'Webhooks', 'Connection', 'Token expires', 'Last poll', 'Orders'];

export const storesPage = async (main: HTMLElement) => {
  const dir = await stores();
  show(
    main,
    heading('Stores'),
    h(
      'table',
      {},
      h('caption', {}, 'Reseller stores, each followed by its source stores'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          HEAD.map((name) => h('th', { scope: 'col' }, name)),
        ),
      ),
      h(
        'tbody',
        {},
        dir.resellerStores.flatMap((store) => [
          h(
            'tr',
            { class: 'reseller' },
            h('th', { scope: 'row' }, store.name, h('br'), h('small', {}, store.id)),
            h('td', {}, 'reseller'),
            h('td', {}, `${store.platform} ${store.shopDomain}`),
            health(store),
            h(
              'td',
              {},
              h('a', { href: `#/stores/${encodeURIComponent(store.id)}/unrouted` }, `Unrouted orders of ${store.name}`),
              h('br'),
              h('a', { href: `#/bulk?store=${encodeURIComponent(store.id)}` }, `Retry dead jobs of ${store.name}`),
            ),
          ),
          ...dir.sourceStores
            .filter((source) => source.resellerStoreId === store.id)
            .map((source) =>
              h(
                'tr',
                {},
                h(
                  'th',
                  { scope: 'row' },
                  source.name,
                  h('br'),
                  h('small', {}, `${source.id}, vendor ${source.vendorTag}`),
                ),
                h('td', {}, 'source'),
                h('td', {}, `${source.platform} ${source.shopDomain}`),
                health(source),
                h(
                  'td',
                  {},
                  h(
                    'a',
                    { href: `#/stores/${encodeURIComponent(store.id)}/sources/${encodeURIComponent(source.id)}` },
                    `Scorecard of ${source.name}`,
                  ),
                ),
              ),
            ),
        ]),
      ),
    ),
  );
};

/** A reseller store's orders with items that went to no supplier (CONTRACT.md §10.8), paged by cursor. */
export const unroutedPage = async (main: HTMLElement, rst: string, cursors: string[] = []) => {
  const dir = await stores();
  const page = unwrap(
    await api().GET('/v1/reseller_stores/{rst_id}/orders', {
      params: { path: { rst_id: rst }, query: { unrouted: 'true', limit: 25, starting_after: cursors.at(-1) } },
    }),
  );
  const rows = page.data.flatMap((order) =>
    order.unroutedLineItems.map((line) =>
      h(
        'tr',
        {},
        h('td', {}, order.externalOrderId),
        h('td', {}, time(order.receivedAt)),
        h('td', {}, line.sku ?? '—'),
        h('td', {}, line.title ?? '—'),
        h('td', {}, line.vendor ?? '—'),
        h('td', {}, line.quantity),
        h('td', {}, line.reason),
      ),
    ),
  );
  const last = page.data.at(-1)?.externalOrderId;
  show(
    main,
    heading(`Unrouted orders of ${dir.name(rst)}`),
    h('p', {}, h('a', { href: '#/stores' }, 'Back to the stores')),
    rows.length
      ? h(
          'table',
          {},
          h('caption', {}, 'Items that went to no supplier, newest order first'),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Order', 'Received', 'SKU', 'Title', 'Vendor', 'Quantity', 'Why'].map((n) =>
                h('th', { scope: 'col' }, n),
              ),
            ),
          ),
          h('tbody', {}, rows),
        )
      : h('p', { role: 'status' }, 'No unrouted order.'),
    h(
      'nav',
      { 'aria-label': 'Pages', class: 'pager' },
      cursors.length > 0 &&
        h(
          'button',
          {
            type: 'button',
            onclick: () => unroutedPage(main, rst, cursors.slice(0, -1)).catch((e) => show(main, alertBox(e))),
          },
          'Previous page',
        ),
      page.has_more &&
        last &&
        h(
          'button',
          {
            type: 'button',
            onclick: () => unroutedPage(main, rst, [...cursors, last]).catch((e) => show(main, alertBox(e))),
          },
          'Next page',
        ),
    ),
  );
};

const percent = (rate: number | null) => (rate === null ? '—' : `${(rate * 100).toFixed(1)} %`);
const hours = (p: { p50: number | null; p90: number | null }) =>
  p.p50 === null ? '—' : `median ≤ ${p.p50} h, 90 % ≤ ${p.p90} h`;

/** A supplier's scorecard (CONTRACT.md §16.3): the last 30 days of jobs due, in its zone. */
export const scorecardPage = async (main: HTMLElement, rst: string, sst: string) => {
  const dir = await stores();
  const card = unwrap(
    await api().GET('/v1/reseller_stores/{rst_id}/source_stores/{id}/scorecard', {
      params: { path: { rst_id: rst, id: sst } },
    }),
  );
  const rows: Array<[string, string | number]> = [
    ['Jobs due', card.jobsDue],
    ['Shipped on time', `${card.shippedOnTime} (${percent(card.onTimeRate)})`],
    ['Late shipment rate', percent(card.lateShipmentRate)],
    ['Cancelled by the supplier', percent(card.sourceCancellationRate)],
    ['Hours to tracking', hours(card.hoursToTracking)],
    ['Late now (past due, not shipped)', card.lateNow],
    ['Shipped on time and scanned', percent(card.scanVerifiedOnTimeRate)],
    ['Valid tracking', percent(card.validTrackingRate)],
    ['Hours to the first scan', hours(card.hoursToFirstScan)],
    ['Parcels never tracked', card.untrackedParcels],
  ];
  show(
    main,
    heading(`Scorecard of ${dir.sourceStores.find((s) => s.id === sst)?.name ?? sst}`),
    h('p', {}, h('a', { href: '#/stores' }, 'Back to the stores')),
    h(
      'table',
      {},
      h('caption', {}, `Jobs due from ${card.from} to ${card.to}`),
      h(
        'tbody',
        {},
        rows.map(([name, value]) => h('tr', {}, h('th', { scope: 'row' }, name), h('td', {}, value))),
      ),
    ),
    !card.sufficient && h('p', { role: 'status' }, 'Fewer than 20 jobs decided: too few to judge.'),
  );
};
