/**
 * The entity tag every item of an order's partition (its first job's key) carries: which kind of item it is,
 * written by its entity module, read by `orderItemFrom` (order-items.ts). One letter under a one-letter
 * name: every byte of the job item is billed again by each of its writes (docs/performance.md).
 */
export const ENTITY_TAG = 'e';

export const ENTITY_TAGS = {
  job: 'J',
  unroutedOrder: 'U',
  orderCancellation: 'C',
  earlyAfterSale: 'A',
  bodyPart: 'B',
  unroutedMark: 'M',
} as const;

export type OrderItemKind = keyof typeof ENTITY_TAGS;

/** The entity tag attribute of an item of `kind`, to spread into the item. */
export const entityTagOf = (kind: OrderItemKind): Record<string, string> => ({ [ENTITY_TAG]: ENTITY_TAGS[kind] });
