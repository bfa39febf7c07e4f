import './console.css';
import { bulkPage } from './bulk.js';
import { fieldForm, h, show } from './dom.js';
import { jobPage } from './job.js';
import { listPage } from './list.js';
import { apiKey, forgetApiKey, setApiKey } from './session.js';
import { scorecardPage, storesPage, unroutedPage } from './stores.js';
import { alertBox, forgetStores } from './ui.js';

/**
 * The operator console (issue 33): a page of the service's own origin that calls the public API with
 * the key its user pastes. Pages are addressed by the URL's fragment (`#/jobs/sj_…`), which never
 * reaches a server and never holds the key.
 */

const root = document.getElementById('app')!;

const keyForm = (error?: unknown) => {
  const input = h('input', { id: 'api-key', name: 'api-key', type: 'password', autocomplete: 'off', required: true });
  return fieldForm(
    {
      class: 'key',
      onsubmit: (event: Event) => {
        event.preventDefault();
        setApiKey(input.value.trim());
        forgetStores();
        route();
      },
    },
    'API key',
    input,
    'Use this key',
    h('p', { class: 'hint' }, 'Kept in this tab only (sessionStorage) and sent to this API, nowhere else.'),
    error ? alertBox(error) : null,
  );
};

const layout = (main: HTMLElement) =>
  show(
    root,
    h('a', { href: '#main', class: 'skip' }, 'Skip to the content'),
    h(
      'header',
      {},
      h('span', { class: 'brand' }, 'Order routing — operator console'),
      h(
        'nav',
        { 'aria-label': 'Console' },
        h('a', { href: '#/' }, 'Needs a person'),
        h('a', { href: '#/bulk' }, 'Retry dead jobs'),
        h('a', { href: '#/stores' }, 'Stores'),
        h(
          'button',
          {
            type: 'button',
            onclick: () => {
              forgetApiKey();
              forgetStores();
              route();
            },
          },
          'Forget the key',
        ),
      ),
    ),
    main,
  );

const page = (main: HTMLElement, path: string, query: URLSearchParams) => {
  const job = path.match(/^\/jobs\/([^/]+)$/);
  if (job) return jobPage(main, decodeURIComponent(job[1]));
  const unrouted = path.match(/^\/stores\/([^/]+)\/unrouted$/);
  if (unrouted) return unroutedPage(main, decodeURIComponent(unrouted[1]));
  const scorecard = path.match(/^\/stores\/([^/]+)\/sources\/([^/]+)$/);
  if (scorecard) return scorecardPage(main, decodeURIComponent(scorecard[1]), decodeURIComponent(scorecard[2]));
  if (path === '/stores') return storesPage(main);
  if (path === '/bulk') return bulkPage(main, query);
  return listPage(main, query);
};

const route = async () => {
  if (!apiKey()) return show(root, h('main', { id: 'main' }, h('h1', {}, 'Operator console'), keyForm()));
  const [path, search = ''] = (location.hash.slice(1) || '/').split('?');
  const main = h('main', { id: 'main' }, h('p', { role: 'status' }, 'Loading…'));
  layout(main);
  try {
    await page(main, path, new URLSearchParams(search));
    main.querySelector<HTMLElement>('h1')?.focus();
  } catch (error) {
    // A refused key: the API's message, the key field again, and nothing of the page.
    if ((error as { status?: number }).status === 401) {
      forgetApiKey();
      forgetStores();
      return show(root, h('main', { id: 'main' }, h('h1', {}, 'Operator console'), keyForm(error)));
    }
    show(main, alertBox(error));
  }
};

window.addEventListener('hashchange', route);
route();
