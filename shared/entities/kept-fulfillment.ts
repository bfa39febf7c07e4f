import type { CarrierReport } from '../domain/shipping.js';
import { type Key, keys } from '../dynamo/keys.js';
import {
  attributes,
  deleteItem,
  getItem,
  type Item,
  putIf,
  queryPartition,
  recordShape,
  updateIf,
} from '../dynamo/table.js';
import type { Tracking } from '../platforms/port.js';

/** A source fulfillment as its supplier's webhook (`fulfillments/create` or `/update`) tells it. */
export interface SourceFulfillment {
  sourceFulfillmentId: string;
  sourceOrderId: string;
  tracking: Tracking;
  /** The supplier's line items it names (CONTRACT.md §10.2); null: every item of the job not yet fulfilled. */
  lines: Array<{ id: string; quantity: number }> | null;
  /** The supplier voided the parcel (`status: cancelled`). */
  cancelled: boolean;
  /** The payload's `updated_at` (its versions apply in this order); null when absent. */
  updatedAt: string | null;
  /** The payload's `created_at`, the platform's time of the parcel (CONTRACT.md §16.2); absent: not given. */
  createdAt?: string | null;
  /** Its `shipment_status` (CONTRACT.md §16.2), with the payload's time; absent: none reported. */
  report?: CarrierReport | null;
}

/**
 * The kept fulfillment entity (docs/propagation.md): a source fulfillment that matched no job yet,
 * kept (with a TTL) under its supplier order until the job that placed that order records its id.
 */
export interface KeptFulfillment extends SourceFulfillment {
  sourceStoreId: string;
  receivedAt: string;
  /** Epoch seconds: the table's TTL attribute. */
  expiresAt: number;
}

/** Every kept fulfillment of a supplier order: one partition, one sort-key prefix. */
export const keptFulfillmentsOf = (sourceStoreId: string, sourceOrderId: string) =>
  keys.keptFulfillmentPrefix(sourceStoreId, sourceOrderId);

export const keptFulfillmentKey = (
  kept: Pick<KeptFulfillment, 'sourceStoreId' | 'sourceOrderId' | 'sourceFulfillmentId'>,
) => keys.keptFulfillment(kept.sourceStoreId, kept.sourceOrderId, kept.sourceFulfillmentId);

/** What every kept fulfillment's item holds under the record's names; the rest is written only when present. */
const shape = recordShape<
  Pick<
    KeptFulfillment,
    'sourceStoreId' | 'sourceOrderId' | 'sourceFulfillmentId' | 'tracking' | 'receivedAt' | 'expiresAt'
  >
>()('kept fulfillment', {
  strings: ['sourceStoreId', 'sourceOrderId', 'sourceFulfillmentId', 'receivedAt'],
  objects: ['tracking'],
  numbers: ['expiresAt'],
});

export const keptFulfillmentItem = (kept: KeptFulfillment): Item => ({
  ...keptFulfillmentKey(kept),
  ...shape.fields(kept),
  ...(kept.lines ? { lines: kept.lines } : {}),
  ...(kept.cancelled ? { cancelled: true } : {}),
  ...(kept.updatedAt ? { sourceUpdatedAt: kept.updatedAt } : {}),
  ...(kept.createdAt ? { sourceCreatedAt: kept.createdAt } : {}),
  ...(kept.report ? { report: kept.report } : {}),
});

export const keptFulfillmentFrom = (item: Item): KeptFulfillment => {
  const read = attributes(item, 'kept fulfillment');
  return {
    ...shape.from(item),
    lines: read.optionalObject<Array<{ id: string; quantity: number }>>('lines') ?? null,
    cancelled: item.cancelled === true,
    updatedAt: read.stringOrNull('sourceUpdatedAt'),
    createdAt: read.stringOrNull('sourceCreatedAt'),
    report: read.optionalObject<CarrierReport>('report') ?? null,
  };
};

// ---------- reads and writes of the kept fulfillments

/** Keeps a fulfillment (an update replaces the version kept, unless it is older); false when it was older. */
export const keepUnlessOlder = async (kept: KeptFulfillment) =>
  (await (kept.updatedAt
    ? putIf(keptFulfillmentItem(kept), 'attribute_not_exists(sourceUpdatedAt) OR sourceUpdatedAt <= :updatedAt', {
        ':updatedAt': kept.updatedAt,
      })
    : putIf(keptFulfillmentItem(kept), null))) === true;

/** The fulfillments kept for a supplier order, read consistently, unexpired. */
export const keptFor = async (sourceStoreId: string, sourceOrderId: string) => {
  const prefix = keptFulfillmentsOf(sourceStoreId, sourceOrderId);
  const kept = (await queryPartition(prefix.PK, prefix.SKPrefix)).map(keptFulfillmentFrom);
  // TTL deletes lazily (up to days late), so an expired item is treated as gone.
  const nowSeconds = Math.floor(Date.now() / 1000);
  return kept.filter((item) => item.expiresAt > nowSeconds);
};

/** A kept fulfillment released (or taken by its recheck). */
export const deleteKept = (key: Key) => deleteItem(key);

/** A kept fulfillment, read consistently; undefined when gone (released meanwhile). */
export const readKept = (key: Key) => getItem(key, keptFulfillmentFrom, true);

// ---------- a carrier's reports on a parcel not known yet (CONTRACT.md §16.2)

/**
 * Keeps a carrier's report (`fulfillment_events/create`) on a parcel no job has an entry for yet (the
 * event came before the parcel's own webhook, or before the job recorded its supplier order): appended
 * to the parcel's kept reports, kept `seconds`. Applying them is idempotent (a status never moves back,
 * the first scan is the earliest), so they are left to expire rather than deleted.
 */
export const keepCarrierReport = async (
  parcel: { sourceStoreId: string; sourceOrderId: string; sourceFulfillmentId: string },
  report: CarrierReport,
  seconds: number,
) => {
  await updateIf({
    Key: keys.keptCarrierReports(parcel.sourceStoreId, parcel.sourceOrderId, parcel.sourceFulfillmentId),
    UpdateExpression: 'SET #reports = list_append(if_not_exists(#reports, :none), :report), #expiresAt = :expiresAt',
    ExpressionAttributeNames: { '#reports': 'reports', '#expiresAt': 'expiresAt' },
    ExpressionAttributeValues: {
      ':none': [],
      ':report': [{ status: report.status, at: report.at }],
      ':expiresAt': Math.floor(Date.now() / 1000) + seconds,
    },
  });
};

/** The reports kept for a parcel, read consistently, unexpired; none when nothing is kept. */
export const keptCarrierReports = async (
  sourceStoreId: string,
  sourceOrderId: string,
  sourceFulfillmentId: string,
): Promise<CarrierReport[]> => {
  const item = await getItem(
    keys.keptCarrierReports(sourceStoreId, sourceOrderId, sourceFulfillmentId),
    (found) => found,
    true,
  );
  if (!item || Number(item.expiresAt) <= Math.floor(Date.now() / 1000)) return [];
  return (Array.isArray(item.reports) ? item.reports : []) as CarrierReport[];
};
