import { type ApiClient, unwrap } from '../client/client.js';
import { type Child, h, show, time } from './dom.js';
import { api, clickKey } from './session.js';
import type { Attempt, AuditEntry, Job, Order } from './types.js';
import { alertBox, type Directory, heading, stores } from './ui.js';

/**
 * A job's page: its status, line items, one timeline of everything that happened to it (oldest
 * first), and the actions the API would accept now.
 */

interface Moment {
  at: string;
  what: string;
  detail?: Child;
}

const read = async (client: ApiClient, id: string) => {
  const job = unwrap(await client.GET('/v1/sync_jobs/{id}', { params: { path: { id } } })) as Job;
  const [attempts, audit, order] = await Promise.all([
    client.GET('/v1/sync_jobs/{id}/attempts', { params: { path: { id }, query: { limit: 100 } } }).then(unwrap),
    client
      .GET('/v1/audit_log', { params: { query: { resource_type: 'sync_job', resource_id: id, limit: 100 } } })
      .then(unwrap),
    client
      .GET('/v1/reseller_stores/{rst_id}/orders/{externalOrderId}', {
        params: { path: { rst_id: job.resellerStoreId, externalOrderId: job.externalOrderId } },
      })
      .then((result) => (result.response.ok ? (result.data as Order) : null)),
  ]);
  return { job, attempts: attempts.data as Attempt[], audit: audit.data as AuditEntry[], order };
};

const AUDIT_WORDS: Partial<Record<string, string>> = {
  'sync_job.retried': 'Retried',
  'sync_job.dead': 'Dead',
  'sync_job.cancelled': 'Cancelled',
  'sync_job.cancellation_declined': 'Cancellation declined',
  'sync_job.attention_required': 'Needs attention',
  'sync_job.held': 'Held',
  'sync_job.released': 'Released',
  'sync_job.units_removed': 'Refunded units removed from the supplier order',
  'sync_job.return_opened': 'Return opened on the supplier',
};

