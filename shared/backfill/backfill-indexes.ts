import { ScanCommand, type ScanCommandOutput, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { inPool } from '../core/pool.js';
import { dynamo } from '../dynamo/client.js';
import type { Key } from '../dynamo/keys.js';
import { type Item, isConditionFailure, keyOf, TABLE } from '../dynamo/table.js';
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
 * items written before an index existed are in it (docs/design.md, "Deploying the indexes").
 * One Scan, one conditional UpdateItem per item that lacks something; nothing but index
 * attributes is written, so running it again, or while the service runs, is safe.
 */

export interface BackfillSummary {
  scanned: number;
  /** Items written (with `dryRun`: that would be), by kind. */
  updated: Record<BackfilledKind, number>;
  /** Jobs and audit entries that had their index attributes already. */
  alreadyRight: number;
  /** Items of other kinds (stores, keys, order parts…): never written. */
  others: number;
  /** Items that moved between the Scan and their write: left as the move made them; a new run sees them again. */
  moved: Key[];
  /** Jobs or entries whose attributes could not be read: left alone. */
  unreadable: { key: Key; reason: string }[];
}

export interface BackfillChange {
  key: Key;
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

/** A placeholder per attribute name and per value, so names like `status` or a fulfillment id are safe. */
class Expression {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private readonly placeholders = new Map<string, string>();

  name(attribute: string) {
    let placeholder = this.placeholders.get(attribute);
    if (!placeholder) {
      placeholder = `#a${this.placeholders.size}`;
      this.placeholders.set(attribute, placeholder);
      this.names[placeholder] = attribute;
    }
    return placeholder;
  }

  value(v: unknown) {
    const placeholder = `:v${Object.keys(this.values).length}`;
    this.values[placeholder] = v;
    return placeholder;
  }

  /** `attribute` still as read: the same value, or still absent. */
  unchanged(attribute: string, read: unknown) {
    return read === undefined
      ? `attribute_not_exists(${this.name(attribute)})`
      : `${this.name(attribute)} = ${this.value(read)}`;
  }
}

/**
 * The conditions that the item is as scanned, in everything its wanted index attributes follow
 * from: the attributes written, and for a job its status, generation and `updatedAt` (every move
 * changes them) and, once completed, the status of each fulfillment entry and their number (an
 * entry's move changes neither the job's status nor its `updatedAt`). A move made meanwhile wins.
 */
const asScanned = (expression: Expression, item: Item, indexed: IndexedItem, repair: IndexRepair) => {
  const conditions = ['attribute_exists(PK)'];
  for (const attribute of [...Object.keys(repair.set), ...repair.remove])
    conditions.push(expression.unchanged(attribute, item[attribute]));
  if (indexed.job) {
    for (const attribute of ['status', 'generation', 'updatedAt'])
      conditions.push(expression.unchanged(attribute, item[attribute]));
    if (indexed.job.status === 'completed') {
      const entries = Object.keys(indexed.job.fulfillments);
      const map = expression.name('fulfillments');
      if (!entries.length) conditions.push(`attribute_not_exists(${map})`);
      else {
        conditions.push(`size(${map}) = ${expression.value(entries.length)}`);
        for (const id of entries) {
          const status = `${map}.${expression.name(id)}.${expression.name('status')}`;
          conditions.push(`${status} = ${expression.value(indexed.job.fulfillments[id].status)}`);
        }
      }
    }
  }
  return conditions.join(' AND ');
};

const repairUpdate = (item: Item, indexed: IndexedItem, repair: IndexRepair) => {
  const expression = new Expression();
  const sets = Object.entries(repair.set).map(
    ([attribute, v]) => `${expression.name(attribute)} = ${expression.value(v)}`,
  );
  const clauses = [
    ...(sets.length ? [`SET ${sets.join(', ')}`] : []),
    ...(repair.remove.length
      ? [`REMOVE ${repair.remove.map((attribute) => expression.name(attribute)).join(', ')}`]
      : []),
  ];
  const condition = asScanned(expression, item, indexed, repair);
  return new UpdateCommand({
    TableName: TABLE(),
    Key: keyOf(item),
    UpdateExpression: clauses.join(' '),
    ConditionExpression: condition,
    ExpressionAttributeNames: expression.names,
    ExpressionAttributeValues: expression.values,
  });
};

export const backfillIndexes = async (options: BackfillOptions = {}): Promise<BackfillSummary> => {
  const summary: BackfillSummary = {
    scanned: 0,
    updated: { sync_job: 0, audit_entry: 0 },
    alreadyRight: 0,
    others: 0,
    moved: [],
    unreadable: [],
  };
  const visit = async (item: Item) => {
    let indexed: IndexedItem | undefined;
    try {
      indexed = indexedItem(item);
    } catch (error) {
      summary.unreadable.push({ key: keyOf(item), reason: (error as Error).message });
      return;
    }
    if (!indexed) return void summary.others++;
    const repair = indexRepair(item, indexed.wanted);
    if (!repair) return void summary.alreadyRight++;
    if (!options.dryRun) {
      try {
        await dynamo.send(repairUpdate(item, indexed, repair));
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        summary.moved.push(keyOf(item));
        return;
      }
    }
    summary.updated[indexed.kind]++;
    options.onChange?.({ key: keyOf(item), kind: indexed.kind, status: indexed.job?.status, repair });
  };

  let startKey: Item | undefined;
  do {
    // Consistent, so an item is read as its last write left it and its conditional write rarely fails.
    const page: ScanCommandOutput = await dynamo.send(
      new ScanCommand({
        TableName: TABLE(),
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
        Limit: options.pageSize,
      }),
    );
    const items = page.Items ?? [];
    summary.scanned += items.length;
    await inPool(items, options.concurrency ?? 16, visit);
    options.onPage?.(summary);
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return summary;
};
