import type { Key } from '../dynamo/keys.js';
import { ConditionFailed, type Item, keyOf, scanPage, UpdateBuilder, updateIf } from '../dynamo/table.js';
import type { SyncJob } from './order-sync-job.js';

/** What to write so an item has the attributes the current code gives it (shared/backfill/index-attributes.ts). */
export interface IndexRepair {
  set: Record<string, string>;
  remove: string[];
}

/**
 * The table's one builder (dynamo/table.ts), with a numbered placeholder per attribute name and per
 * value, so names like `status` or a fulfillment id are safe.
 */
class Expression extends UpdateBuilder {
  private readonly placeholders = new Map<string, string>();

  override name(attribute: string) {
    let placeholder = this.placeholders.get(attribute);
    if (!placeholder) {
      placeholder = super.name(attribute, `#a${this.placeholders.size}`);
      this.placeholders.set(attribute, placeholder);
    }
    return placeholder;
  }

  /** `:v<n>` for the next value. */
  next(v: unknown) {
    return this.value(`v${Object.keys(this.values).length}`, v);
  }

  /** `attribute` still as read: the same value, or still absent. */
  unchanged(attribute: string, read: unknown) {
    return read === undefined
      ? `attribute_not_exists(${this.name(attribute)})`
      : `${this.name(attribute)} = ${this.next(read)}`;
  }
}

/**
 * The conditions that the item is as scanned, in everything its wanted index attributes follow
 * from: the attributes written, and for a job its status, generation and `updatedAt` (every move
 * changes them) and, once completed, the status of each fulfillment entry and their number (an
 * entry's move changes neither the job's status nor its `updatedAt`). A move made meanwhile wins.
 */
const asScanned = (expression: Expression, item: Item, job: SyncJob | undefined, repair: IndexRepair) => {
  const conditions = ['attribute_exists(PK)'];
  for (const attribute of [...Object.keys(repair.set), ...repair.remove])
    conditions.push(expression.unchanged(attribute, item[attribute]));
  if (job) {
    for (const attribute of ['status', 'generation', 'updatedAt'])
      conditions.push(expression.unchanged(attribute, item[attribute]));
    if (job.status === 'completed') {
      const entries = Object.keys(job.fulfillments);
      const map = expression.name('fulfillments');
      if (!entries.length) conditions.push(`attribute_not_exists(${map})`);
      else {
        conditions.push(`size(${map}) = ${expression.next(entries.length)}`);
        for (const id of entries) {
          const status = `${map}.${expression.name(id)}.${expression.name('status')}`;
          conditions.push(`${status} = ${expression.next(job.fulfillments[id].status)}`);
        }
      }
    }
  }
  return conditions.join(' AND ');
};

/**
 * Writes the attributes an item lacks (`set`) and drops those it should not have, on condition that
 * it is as scanned; false when it moved meanwhile (a move made since wins: a new run sees it again).
 */
export const repairIndexes = async (item: Item, job: SyncJob | undefined, repair: IndexRepair) => {
  const expression = new Expression();
  for (const [attribute, v] of Object.entries(repair.set))
    expression.setTo(expression.name(attribute), expression.next(v));
  expression.remove(...repair.remove.map((attribute) => expression.name(attribute)));
  expression.when(asScanned(expression, item, job, repair));
  const written = await updateIf(expression.build(keyOf(item)));
  return !(written instanceof ConditionFailed);
};

/** An item of the table as the backfill's Scan reads it, whatever its kind. */
export type ScannedItem = Item;

/** One page of a consistent Scan of the whole table: the backfill's walk over every item. */
export const findScannedPage = (startKey: Item | undefined, limit?: number) => scanPage(startKey, limit);

/** The table key of a scanned item, as the backfill reports it. */
export const scannedKeyOf = (item: Item): Key => keyOf(item);
