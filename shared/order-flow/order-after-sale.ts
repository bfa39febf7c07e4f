import { currencyExponent, formatMinorUnits, toMinorUnits } from '../domain/money.js';

const minor = (amount: string, currency: string) => toMinorUnits(amount, currencyExponent(currency));
const formatted = (units: bigint, currency: string) => formatMinorUnits(units, currencyExponent(currency));

/**
 * What happened to a job after the sale (CONTRACT.md §15): the reseller's refunds of its lines, the
 * units taken off its supplier order, its returns on the supplier and the supplier's refunds. No
 * item of its own: the job item carries it (`afterSale`), absent until the first refund or return
 * of the job, so an order's path writes not one byte more. Every write of it is conditional on the
 * version read (`v`). Personal data never enters it: a return keeps ids, quantities and reasons.
 */

/** Per reseller line: units refunded (any restock type), those to leave the supplier order, those that left. */
export interface LineAfterSale {
  refunded: number;
  /** Units refunded with `restock_type` cancel: what the supplier order should no longer carry. */
  cut: number;
  /** Units that left the supplier order, or were never placed because the refund came first. */
  removed: number;
}

/** Units to take off a placed supplier order (CONTRACT.md §15.1): requested at a version, done or refused. */
export interface Removal {
  status: 'requested' | 'done' | 'refused';
  /** The version of `cut` it carries: an edit sent at an older one is sent again. */
  at: number;
  requestedAt: string;
  endedAt: string | null;
}

export const RETURN_STATUSES = ['pending', 'open', 'closed', 'cancelled', 'failed'] as const;
export type ReturnStatus = (typeof RETURN_STATUSES)[number];

export interface ReturnLine {
  resellerLineItemId: string;
  sourceLineItemId: string | null;
  quantity: number;
  reason: string;
}

/** A refund as the service keeps it: lines, their restock types, the amount of lines and shipping. */
export interface Refund {
  id: string;
  orderId: string;
  createdAt: string;
  returnId: string | null;
  lines: Array<{ lineItemId: string; quantity: number; restockType: string }>;
  /** Lines' and shipping's `shop_money` summed as text amounts; null when none was given. */
  amounts: string[];
  currency: string | null;
}

/** A reseller's approved return as its webhook or the poll tells it. */
export interface ApprovedReturn {
  id: string;
  orderId: string;
  lines: Array<{ lineItemId: string; quantity: number; reason: string }>;
}

/** One return on the supplier, for one reseller return (CONTRACT.md §15.2). */
export interface JobReturn {
  id: string;
  resellerReturnId: string;
  sourceReturnId: string | null;
  status: ReturnStatus;
  lines: ReturnLine[];
  error: string | null;
  /** When a create was last sent: a platform without keys looks the return up before sending it again. */
  sentAt: string | null;
  /**
   * The message (its SQS id) that sent it, where the platform takes no key: another message leaves the
   * create to that one while `sentAt` is within the lease (refunding.ts `claimSend`).
   */
  sentBy?: string;
  /** The reseller cancelled it: the worker cancels it on the supplier. */
  cancelRequested?: boolean;
  openedAt: string | null;
  closedAt: string | null;
}

export interface SourceRefund {
  id: string;
  amount: string;
  currency: string;
  returnId: string | null;
  lines: Array<{ sourceLineItemId: string; quantity: number }>;
  createdAt: string;
}

/** A reseller refund as the order view shows it (kept on the order's first job). */
export interface OrderRefund {
  id: string;
  createdAt: string;
  lines: Array<{ resellerLineItemId: string; quantity: number; restockType: string }>;
  amount: string | null;
  currency: string | null;
}

export interface AfterSale {
  v: number;
  /** When it was last written (our clock): the time of the events its change reports. */
  at?: string;
  /** The reseller order's currency: the credit's. */
  currency?: string;
  /** The reseller refunds and returns this job has taken (each once, however it came). */
  seen: string[];
  lines: Record<string, LineAfterSale>;
  removal: Removal | null;
  returns: JobReturn[];
  sourceRefunds: SourceRefund[];
  /** Whether the job is in the lists of jobs owed credit (its closed returns' value above what was refunded). */
  creditDue?: boolean;
  /** On an order's first job: every refund of the order, for its view. */
  orderRefunds?: OrderRefund[];
}

