import * as v from 'valibot';
import { parseInput, ValidationError } from '../core/errors.js';
import { syncJobId } from '../core/ids.js';
import { logger } from '../core/telemetry.js';
import type { StoreOnShop } from '../entities/store.js';
import type { ApprovedReturn, Refund } from './order-after-sale.js';

export type { ApprovedReturn, Refund };

import type { EarlyAfterSale } from './order-items.js';
import { keepEarlyAfterSale } from './order-repository.js';
import {
  approveReturn,
  cancelResellerReturn,
  endSourceReturn,
  refundBySource,
  refundResellerOrder,
} from './refunding.js';

/**
 * What the six topics of CONTRACT.md §15 carry that the service reads; the rest (a return's
 * `customer`, a refund's transactions) is never kept or logged. Ids become strings with every digit
 * (the body is read with exact integers, §5).
 */

const Id = v.pipe(
  v.union(
    [v.pipe(v.number(), v.integer(), v.minValue(0)), v.pipe(v.string(), v.minLength(1), v.maxLength(100))],
    'must be an id, a number or a string',
  ),
  v.transform(String),
);
const Quantity = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1_000_000));
const Text = v.pipe(v.string(), v.maxLength(2000));

const Money = v.optional(
  v.nullable(
    v.looseObject({
      shop_money: v.optional(
        v.nullable(
          v.looseObject({
            amount: v.optional(v.nullable(v.union([Text, v.number()]))),
            currency_code: v.optional(v.nullable(Text)),
          }),
        ),
      ),
    }),
  ),
);

const RefundLine = v.looseObject({
  line_item_id: Id,
  quantity: Quantity,
  restock_type: v.optional(v.nullable(Text)),
  subtotal_set: Money,
});

/** `refunds/create`, from either kind of store. */
export const RefundPayload = v.looseObject({
  id: Id,
  order_id: Id,
  created_at: v.optional(v.nullable(Text)),
  refund_line_items: v.optional(v.nullable(v.pipe(v.array(RefundLine), v.maxLength(1000)))),
  refund_shipping_lines: v.optional(
    v.nullable(v.pipe(v.array(v.looseObject({ subtotal_amount_set: Money })), v.maxLength(100))),
  ),
  return: v.optional(v.nullable(v.looseObject({ id: Id }))),
});

const moneyOf = (money: v.InferOutput<typeof Money>) => {
  const shop = money?.shop_money;
  const amount = shop?.amount;
  return {
    amount: amount === undefined || amount === null ? null : String(amount),
    currency: shop?.currency_code ?? null,
  };
};

export const parseRefund = (payload: unknown): Refund => {
  const refund = parseInput(RefundPayload, payload);
  const lines = refund.refund_line_items ?? [];
  const monies = [
    ...lines.map((line) => moneyOf(line.subtotal_set)),
    ...(refund.refund_shipping_lines ?? []).map((line) => moneyOf(line.subtotal_amount_set)),
  ];
  return {
    id: refund.id,
    orderId: refund.order_id,
    createdAt: refund.created_at ?? new Date().toISOString(),
    returnId: refund.return?.id ?? null,
    lines: lines.map((line) => ({
      lineItemId: line.line_item_id,
      quantity: line.quantity,
      restockType: (line.restock_type ?? 'no_restock').toLowerCase(),
    })),
    amounts: monies.flatMap((money) => (money.amount === null ? [] : [money.amount])),
    currency: monies.find((money) => money.currency !== null)?.currency ?? null,
  };
};

/** `returns/approve`, from a reseller store. */
export const ReturnApprovedPayload = v.looseObject({
  id: Id,
  order: v.optional(v.nullable(v.looseObject({ id: Id }))),
  order_id: v.optional(v.nullable(Id)),
  return_line_items: v.pipe(
    v.array(
      v.looseObject({
        fulfillment_line_item: v.optional(
          v.nullable(v.looseObject({ line_item: v.optional(v.nullable(v.looseObject({ id: Id }))) })),
        ),
        line_item_id: v.optional(v.nullable(Id)),
        quantity: Quantity,
        return_reason: v.optional(v.nullable(Text)),
      }),
    ),
    v.maxLength(1000),
  ),
});

export const parseApprovedReturn = (payload: unknown): ApprovedReturn => {
  const approved = parseInput(ReturnApprovedPayload, payload);
  const orderId = approved.order?.id ?? approved.order_id;
  if (orderId === undefined || orderId === null) throw new ValidationError('order.id is required', 'order.id');
  return {
    id: approved.id,
    orderId,
    lines: approved.return_line_items.flatMap((line) => {
      const lineItemId = line.fulfillment_line_item?.line_item?.id ?? line.line_item_id;
      if (lineItemId === undefined || lineItemId === null) return [];
      return [{ lineItemId, quantity: line.quantity, reason: (line.return_reason ?? 'unknown').toLowerCase() }];
    }),
  };
};

