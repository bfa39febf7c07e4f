import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import { syncJobId } from '../core/ids.js';
import { type JsonText, type OrderReading, type ResellerLineItem, readResellerOrder } from '../domain/orders.js';
import { itemsOfVendorTag } from '../domain/routing.js';
import { keys } from '../dynamo/keys.js';
import { type Item, queryPartition } from '../dynamo/table.js';
import { entityTagOf } from './order-item-kind.js';
import type { StoredOrder, SyncJob } from './order-sync-job.js';

/**
 * The order body entity: how an accepted order is kept (docs/hostile-input.md, "Storing an
 * order"): the raw webhook body, exactly the bytes that were signed, brotli-compressed into binary
 * attributes. Any valid JSON up
 * to 1 MiB fits (exact numbers, any depth, any keys), where a DynamoDB map could not hold a number
 * past 38 digits, 32 levels of nesting, or an empty key in older SDKs.
 *
 * A small body (the usual order) sits inline on each job's item, which stays under 1 KB and so costs
 * one write unit per update. A larger one is stored once, in parts of at most PART_BYTES beside the
 * order's first job, because every later update of a job is billed by the job item's size.
 */

/** Each part's bytes: the 400 KB item limit with room for the key and attribute names. */
export const PART_BYTES = 350_000;

/**
 * The size a new job item may reach with the body inline; above it the body goes to parts. Completion
 * adds about 110 bytes (the supplier order id, its lookup keys, the time, the attempt's history entry,
 * less the open-jobs index keys and `openPK` it removes), so a job stays within 1 KB: one write unit
 * per update.
 */
export const INLINE_ITEM_BUDGET = 880;

/**
 * Quality 11 is the densest, which the job item's size needs (docs/performance.md, "Where an order's
 * time goes": quality 5 would save the webhook 5–12 ms of CPU per order, but its 22 more bytes put the
 * benchmark's completed job past 1 KB, a write unit more on one of its later updates); on 1 MiB it takes
 * seconds, where 5 takes ms.
 */
const quality = (bytes: number) => (bytes <= 64 * 1024 ? 11 : 5);
/** Brotli's window: 2^n − 16 bytes, n from 10 to 24; the smallest that holds the body allocates least. */
const windowBits = (bytes: number) => Math.min(24, Math.max(10, Math.ceil(Math.log2(bytes + 16))));

export const compressBody = (raw: Buffer): Buffer =>
  brotliCompressSync(raw, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: quality(raw.length),
      [constants.BROTLI_PARAM_LGWIN]: windowBits(raw.length),
      [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    },
  });

export const decompressBody = (compressed: Uint8Array): string => brotliDecompressSync(compressed).toString('utf8');

export const splitParts = (compressed: Buffer): Buffer[] => {
  const parts: Buffer[] = [];
  for (let at = 0; at < compressed.length; at += PART_BYTES) parts.push(compressed.subarray(at, at + PART_BYTES));
  return parts.length ? parts : [compressed];
};

/** An order's body as stored: inline, or the number of its parts, and the parts' bytes. */
export interface BodyStorage {
  order: { body: Uint8Array } | { parts: number };
  parts: Buffer[];
}

/**
 * Where an order's body is stored: the one rule of every writer (a new order's jobs, an unrouted
 * order's record, a redaction). Inline while the record that carries it stays within `budget`
 * (`inlineBytes`: that record's size with the body inline; by default the body's own bytes), else in
 * parts of PART_BYTES beside the first job. A job's item is rewritten by each of its moves, billed by
 * the KB: its budget is INLINE_ITEM_BUDGET. A record written once (an unrouted order's, a redacted
 * body's) has a part's: PART_BYTES.
 */
export const bodyStorage = (
  compressed: Buffer,
  budget = PART_BYTES,
  inlineBytes: (inline: { body: Uint8Array }) => number = () => compressed.length,
): BodyStorage => {
  if (inlineBytes({ body: compressed }) <= budget) return { order: { body: compressed }, parts: [] };
  const parts = splitParts(compressed);
  return { order: { parts: parts.length }, parts };
};

