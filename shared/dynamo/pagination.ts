import { InvalidCursorError } from '../core/errors.js';
import { entrySortKey, type IndexRole, type Key, listSortKey } from './keys.js';
import { batchGet, type Item, keyOf, queryIndex } from './table.js';

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/** What a list needs of its records: the cursor's position, and the owner every list is scoped to. */
interface Listed {
  /** The id in the record's sort key, unless its list names another (`ListRequest.idOf`). */
  id?: string;
  createdAt: string;
  ownerId: string;
}

/**
 * Where a list's entries are: partitions of an index, each sorted by `<prefix><createdAt>#<id>`: one,
 * or the shards of a list a busy owner writes at the order rate (keys.ts `LIST_SHARDS`), which a
 * page reads together and merges. `exact` sources hold just the list's items (a partition per
 * filter); the others hold a superset whose non-matching entries are few in practice
 * (docs/performance.md, "Lists"), and a page filters the items it loads.
 */
export interface ListSource {
  /** The index by its role in keys.ts. */
  index: IndexRole;
  /** The list's partitions: one, or every shard of it (`ShardedList.all()`). */
  partitions: readonly string[];
  /** A sort-key prefix within the partition; none for the list indexes. */
  prefix?: string;
  exact: boolean;
  /**
   * An inexact source that is small (an owner's jobs in flight) and whose matches may be sparse in
   * it: a page loads up to 100 of its items rather than a few more than `limit`.
   */
  small?: boolean;
  /**
   * The item a page loads for an entry, when the entry is another item's than the record listed
   * (an order's mark names its order's record: shared/order-flow/order-unrouted.ts); the entry's own by default.
   */
  recordKeyOf?: (entry: Key) => Key;
}

export interface ListRequest<T extends Listed> {
  source: ListSource;
  ownerId: string;
  /** The record module's conversion of a loaded item. */
  from: (item: Item) => T;
  /** The id in a record's sort key, when it is not its `id` (an order's is its first job's). */
  idOf?: (record: T) => string;
  limit: number;
  startingAfter?: string;
  /** Loads the item a cursor names, or undefined when it was never in this list (another owner's, say). */
  cursorItem: (id: string) => Promise<T | undefined>;
  /**
   * Whether a loaded item belongs on the page, as it is now: the filters an inexact source
   * leaves to the page, and for every source the item's current state (an index entry can
   * outlive, for a moment, the state that put it there).
   */
  matches?: (item: T) => boolean;
}

/** BatchGetItem takes at most 100 keys: the most items one page may load. */
const MAX_LOADED = 100;

/** What an inexact source loads beyond `limit + 1`, for the entries a page drops. */
const slack = (limit: number) => Math.max(2, Math.ceil(limit / 4));

/**
 * The newest `limit` entries below `before` of a source's partitions: one Query per partition, in
 * parallel, each of at most `limit` entries (all of a page's may be in one shard), merged by sort
 * key. For a sharded list this reads `shards × limit` keys at most: a page's cost grows with the
 * shards and the page, never with the list's length.
 */
const newestEntries = async (source: ListSource, before: string | undefined, limit: number) => {
  const queries = source.partitions.map((partition) =>
    queryIndex({ index: source.index, partition, prefix: source.prefix, before, limit }),
  );
  const all = (await Promise.all(queries)).flat();
  if (source.partitions.length === 1) return all;
  const sortKey = (entry: Item) => entrySortKey(source.index, entry);
  return all.sort((a, b) => (sortKey(a) < sortKey(b) ? 1 : sortKey(a) > sortKey(b) ? -1 : 0)).slice(0, limit);
};

/**
 * Cursor pagination for every list (SPEC 8.1, CONTRACT.md §8): newest first by (createdAt, id),
 * as every list index sorts by `<createdAt>#<id>`. The cursor is the last item's id; its sort key
 * bounds the Query, so items sharing a timestamp are neither skipped nor repeated, items created
 * meanwhile never shift later pages, and a cursor item deleted (or moved out of a filtered list)
 * since still marks its place.
 *
 * A page is at most three round trips: the cursor's GetItem, the Queries for the keys (one per
 * partition, side by side; one more entry than the page loads, to tell `has_more`) and one BatchGet
 * of at most `limit` items (`limit + 1 + slack` for an inexact source, up to 100 for a small one),
 * whatever the list's length. It may hold fewer than `limit`
 * items when some loaded ones do not match: `has_more` still says whether the list goes on. Only
 * when not one loaded item matches while the list goes on does the page read on, so a page is
 * never empty with `has_more` true (docs/design.md, "Lists").
 */
export const listPage = async <T extends Listed>(request: ListRequest<T>): Promise<Page<T>> => {
  const { source, limit } = request;
  const recordKeyOf = source.recordKeyOf ?? ((entry: Key) => entry);
  let before: string | undefined;
  if (request.startingAfter !== undefined) {
    const cursor = await request.cursorItem(request.startingAfter);
    if (!cursor) throw new InvalidCursorError();
    const id = request.idOf ? request.idOf(cursor) : cursor.id;
    if (id === undefined) throw new Error('a listed record without an id: its list names one with idOf');
    before = listSortKey(cursor.createdAt, id);
  }

  const loads = source.exact ? limit : source.small ? MAX_LOADED : Math.min(MAX_LOADED, limit + 1 + slack(limit));
  const matches = request.matches ?? (() => true);
  const data: T[] = [];
  for (;;) {
    const entries = await newestEntries(source, before, loads + 1);
    const loaded = entries.slice(0, loads);
    const items = await batchGet(
      loaded.map((entry) => recordKeyOf(keyOf(entry))),
      request.from,
    );
    // A store's or a resource's partition holds one owner's items: one of another owner's means
    // the caller named a store or resource that is not theirs.
    if (items.some((item) => item.ownerId !== request.ownerId)) return { data: [], hasMore: false };
    data.push(...items.filter(matches));
    const more = entries.length > loads;
    if (data.length > limit) return { data: data.slice(0, limit), hasMore: true };
    if (data.length > 0 || !more) return { data, hasMore: more };
    // Read on below the last entry loaded, in every partition (its sort key without the prefix).
    const last = loaded.at(-1);
    if (!last) return { data, hasMore: false };
    before = entrySortKey(source.index, last).slice(source.prefix?.length ?? 0);
  }
};
