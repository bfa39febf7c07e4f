/**
 * When an order may go to its suppliers (CONTRACT.md §11): a reseller store's routing policy and the
 * judgement of an order against it. Pure: the caller says what it knows of the order (its webhook,
 * or the platform's answer when it was read again) and gets the reasons it is held for.
 */

export const PAYMENT_POLICIES = ['any', 'paid_or_authorized', 'paid'] as const;
export const RISK_POLICIES = ['off', 'hold_cancel', 'hold_investigate'] as const;
export const TEST_ORDER_POLICIES = ['route', 'hold', 'skip'] as const;
/** The longest `holdSeconds`: a week. */
export const MAX_HOLD_DELAY_SECONDS = 604_800;

export interface RoutingPolicy {
  holdSeconds: number;
  payment: (typeof PAYMENT_POLICIES)[number];
  risk: (typeof RISK_POLICIES)[number];
  testOrders: (typeof TEST_ORDER_POLICIES)[number];
}

export const DEFAULT_ROUTING_POLICY: RoutingPolicy = Object.freeze({
  holdSeconds: 0,
  payment: 'paid_or_authorized',
  risk: 'off',
  testOrders: 'hold',
});

/** Why a job is held, in CONTRACT §11's words and order. */
export const HOLD_REASONS = ['delay', 'payment', 'risk', 'test_order', 'manual'] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];

/** The reasons the platform's word on the order can lift: judged again on each re-read, update and poll. */
export const JUDGED_REASONS: readonly HoldReason[] = ['payment', 'risk', 'test_order'];

/** A held job's hold: why, since when, and the end of its `delay` (null without one). */
export interface Hold {
  reasons: HoldReason[];
  since: string;
  until: string | null;
}

/** What is known of an order when it is judged. */
export interface OrderFacts {
  /** `financial_status` lower-cased; null when the platform did not say (counts as paid). */
  financialStatus: string | null;
  /** The platform's recommendation; null when not known yet (a webhook carries none): not held for risk. */
  riskRecommendation: string | null;
  test: boolean;
}

const PAID = new Set(['paid', 'partially_refunded']);

/** Whether the order's payment holds it under the policy's `payment`. */
export const unpaid = (policy: RoutingPolicy, financialStatus: string | null) => {
  if (policy.payment === 'any' || financialStatus === null) return false;
  if (PAID.has(financialStatus)) return false;
  return !(policy.payment === 'paid_or_authorized' && financialStatus === 'authorized');
};

/** Whether the platform's recommendation holds it under the policy's `risk`. */
export const risky = (policy: RoutingPolicy, recommendation: string | null) =>
  (policy.risk !== 'off' && recommendation === 'cancel') ||
  (policy.risk === 'hold_investigate' && recommendation === 'investigate');

/** The reasons the facts give (never `delay` nor `manual`), in CONTRACT's order. */
export const judgedReasons = (policy: RoutingPolicy, facts: OrderFacts): HoldReason[] => [
  ...(unpaid(policy, facts.financialStatus) ? (['payment'] as const) : []),
  ...(risky(policy, facts.riskRecommendation) ? (['risk'] as const) : []),
  ...(facts.test && policy.testOrders === 'hold' ? (['test_order'] as const) : []),
];

/** Whether a test order is never routed (`testOrders: skip`): it is recorded as unrouted, reason `test_order`. */
export const skipsTestOrder = (policy: RoutingPolicy, facts: Pick<OrderFacts, 'test'>) =>
  facts.test && policy.testOrders === 'skip';

/**
 * The hold of an order as it arrives at `at` (ISO): the reasons its facts give and, with a
 * `holdSeconds`, the delay; null when nothing holds it (it goes on at once, as before).
 */
export const holdOnArrival = (policy: RoutingPolicy, facts: OrderFacts, at: string): Hold | null => {
  const reasons: HoldReason[] = [
    ...(policy.holdSeconds > 0 ? (['delay'] as const) : []),
    ...judgedReasons(policy, facts),
  ];
  if (!reasons.length) return null;
  const until = policy.holdSeconds > 0 ? new Date(Date.parse(at) + policy.holdSeconds * 1000).toISOString() : null;
  return { reasons, since: at, until };
};

/**
 * A hold judged again on new facts (a re-read, an update, a poll): the reasons the facts no longer give
 * are dropped, those they give now are added; `delay` is dropped once `at` is past its end; `manual`
 * stays (only an operator ends it). Null when nothing holds the job any more.
 */
export const judgeAgain = (policy: RoutingPolicy, hold: Hold, facts: OrderFacts, at: string): Hold | null => {
  const judged = new Set(judgedReasons(policy, facts));
  const delayed = hold.reasons.includes('delay') && hold.until !== null && Date.parse(hold.until) > Date.parse(at);
  const reasons = HOLD_REASONS.filter(
    (reason) =>
      (reason === 'delay' && delayed) || (reason === 'manual' && hold.reasons.includes('manual')) || judged.has(reason),
  );
  if (!reasons.length) return null;
  return { reasons, since: hold.since, until: delayed ? hold.until : null };
};
