import { InvalidCursorError } from '../core/errors.js';
import { INDEX, listSortKey } from './keys.js';
import { batchGet, queryKeys, type Item } from './table.js';

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/** What a list's cursor needs of its records. */
interface Listed {
  id: string;
  createdAt: string;
}

export interface ListRequest<T extends Listed> {
  /** GSI1 partition of the list (`lists.*` in keys.ts). */
  partition: string;
  /** The record module's conversion of a loaded item. */
  from: (item: Item) => T;
  limit: number;
  startingAfter?: string;
  /** Loads the item a cursor names, or undefined when it was never in this list (another owner's, say). */
  cursorItem: (id: string) => Promise<T | undefined>;
  /** Filters that the index cannot answer; applied to loaded items. */
  filter?: (item: T) => boolean;
}

/** Enough keys per Query that a sparse filter still fills a page in a few round trips. */
const FILTERED_BATCH = 100;

/**
 * Cursor pagination for every list (SPEC 8.1, CONTRACT.md §8): newest first by (createdAt, id),
 * as the GSI1 sort key `<createdAt>#<id>` orders them. The cursor is the last item's id; its
 * sort key bounds the next Query, so a page is one Query (limit + 1 keys, the extra one says
 * `has_more`) and one BatchGet, whatever the list's length, and items sharing a timestamp are
 * neither skipped nor repeated. A cursor item deleted since still marks its place.
 */
export const listPage = async <T extends Listed>(request: ListRequest<T>): Promise<Page<T>> => {
  let before: string | undefined;
  if (request.startingAfter !== undefined) {
    const cursor = await request.cursorItem(request.startingAfter);
    if (!cursor) throw new InvalidCursorError();
    before = listSortKey(cursor.createdAt, cursor.id);
  }

  const wanted = request.limit + 1;
  const collected: T[] = [];
  let exclusiveStartKey: Item | undefined;
  do {
    const page = await queryKeys({
      index: INDEX.lists,
      pkName: 'GSI1PK',
      skName: 'GSI1SK',
      pk: request.partition,
      before,
      limit: request.filter ? Math.max(wanted, FILTERED_BATCH) : wanted,
      exclusiveStartKey,
    });
    const items = await batchGet(page.keys, request.from);
    for (const item of items) {
      if (!request.filter || request.filter(item)) collected.push(item);
      if (collected.length === wanted) break;
    }
    exclusiveStartKey = page.lastKey;
  } while (request.filter && collected.length < wanted && exclusiveStartKey);

  return { data: collected.slice(0, request.limit), hasMore: collected.length > request.limit };
};