/** The job item's attribute. */
export const AFTER_SALE = 'afterSale';

export const emptyAfterSale = (): AfterSale => ({
  v: 0,
  seen: [],
  lines: {},
  removal: null,
  returns: [],
  sourceRefunds: [],
});

/**
 * Stored names: every byte of the job item is paid again by each of its writes, and a job with
 * `afterSale` past 1 KB more costs a unit more per write. Two letters a name (none of digits, as a
 * line id is), and no null stored: reading restores them. `v` keeps its name (writes are
 * conditional on it).
 */
const STORED_NAMES: Record<string, string> = {
  at: 'at',
  currency: 'cu',
  seen: 'se',
  lines: 'li',
  removal: 'rm',
  returns: 'rt',
  sourceRefunds: 'sr',
  creditDue: 'cd',
  orderRefunds: 'or',
  refunded: 'rf',
  cut: 'ct',
  removed: 'rd',
  status: 'st',
  requestedAt: 'ra',
  endedAt: 'ea',
  id: 'id',
  resellerReturnId: 'rr',
  sourceReturnId: 'sx',
  error: 'er',
  sentAt: 'sa',
  sentBy: 'sb',
  cancelRequested: 'cr',
  openedAt: 'oa',
  closedAt: 'ca',
  resellerLineItemId: 'rl',
  sourceLineItemId: 'sl',
  quantity: 'qt',
  reason: 'rs',
  amount: 'am',
  returnId: 'ri',
  createdAt: 'cA',
  restockType: 'ty',
};
const LONG_NAMES = Object.fromEntries(Object.entries(STORED_NAMES).map(([long, short]) => [short, long]));

const renamed = (value: unknown, names: Record<string, string>): unknown => {
  if (Array.isArray(value)) return value.map((entry) => renamed(entry, names));
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, entry]) => entry !== null && entry !== undefined)
      .map(([name, entry]) => [names[name] ?? name, renamed(entry, names)]),
  );
};

/** The job item's `afterSale` attribute: the record under its stored names. */
export const afterSaleAttribute = (afterSale: AfterSale): Record<string, unknown> =>
  renamed(afterSale, STORED_NAMES) as Record<string, unknown>;

type Loose<T> = { [K in keyof T]?: T[K] };
const withNulls = <T>(value: Loose<T>, nullable: ReadonlyArray<keyof T>): T =>
  ({ ...Object.fromEntries(nullable.map((name) => [name, null])), ...value }) as T;

const returnFrom = (r: Loose<JobReturn>): JobReturn => ({
  ...withNulls(r, ['sourceReturnId', 'error', 'sentAt', 'openedAt', 'closedAt']),
  lines: (r.lines ?? []).map((line) => withNulls(line, ['sourceLineItemId'])),
});

export const afterSaleFrom = (value: unknown): AfterSale | null => {
  if (!value || typeof value !== 'object') return null;
  const read = { ...emptyAfterSale(), ...(renamed(value, LONG_NAMES) as Partial<AfterSale>) };
  return {
    ...read,
    removal: read.removal ? withNulls(read.removal, ['endedAt']) : null,
    returns: read.returns.map(returnFrom),
    sourceRefunds: read.sourceRefunds.map((refund) => withNulls(refund, ['returnId'])),
    ...(read.orderRefunds
      ? { orderRefunds: read.orderRefunds.map((refund) => withNulls(refund, ['amount', 'currency'])) }
      : {}),
  };
};

export const lineAfterSale = (afterSale: AfterSale | null, lineId: string | null): LineAfterSale =>
  (lineId !== null && afterSale?.lines[lineId]) || { refunded: 0, cut: 0, removed: 0 };

