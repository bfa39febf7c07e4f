import { readResellerOrder } from '../../shared/domain/orders.js';
import {
  DEFAULT_ROUTING_POLICY,
  type Hold,
  holdOnArrival,
  judgeAgain,
  type OrderFacts,
  type RoutingPolicy,
  skipsTestOrder,
} from '../../shared/domain/routing.js';

/** CONTRACT.md §11's table, as the pure judgement of an order's holds. */

const at = '2026-11-27T12:00:00.000Z';
const policy = (changes: Partial<RoutingPolicy> = {}): RoutingPolicy => ({ ...DEFAULT_ROUTING_POLICY, ...changes });
const facts = (changes: Partial<OrderFacts> = {}): OrderFacts => ({
  financialStatus: 'paid',
  riskRecommendation: null,
  test: false,
  ...changes,
});
const reasonsOf = (hold: Hold | null) => hold?.reasons ?? [];

describe('holds on arrival (CONTRACT.md §11)', () => {
  it('holds nothing for a paid order under the defaults, nor for one that says no financial_status', () => {
    expect(holdOnArrival(policy(), facts(), at)).toBeNull();
    expect(holdOnArrival(policy(), facts({ financialStatus: null }), at)).toBeNull();
    expect(holdOnArrival(policy(), facts({ financialStatus: 'partially_refunded' }), at)).toBeNull();
  });

  it('judges payment by the policy: any, paid_or_authorized, paid', () => {
    const cases: [RoutingPolicy['payment'], string, boolean][] = [
      ['any', 'pending', false],
      ['any', 'voided', false],
      ['paid_or_authorized', 'authorized', false],
      ['paid_or_authorized', 'pending', true],
      ['paid_or_authorized', 'partially_paid', true],
      ['paid_or_authorized', 'refunded', true],
      ['paid', 'authorized', true],
      ['paid', 'paid', false],
    ];
    for (const [payment, financialStatus, held] of cases) {
      expect([
        payment,
        financialStatus,
        reasonsOf(holdOnArrival(policy({ payment }), facts({ financialStatus }), at)),
      ]).toEqual([payment, financialStatus, held ? ['payment'] : []]);
    }
  });

  it('judges risk: cancel under hold_cancel, investigate too under hold_investigate, nothing when off', () => {
    const judged = (risk: RoutingPolicy['risk'], riskRecommendation: string) =>
      reasonsOf(holdOnArrival(policy({ risk }), facts({ riskRecommendation }), at));
    expect(judged('off', 'cancel')).toEqual([]);
    expect(judged('hold_cancel', 'cancel')).toEqual(['risk']);
    expect(judged('hold_cancel', 'investigate')).toEqual([]);
    expect(judged('hold_investigate', 'investigate')).toEqual(['risk']);
    expect(judged('hold_investigate', 'accept')).toEqual([]);
  });

  it('holds a test order unless the policy routes it; skips it under `skip`', () => {
    expect(reasonsOf(holdOnArrival(policy(), facts({ test: true }), at))).toEqual(['test_order']);
    expect(holdOnArrival(policy({ testOrders: 'route' }), facts({ test: true }), at)).toBeNull();
    expect(skipsTestOrder(policy({ testOrders: 'skip' }), { test: true })).toBe(true);
    expect(skipsTestOrder(policy({ testOrders: 'skip' }), { test: false })).toBe(false);
  });

  it('adds a delay that ends holdSeconds after the order arrived, with every other reason', () => {
    const hold = holdOnArrival(
      policy({ holdSeconds: 120, payment: 'paid' }),
      facts({ financialStatus: 'pending' }),
      at,
    );
    expect(hold).toEqual({ reasons: ['delay', 'payment'], since: at, until: '2026-11-27T12:02:00.000Z' });
  });
});

describe('a hold judged again', () => {
  const later = '2026-11-27T12:05:00.000Z';
  const hold: Hold = { reasons: ['delay', 'payment', 'manual'], since: at, until: '2026-11-27T12:02:00.000Z' };

  it('drops an ended delay and a reason the facts no longer give; keeps an operator’s hold', () => {
    expect(judgeAgain(policy(), hold, facts(), later)).toEqual({ reasons: ['manual'], since: at, until: null });
  });

  it('keeps a delay not over yet, and adds a reason the facts now give', () => {
    const judged = judgeAgain(policy({ risk: 'hold_cancel' }), hold, facts({ riskRecommendation: 'cancel' }), at);
    expect(judged).toEqual({ reasons: ['delay', 'risk', 'manual'], since: at, until: hold.until });
  });

  it('answers null when nothing holds the job any more', () => {
    const paymentOnly: Hold = { reasons: ['payment'], since: at, until: null };
    expect(judgeAgain(policy(), paymentOnly, facts(), later)).toBeNull();
    expect(judgeAgain(policy(), paymentOnly, facts({ financialStatus: 'pending' }), later)).toEqual(paymentOnly);
  });
});

describe('what a webhook says of payment and test', () => {
  const read = (fields: Record<string, unknown>) => {
    const reading = readResellerOrder(JSON.stringify({ id: 1, currency: 'USD', line_items: [], ...fields }));
    if (!reading.ok) throw new Error(reading.message);
    return reading.order;
  };

  it('reads `financial_status` lower-cased and `test: true` as Shopify sends them; anything else as unsaid', () => {
    expect(read({ financial_status: 'authorized', test: true })).toMatchObject({
      financialStatus: 'authorized',
      test: true,
    });
    expect(read({ financial_status: 'PAID' }).financialStatus).toBe('paid');
    expect(read({})).toMatchObject({ financialStatus: null, test: false });
    expect(read({ financial_status: 7, test: 'true' })).toMatchObject({ financialStatus: null, test: false });
  });
});
