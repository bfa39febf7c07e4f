import { keys } from '../dynamo/keys.js';
import { attributes, type Item } from '../dynamo/table.js';
import type { ApprovedReturn, Refund } from './order-after-sale.js';
import { entityTagOf } from './order-item-kind.js';

/**
 * Refunds and returns that arrived before their order (CONTRACT.md §15, "kept when early", as §10
 * keeps an early `orders/cancelled`: order-cancellation.ts): kept 7 days (the table's TTL) at the key
 * the order's first job will have, each appended once (by its id). The order's create collides with
 * it (its first write is conditional on that key being free: the happy path pays nothing), writes
 * the order's jobs in its place and then takes each kept one as if it came then. A cancellation that
 * also came first takes the key (nothing is placed, nothing is left to refund). Ids, quantities and
 * reasons only: no personal data.
 */
export type EarlyAfterSale = { refund: Refund } | { approved: ApprovedReturn };

export interface KeptAfterSale {
  firstJobId: string;
  kept: EarlyAfterSale[];
}

/** How long one is kept: as a cancellation that came first (7 days, the table's TTL). */
export const EARLY_KEEP_SECONDS = 7 * 24 * 3600;

/** The kept list; only this kind of item has it. */
const MARK = 'earlyAfterSale';

const idOf = (entry: EarlyAfterSale) =>
  'refund' in entry ? `refund:${entry.refund.id}` : `return:${entry.approved.id}`;

/** The update that keeps one more (once by its id), on condition that the key is free or holds such a list. */
export const keepEarlyAfterSaleUpdate = (firstJobId: string, entry: EarlyAfterSale, expiresAt: number) => ({
  Key: keys.syncJob(firstJobId),
  UpdateExpression:
    'SET #tag = :tag, #mark = list_append(if_not_exists(#mark, :none), :entry), expiresAt = :expiresAt ADD #ids :id',
  ConditionExpression: '(attribute_not_exists(PK) OR attribute_exists(#mark)) AND NOT contains(#ids, :idText)',
  ExpressionAttributeNames: {
    '#tag': Object.keys(entityTagOf('earlyAfterSale'))[0],
    '#mark': MARK,
    '#ids': 'earlyIds',
  },
  ExpressionAttributeValues: {
    ':tag': Object.values(entityTagOf('earlyAfterSale'))[0],
    ':none': [],
    ':entry': [entry],
    ':expiresAt': expiresAt,
    ':id': new Set([idOf(entry)]),
    ':idText': idOf(entry),
  },
});

export const keptAfterSaleFrom = (firstJobId: string, item: Item): KeptAfterSale => {
  const read = attributes(item, 'early refunds and returns');
  return { firstJobId, kept: read.object<EarlyAfterSale[]>(MARK) };
};

/** Whether the item is such a list (an item written before tags never was). */
export const isKeptAfterSale = (item: Item) => Array.isArray(item[MARK]);

/** The condition of the write that replaces it with the order's first job, or with a cancellation. */
export const REPLACES_KEPT_AFTER_SALE = `attribute_exists(${MARK})`;
