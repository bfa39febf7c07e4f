import { ApiRequestError, unwrap } from '../client/client.js';
import { h } from './dom.js';
import { api } from './session.js';
import type { ApiClient, ResellerStore, SourceStore } from './types.js';

/** What the API said when it refused, and nothing else: its message (CONTRACT.md §3), or why it was not reached. */
export const errorText = (error: unknown) =>
  error instanceof ApiRequestError || error instanceof Error ? error.message : String(error);

export const alertBox = (error: unknown) => h('p', { class: 'alert', role: 'alert' }, errorText(error));

/** Every page of a list route, for the short lists (stores). */
export const everyPage = async <T extends { id: string }>(
  read: (cursor: string | undefined) => Promise<{ data: T[]; has_more: boolean }>,
) => {
  const items: T[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await read(cursor);
    items.push(...page.data);
    if (!page.has_more || !page.data.length) return items;
    cursor = page.data.at(-1)!.id;
  }
};

export interface Directory {
  resellerStores: ResellerStore[];
  sourceStores: SourceStore[];
  name(id: string): string;
}

/** The key owner's stores, reseller and source, read once per key and page load. */
let directory: Promise<Directory> | undefined;

const readDirectory = async (client: ApiClient): Promise<Directory> => {
  const resellerStores = (await everyPage((cursor) =>
    client.GET('/v1/reseller_stores', { params: { query: { limit: 100, starting_after: cursor } } }).then(unwrap),
  )) as ResellerStore[];
  const sourceStores = (
    await Promise.all(
      resellerStores.map((store) =>
        everyPage((cursor) =>
          client
            .GET('/v1/reseller_stores/{rst_id}/source_stores', {
              params: { path: { rst_id: store.id }, query: { limit: 100, starting_after: cursor } },
            })
            .then(unwrap),
        ),
      ),
    )
  ).flat() as SourceStore[];
  const names = new Map([...resellerStores, ...sourceStores].map((store) => [store.id, store.name]));
  return { resellerStores, sourceStores, name: (id) => names.get(id) ?? id };
};

export const stores = () => {
  directory ??= readDirectory(api()).catch((error) => {
    directory = undefined;
    throw error;
  });
  return directory;
};

export const forgetStores = () => {
  directory = undefined;
};

/** A page's heading: focused on arrival, so a keyboard or screen reader user starts there. */
export const heading = (text: string) => h('h1', { tabindex: -1 }, text);

export const storeSelect = (id: string, label: string, all: string, dir: Directory, selected?: string) => [
  h('label', { for: id }, label),
  h(
    'select',
    { id, name: id },
    h('option', { value: '' }, all),
    dir.resellerStores.map((store) =>
      h('option', { value: store.id, selected: store.id === selected }, `${store.name} (${store.id})`),
    ),
  ),
];
