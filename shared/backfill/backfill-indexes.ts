import { inPool } from '../core/concurrency.js';
import { findScannedPage, repairIndexes, type ScannedItem, scannedKeyOf } from '../order-flow/order-repair.js';
import {
  type BackfilledKind,
  type IndexedItem,
  type IndexRepair,
  indexedItem,
  indexRepair,
} from './index-attributes.js';

/**
 * `npm run backfill-indexes` (bin/backfill-indexes.ts): gives every sync job and audit entry of the
 * table the index attributes the current code would have given it (./index-attributes.ts), so
 * items written before an index existed are in it (docs/design.md, "Deploying the indexes"), and
 * every record at an order's first job key its entity tag (shared/order-flow/order-sync-job.ts). One Scan, one
 * conditional UpdateItem per item that lacks something; nothing but index attributes and tags is
 * written, so running it again, or while the service runs, is safe.
 */

/** An item's table key, as reported. */
type TableKey = ReturnType<typeof scannedKeyOf>;

export interface BackfillSummary {
  scanned: number;
  /** Items written (with `dryRun`: that would be), by kind (`order_item` once there is one). */
  updated: Record<Exclude<BackfilledKind, 'order_item'>, number> & { order_item?: number };
  /** Jobs and audit entries that had their index attributes already. */
  alreadyRight: number;
  /** Items of other kinds (stores, keys, order parts…): never written. */
  others: number;
  /** Items that moved between the Scan and their write: left as the move made them; a new run sees them again. */
  moved: TableKey[];
  /** Jobs or entries whose attributes could not be read: left alone. */
  unreadable: { key: TableKey; reason: string }[];
}

export interface BackfillChange {
  key: TableKey;
  kind: BackfilledKind;
  /** A job's status as scanned. */
  status?: string;
  repair: IndexRepair;
}

export interface BackfillOptions {
  /** Computes and reports the changes, writes nothing. */
  dryRun?: boolean;
  /** After each Scan page, with the figures so far (for a progress line). */
  onPage?: (summary: BackfillSummary) => void;
  /** Each item that lacks something (written, or not with `dryRun`), in no particular order. */
  onChange?: (change: BackfillChange) => void;
  /** Updates in flight at once (default 16). */
  concurrency?: number;
  /** Items per Scan page (default: DynamoDB's 1 MB pages). */
  pageSize?: number;
}

export const backfillIndexes = async (options: BackfillOptions = {}): Promise<BackfillSummary> => {
  const summary: BackfillSummary = {
    scanned: 0,
    updated: { sync_job: 0, audit_entry: 0 },
    alreadyRight: 0,
    others: 0,
    moved: [],
    unreadable: [],
  };
  const visit = async (item: ScannedItem) => {
    let indexed: IndexedItem | undefined;
    try {
      indexed = indexedItem(item);
    } catch (error) {
      summary.unreadable.push({ key: scannedKeyOf(item), reason: (error as Error).message });
      return;
    }
    if (!indexed) return void summary.others++;
    const repair = indexRepair(item, indexed.wanted);
    if (!repair) return void summary.alreadyRight++;
    if (!options.dryRun && !(await repairIndexes(item, indexed.job, repair))) {
      summary.moved.push(scannedKeyOf(item));
      return;
    }
    summary.updated[indexed.kind] = (summary.updated[indexed.kind] ?? 0) + 1;
    options.onChange?.({ key: scannedKeyOf(item), kind: indexed.kind, status: indexed.job?.status, repair });
  };

  let startKey: ScannedItem | undefined;
  do {
    // Consistent, so an item is read as its last write left it and its conditional write rarely fails.
    const page = await findScannedPage(startKey, options.pageSize);
    summary.scanned += page.items.length;
    await inPool(page.items, options.concurrency ?? 16, visit);
    options.onPage?.(summary);
    startKey = page.lastKey;
  } while (startKey);
  return summary;
};