/** Whether a return still counts (its units owed back): not `cancelled` nor `failed`. */
export const isLiveReturn = (r: JobReturn) => r.status !== 'cancelled' && r.status !== 'failed';

/** Units of a reseller line in the job's live returns. */
export const returnedQuantity = (afterSale: AfterSale | null, lineId: string | null) =>
  (afterSale?.returns ?? [])
    .filter(isLiveReturn)
    .flatMap((r) => r.lines)
    .filter((line) => line.resellerLineItemId === lineId)
    .reduce((sum, line) => sum + line.quantity, 0);

/** A placed job whose supplier order still has units to lose, or a return to open or cancel. */
export const afterSaleWorkPending = (afterSale: AfterSale | null) =>
  !!afterSale &&
  (afterSale.removal?.status === 'requested' ||
    afterSale.returns.some((r) => r.status === 'pending' || (r.cancelRequested && r.status === 'open')));

/** The wholesale value of returns in `statuses`, from each line's supplier price (none: nothing). */
const returnsValue = (
  afterSale: AfterSale,
  priceOf: (resellerLineItemId: string) => string | null,
  statuses: ReturnStatus[],
  currency: string,
) => {
  let total = 0n;
  for (const r of afterSale.returns.filter((entry) => statuses.includes(entry.status))) {
    for (const line of r.lines) {
      const price = priceOf(line.resellerLineItemId);
      if (price !== null) total += minor(price, currency) * BigInt(line.quantity);
    }
  }
  return total;
};

export interface Credit {
  currency: string;
  expected: string;
  refunded: string;
}

/**
 * CONTRACT.md §15.3's credit: `expected`, the wholesale value of the units in returns `open` or
 * `closed`; `refunded`, the supplier's refunds in the order's currency; `due`, whether the closed
 * returns' value is more than what was refunded. Null when the job has neither returns nor refunds.
 */
export const creditOf = (
  afterSale: AfterSale | null,
  currency: string,
  priceOf: (resellerLineItemId: string) => string | null,
): (Credit & { due: boolean }) | null => {
  if (!afterSale || (!afterSale.returns.length && !afterSale.sourceRefunds.length)) return null;
  const refunded = afterSale.sourceRefunds
    .filter((refund) => refund.currency === currency)
    .reduce((sum, refund) => sum + minor(refund.amount, currency), 0n);
  const expected = returnsValue(afterSale, priceOf, ['open', 'closed'], currency);
  const closed = returnsValue(afterSale, priceOf, ['closed'], currency);
  return {
    currency,
    expected: formatted(expected, currency),
    refunded: formatted(refunded, currency),
    due: closed > refunded,
  };
};

/** A job line's after-sale quantities, as the API shows them (CONTRACT.md §15.3). */
export const lineAfterSaleView = (afterSale: AfterSale | null, lineId: string | null) => {
  const line = lineAfterSale(afterSale, lineId);
  return {
    refundedQuantity: line.refunded,
    removedQuantity: line.removed,
    returnedQuantity: returnedQuantity(afterSale, lineId),
  };
};

/** The job's returns, the supplier's refunds and its credit, as the API shows them (CONTRACT.md §15.3). */
export const afterSaleView = (
  afterSale: AfterSale | null,
  lines: ReadonlyArray<{ resellerLineItemId: string | null; sourcePrice: string | null }>,
) => {
  const priceOf = (id: string) => lines.find((line) => line.resellerLineItemId === id)?.sourcePrice ?? null;
  const credit = afterSale?.currency ? creditOf(afterSale, afterSale.currency, priceOf) : null;
  return {
    returns: (afterSale?.returns ?? []).map((r) => ({
      id: r.id,
      resellerReturnId: r.resellerReturnId,
      sourceReturnId: r.sourceReturnId,
      status: r.status,
      lines: r.lines,
      error: r.error,
      openedAt: r.openedAt,
      closedAt: r.closedAt,
    })),
    sourceRefunds: afterSale?.sourceRefunds ?? [],
    credit: credit && { currency: credit.currency, expected: credit.expected, refunded: credit.refunded },
  };
};