/** `returns/cancel` and `returns/close`, from either kind of store. */
export const ReturnEndedPayload = v.looseObject({
  id: Id,
  order_id: v.optional(v.nullable(Id)),
  order: v.optional(v.nullable(v.looseObject({ id: Id }))),
  admin_graphql_api_id: v.optional(v.nullable(Text)),
});

export interface EndedReturn {
  id: string;
  orderId: string | null;
}

export const parseEndedReturn = (payload: unknown): EndedReturn => {
  const ended = parseInput(ReturnEndedPayload, payload);
  return { id: ended.id, orderId: ended.order_id ?? ended.order?.id ?? null };
};

/** The six topics of CONTRACT.md §15 on the orders webhook. */
export const AFTER_SALE_TOPICS = ['refunds/create', 'returns/approve', 'returns/cancel', 'returns/close'] as const;
export type AfterSaleTopic = (typeof AFTER_SALE_TOPICS)[number];

interface VerifiedStores {
  resellerStores: StoreOnShop[];
  sourceStores: StoreOnShop[];
}

/** The first reseller store (of those whose secret verified) that has the order takes it. */
const firstReseller = async (
  stores: StoreOnShop[],
  take: (store: StoreOnShop) => Promise<string[] | undefined>,
): Promise<string[] | undefined> => {
  for (const store of stores) {
    const ids = await take(store);
    if (ids !== undefined) return ids;
  }
  return undefined;
};

/**
 * A verified webhook call of one of §15's topics (CONTRACT.md §15): parsed (a malformed one is a 400
 * that changes nothing), then taken by the reseller store that has the order, else by the source
 * stores whose supplier order it is; a topic of the other kind of store changes nothing. Answers the
 * ids of the jobs it concerns. Writes only: every platform call is the sync worker's.
 */
export const acceptAfterSale = async (
  topic: AfterSaleTopic,
  stores: VerifiedStores,
  payload: unknown,
  requestId?: string,
): Promise<string[]> => {
  const { resellerStores, sourceStores } = stores;
  if (topic === 'refunds/create') {
    const refund = parseRefund(payload);
    const ids = await firstReseller(resellerStores, (store) => refundResellerOrder(store, refund, requestId));
    const bySource = ids ?? (sourceStores.length ? await refundBySource(sourceStores, refund) : []);
    if (ids !== undefined || bySource.length || !resellerStores.length) return bySource;
    return keepEarly(resellerStores[0], refund.orderId, { refund }, requestId);
  }
  if (topic === 'returns/approve') {
    const approved = parseApprovedReturn(payload);
    const ids = await firstReseller(resellerStores, (store) => approveReturn(store, approved, requestId));
    if (ids !== undefined || !resellerStores.length) return ids ?? [];
    return keepEarly(resellerStores[0], approved.orderId, { approved }, requestId);
  }
  const ended = parseEndedReturn(payload);
  if (topic === 'returns/close') return sourceStores.length ? endSourceReturn(sourceStores, ended, 'closed') : [];
  const ids = await firstReseller(resellerStores, (store) => cancelResellerReturn(store, ended, requestId));
  return ids ?? (sourceStores.length ? endSourceReturn(sourceStores, ended, 'cancelled') : []);
};

/** One refund or return taken as if it came now: answers the ids of the jobs, undefined for an order not known. */
const takeOne = (reseller: { id: string }, entry: EarlyAfterSale, requestId?: string) =>
  'refund' in entry
    ? refundResellerOrder(reseller, entry.refund, requestId)
    : approveReturn(reseller, entry.approved, requestId);

/**
 * A reseller refund or return of an order not known yet (CONTRACT.md §15, "kept when early"): kept
 * at the order's first job key for its create (order-items.ts); an order that arrived
 * meanwhile takes it now, a cancellation that came first leaves nothing to refund.
 */
const keepEarly = async (
  reseller: { id: string },
  orderId: string,
  entry: EarlyAfterSale,
  requestId?: string,
): Promise<string[]> => {
  const written = await keepEarlyAfterSale(syncJobId(reseller.id, orderId, 0), entry);
  if (written === true) {
    logger.info('refund or return of an order not received yet: kept for its create');
    return [];
  }
  return written.met?.kind === 'job' ? ((await takeOne(reseller, entry, requestId)) ?? []) : [];
};

/** The refunds and returns kept for an order its create just wrote, taken in the order they came. */
export const takeKeptAfterSale = async (reseller: { id: string }, kept: EarlyAfterSale[], requestId?: string) => {
  for (const entry of kept) await takeOne(reseller, entry, requestId);
};