/**
 * A part's item. `expiresAt` (the table's TTL, epoch seconds): an unrouted order's parts are written with the
 * record's (order-unrouted.ts); a routed order's get theirs from the retention sweep once its jobs ended
 * (order-redaction.ts `expireOrderItems`).
 */
export const orderBodyPartItem = (firstJobId: string, n: number, bytes: Buffer, expiresAt?: number): Item => ({
  ...keys.orderBodyPart(firstJobId, n),
  ...entityTagOf('bodyPart'),
  body: bytes,
  ...(expiresAt === undefined ? {} : { expiresAt }),
});

/** The items of a body's parts (`bodyStorage`), each with `expiresAt` when given. */
export const bodyPartItems = (firstJobId: string, parts: Buffer[], expiresAt?: number) =>
  parts.map((bytes, n) => orderBodyPartItem(firstJobId, n, bytes, expiresAt));

/**
 * The compressed body from its parts, all in one consistent Query of the order's partition (the
 * worker may run right after the write).
 */
export const readBodyParts = async (firstJobId: string, parts: number): Promise<Buffer> => {
  const { PK, SKPrefix } = keys.orderBodyParts(firstJobId);
  const found = new Map((await queryPartition(PK, SKPrefix)).map((item) => [String(item.SK), item.body]));
  return Buffer.concat(
    Array.from({ length: parts }, (_, n) => {
      const body = found.get(keys.orderBodyPart(firstJobId, n).SK);
      if (!(body instanceof Uint8Array)) throw new Error(`order body part ${n} of ${firstJobId} is missing`);
      return body;
    }),
  );
};

/**
 * An item's size as DynamoDB bills it, closely enough to choose between inline and parts: each
 * attribute's name and value in bytes (a number counts its digits, a map or list its contents
 * plus a few bytes of overhead).
 */
export const itemSize = (item: Item): number =>
  Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueSize(value), 0);

const valueSize = (value: unknown): number => {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return Math.ceil(String(value).replace(/[-.e+]/g, '').length / 2) + 1;
  if (value instanceof Uint8Array) return value.length;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + valueSize(v), 0);
  if (typeof value === 'object') return 3 + itemSize(value as Record<string, unknown>) + Object.keys(value).length;
  return 0;
};

/**
 * An order no retry can place: its currency has no exponent in the ISO 4217 table, or what is
 * stored cannot be read. The worker makes the job `dead` at once with this message as the reason.
 */
export class UnplaceableOrderError extends Error {
  override readonly name = 'UnplaceableOrderError';
}

/** The reseller order's raw JSON, however the job keeps it. */
export const orderText = (job: SyncJob): Promise<string> =>
  storedOrderText(job.order, firstJobIdOf(job), job.externalOrderId);

const firstJobIdOf = (job: Pick<SyncJob, 'resellerStoreId' | 'externalOrderId'>) =>
  syncJobId(job.resellerStoreId, job.externalOrderId, 0);

/**
 * The reseller order's raw JSON, however its record keeps it: inline, in parts beside its first
 * job, or (a job written by older code) as a map of the job's own items, which the same reading takes.
 */
export const storedOrderText = async (
  order: StoredOrder | null,
  firstJobId: string,
  externalOrderId: string,
): Promise<string> => {
  if (!order) throw new UnplaceableOrderError('the job holds no order to place');
  if ('body' in order) return decompressBody(order.body);
  if ('parts' in order) return decompressBody(await readBodyParts(firstJobId, order.parts));
  return JSON.stringify({ id: externalOrderId, ...order.legacy });
};

// ---------- the stored order, parsed once

/** Readings kept: an invocation reads one order (a poll, a batch of messages: a few). */
const KEPT_READINGS = 16;
const readings = new Map<string, Promise<OrderReading | undefined>>();