const auditMoment = (entry: AuditEntry): Moment => {
  const metadata = Object.entries(entry.metadata)
    .map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(', ') : value}`)
    .join('; ');
  const by = entry.actor.type === 'system' ? 'the service' : `API key ${entry.actor.id}`;
  return {
    at: entry.createdAt,
    what: `${AUDIT_WORDS[entry.action] ?? entry.action} (audit, by ${by})`,
    detail: metadata,
  };
};

const attemptMoment = (a: Attempt): Moment => ({
  at: a.startedAt,
  what: `Attempt ${a.number}${a.count > 1 ? ` ×${a.count}` : ''}: ${a.outcome}`,
  detail: [
    `trigger ${a.trigger}`,
    `HTTP ${a.platformStatus ?? '—'}`,
    `${a.durationMs} ms`,
    a.errorMessage ? `error: ${a.errorMessage}` : null,
  ]
    .filter(Boolean)
    .join(' · '),
});

const timeline = ({ job, attempts, audit, order }: Awaited<ReturnType<typeof read>>): Moment[] => {
  const moments: Moment[] = [
    order
      ? { at: order.receivedAt, what: `Order received (${order.receivedVia})`, detail: order.externalOrderId }
      : null,
    { at: job.createdAt, what: 'Job created', detail: `to ${job.sourceStoreId}` },
    job.hold
      ? {
          at: job.hold.since,
          what: `Held: ${job.hold.reasons.join(', ')}`,
          detail: job.hold.until ? ['until ', time(job.hold.until)] : undefined,
        }
      : null,
    ...attempts.map(attemptMoment),
    ...job.fulfillments.flatMap((f) => [
      {
        at: f.receivedAt,
        what: `Parcel ${f.sourceFulfillmentId}: ${f.status}`,
        detail: `${f.trackingCompany ?? 'no carrier'} ${f.trackingNumbers.join(', ') || 'no tracking number'}`,
      },
      f.deliveredAt ? { at: f.deliveredAt, what: `Parcel ${f.sourceFulfillmentId} delivered` } : null,
    ]),
    job.cancellation
      ? {
          at: job.cancellation.requestedAt,
          what: `Cancellation requested by the ${job.cancellation.requestedBy}`,
          detail: job.cancellation.reason ?? undefined,
        }
      : null,
    job.cancellation?.endedAt
      ? { at: job.cancellation.endedAt, what: `Cancellation ${job.cancellation.status}` }
      : null,
    ...audit.map(auditMoment),
  ].filter((moment): moment is Moment => moment !== null);
  return moments.sort((a, b) => a.at.localeCompare(b.at));
};

type Action = 'retry' | 'hold' | 'release';

/** What the API would accept now (SPEC 4.4, CONTRACT.md §11): the only buttons shown. */
export const actionsFor = (job: Job): Action[] => [
  ...(job.status === 'failed' || job.status === 'dead' ? (['retry'] as const) : []),
  ...(job.status === 'pending' && !job.hold?.reasons.includes('manual') ? (['hold'] as const) : []),
  ...(job.hold ? (['release'] as const) : []),
];

const LABELS: Record<Action, string> = { retry: 'Retry', hold: 'Hold', release: 'Release' };

/** One POST per click; the key is the button's, made when it was drawn: a second click repeats it. */
const act = async (client: ApiClient, action: Action, id: string, key: string) => {
  const params = { path: { id }, header: { 'Idempotency-Key': key } };
  if (action === 'retry') return unwrap(await client.POST('/v1/sync_jobs/{id}/retry', { params }));
  if (action === 'hold') return unwrap(await client.POST('/v1/sync_jobs/{id}/hold', { params, body: {} }));
  return unwrap(await client.POST('/v1/sync_jobs/{id}/release', { params }));
};

const lineItems = (job: Job) =>
  h(
    'table',
    {},
    h('caption', {}, `Line items (${job.fulfillmentStatus})`),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['SKU', 'Title', 'Ordered', 'Fulfilled', 'Refunded', 'Removed', 'Returned', 'Price', 'Supplier price'].map(
          (n) => h('th', { scope: 'col' }, n),
        ),
      ),
    ),
    h(
      'tbody',
      {},
      job.lineItems.map((line) =>
        h(
          'tr',
          {},
          h('td', {}, line.sku ?? '—'),
          h('td', {}, line.title ?? '—', line.variantTitle ? ` (${line.variantTitle})` : ''),
          h('td', {}, line.quantity),
          h('td', {}, line.fulfilledQuantity),
          h('td', {}, line.refundedQuantity),
          h('td', {}, line.removedQuantity),
          h('td', {}, line.returnedQuantity),
          h('td', {}, line.price),
          h('td', {}, line.sourcePrice ?? '—'),
        ),
      ),
    ),
  );

/** The job's returns on the supplier and what the supplier owes back (CONTRACT.md §15.3). */
const returns = (job: Job) =>
  h(
    'table',
    {},
    h(
      'caption',
      {},
      job.credit
        ? `Returns (credit ${job.credit.currency}: expected ${job.credit.expected}, refunded ${job.credit.refunded})`
        : 'Returns',
    ),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Reseller return', 'Supplier return', 'Status', 'Units', 'Reason'].map((n) => h('th', { scope: 'col' }, n)),
      ),
    ),
    h(
      'tbody',
      {},
      job.returns.map((r) =>
        h(
          'tr',
          {},
          h('td', {}, r.resellerReturnId),
          h('td', {}, r.sourceReturnId ?? '—'),
          h('td', {}, r.error ? `${r.status}: ${r.error}` : r.status),
          h(
            'td',
            {},
            r.lines.reduce((sum, line) => sum + line.quantity, 0),
          ),
          h('td', {}, [...new Set(r.lines.map((line) => line.reason))].join(', ')),
        ),
      ),
    ),
  );

const facts = (job: Job, dir: Directory) =>
  h(
    'dl',
    { class: 'facts' },
    [
      ['Status', h('strong', { 'data-status': job.status }, job.status)],
      ['Hold', job.hold ? `${job.hold.reasons.join(', ')} since ${job.hold.since.slice(0, 19)}` : 'none'],
      ['Reseller order', `${job.externalOrderId} in ${dir.name(job.resellerStoreId)}`],
      ['Supplier store', dir.name(job.sourceStoreId)],
      ['Supplier order', job.sourceOrderId ?? '—'],
      ['Attempts', job.attempts],
      ['Last error', job.errorMessage ?? '—'],
      ['Attention', job.attention ? `${job.attention.reason} since ${job.attention.since.slice(0, 19)}` : 'none'],
    ].map(([term, value]) => [h('dt', {}, term as string), h('dd', {}, value as Child)]),
  );

export const jobPage = async (main: HTMLElement, id: string) => {
  const client = api();
  const [data, dir] = await Promise.all([read(client, id), stores()]);
  const { job } = data;
  const message = h('div', { 'aria-live': 'assertive' });
  const buttons = actionsFor(job).map((action) => {
    const key = clickKey(action);
    const button = h('button', { type: 'button', 'data-action': action }, LABELS[action]);
    button.addEventListener('click', async () => {
      for (const b of main.querySelectorAll<HTMLButtonElement>('button[data-action]')) b.disabled = true;
      show(message, h('p', { role: 'status' }, `${LABELS[action]}…`));
      try {
        await act(client, action, job.id, key);
        await jobPage(main, id);
      } catch (error) {
        show(message, alertBox(error));
        for (const b of main.querySelectorAll<HTMLButtonElement>('button[data-action]')) b.disabled = false;
      }
    });
    return button;
  });
  show(
    main,
    heading(`Job ${job.id}`),
    h('p', {}, h('a', { href: '#/' }, 'Back to the jobs that need a person')),
    facts(job, dir),
    buttons.length ? h('div', { class: 'actions', role: 'group', 'aria-label': 'Actions' }, buttons) : null,
    message,
    job.lineItems.length ? lineItems(job) : h('p', {}, 'No line items.'),
    job.returns.length || job.credit ? returns(job) : null,
    h('h2', {}, 'Timeline'),
    h(
      'ol',
      { class: 'timeline' },
      timeline(data).map((m) =>
        h('li', {}, time(m.at), ' ', h('strong', {}, m.what), m.detail ? [' — ', m.detail] : null),
      ),
    ),
  );
};
