import { unwrap } from '../client/client.js';
import { h, show } from './dom.js';
import { retryDeadJobs } from './retry-dead.js';
import { api } from './session.js';
import type { Job } from './types.js';
import { alertBox, everyPage, heading, storeSelect, stores } from './ui.js';

/**
 * "Retry every dead job of this store": the dead jobs are counted first (every page, as
 * `npm run jobs -- retry --all-dead` does: a retried job leaves the list, which would move a
 * cursor under us), then retried one after the other as that command does (console/retry-dead.ts:
 * the same keys, and a `429` waited out).
 */

const deadJobs = (rst: string) =>
  everyPage(async (cursor) =>
    unwrap(
      await api().GET('/v1/sync_jobs', {
        params: { query: { status: 'dead', reseller_store_id: rst, limit: 100, starting_after: cursor } },
      }),
    ),
  ) as Promise<Job[]>;

export const bulkPage = async (main: HTMLElement, query: URLSearchParams) => {
  const dir = await stores();
  const area = h('div', { 'aria-live': 'polite' });
  const count = async (rst: string) => {
    show(area, h('p', { role: 'status' }, 'Counting the dead jobs…'));
    const jobs = await deadJobs(rst);
    if (!jobs.length) return show(area, h('p', { role: 'status' }, `No dead job in ${dir.name(rst)}.`));
    const progress = h('p', { role: 'status' }, `${jobs.length} dead job(s) in ${dir.name(rst)} will be retried.`);
    const button = h('button', { type: 'button' }, `Retry ${jobs.length} dead job(s)`);
    button.addEventListener('click', async () => {
      button.disabled = true;
      const failures = await retryDeadJobs(api(), jobs, (text) => {
        progress.textContent = text;
      });
      show(
        area,
        h('p', { role: 'status' }, `Retried ${jobs.length - failures.length} of ${jobs.length} dead job(s).`),
        failures.length
          ? h(
              'ul',
              { class: 'alert', role: 'alert' },
              failures.map((f) => h('li', {}, f)),
            )
          : null,
      );
    });
    show(area, progress, button);
  };
  const form = h(
    'form',
    {
      onsubmit: (event: Event) => {
        event.preventDefault();
        const rst = String(new FormData(event.target as HTMLFormElement).get('bulk-store') ?? '');
        if (rst) count(rst).catch((error) => show(area, alertBox(error)));
      },
    },
    storeSelect('bulk-store', 'Reseller store', 'Choose a store', dir, query.get('store') ?? undefined),
    ' ',
    h('button', { type: 'submit' }, 'Count dead jobs'),
  );
  show(main, heading('Retry every dead job of a store'), form, area);
};