/**
 * The stored order, read (decompressed, its parts fetched) and parsed once per invocation for every
 * leg that needs it (its lines, the supplier order, an edit's comparison, the unrouted items). A
 * stored order is written once with its record and changed only by its redaction, which may write
 * the redacted body over the same number of parts: a reading is kept under the record's `redactedAt`
 * too, so once a record says it was redacted no environment answers the reading from before.
 * Undefined when nothing readable is stored (`UnplaceableOrderError`: no order).
 */
export const storedOrderReading = (
  order: StoredOrder | null,
  firstJobId: string,
  externalOrderId: string,
  /** The body's parts when the caller read them with the order's record (order-repository.ts `loadOrderPartition`). */
  parts?: Buffer,
  /** When the record says its order was redacted (`redactedAt`); absent: never. */
  redactedAt?: string | null,
): Promise<OrderReading | undefined> => {
  if (!order) return Promise.resolve(undefined);
  // An inline body (or an older map) is its own key; parts are the order's, written once.
  const form =
    'body' in order
      ? Buffer.from(order.body).toString('base64')
      : 'parts' in order
        ? `parts ${order.parts}`
        : JSON.stringify(order.legacy);
  const key = `${firstJobId}|${redactedAt ?? 'as received'}|${form}`;
  const kept = readings.get(key);
  if (kept) return kept;
  const text =
    parts && 'parts' in order
      ? Promise.resolve(decompressBody(parts))
      : storedOrderText(order, firstJobId, externalOrderId);
  const reading = text.then(readResellerOrder);
  readings.set(key, reading);
  // A failed read is not kept: the next leg tries again.
  reading.catch(() => readings.delete(key));
  const oldest = readings.keys().next();
  if (readings.size > KEPT_READINGS && !oldest.done) readings.delete(oldest.value);
  return reading;
};

/** The job's order, parsed once (`storedOrderReading`). */
export const jobOrderReading = (job: SyncJob) =>
  storedOrderReading(job.order, firstJobIdOf(job), job.externalOrderId, undefined, job.redactedAt);

/** One reseller line item a job carries, as the stored order and the placed order tell it (CONTRACT.md §10.1). */
export interface JobLine {
  resellerLineItemId: string | null;
  sourceLineItemId: string | null;
  sku: string | null;
  title: string | null;
  variantTitle: string | null;
  quantity: number;
  /** The reseller's unit price; `sourcePrice`: the supplier's, once placed (the markup removed). */
  price: string;
  sourcePrice: string | null;
}

/** A text field as sent: its string, or null for anything else (a number, an object, null). */
export const textOf = (value: JsonText | null): string | null => {
  if (value === null) return null;
  try {
    const parsed: unknown = JSON.parse(value.text);
    return typeof parsed === 'string' ? parsed : null;
  } catch {
    return null;
  }
};

/**
 * The stored order's line items the job carries (those whose vendor is its vendor tag), read exactly as the
 * webhook read them; undefined when the stored order cannot be read. What every view of a job's
 * lines starts from: its lines as shown, as a lookup compares them, as a parcel ships them.
 */
export const jobItems = async (job: SyncJob): Promise<ResellerLineItem[] | undefined> => {
  const reading = await jobOrderReading(job);
  return reading?.ok ? itemsOfVendorTag(reading.order.lineItems, job.vendorTag) : undefined;
};

/**
 * The reseller line items a job carries, in order, derived from the stored order (its lines whose
 * vendor is the job's tag) and the job's `sourceLines`; undefined when the stored order cannot be
 * read. Nothing of this is stored per line but the supplier's id and price: the job item stays small.
 */
export const jobLines = async (job: SyncJob): Promise<JobLine[] | undefined> =>
  (await jobItems(job))?.map((line, i) => ({
    resellerLineItemId: line.id,
    sourceLineItemId: job.sourceLines?.[i]?.id ?? null,
    sku: textOf(line.sku),
    title: textOf(line.title),
    variantTitle: textOf(line.variantTitle),
    quantity: line.quantity,
    price: line.price,
    sourcePrice: job.sourceLines?.[i]?.price ?? null,
  }));
