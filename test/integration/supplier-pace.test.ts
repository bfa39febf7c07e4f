import { allJobsOf, createResellerStore, createSourceStore, serviceForSuite } from './support.js';
import { allJobsEnd, orderPayload, sendOrders, simulator } from './webhooks.js';

/**
 * A supplier's pace (docs/design.md, "A pace per supplier"): a burst of orders into a supplier shop
 * that allows 5 calls a second (the simulator's `/_sim/rate-limits`, answering 429 with Retry-After
 * as a platform does) drains at that rate: none dead, one supplier order per order. Nothing is known
 * of a shop before it throttles, so the first burst is answered 429 until the service has learnt the
 * pace (a DynamoDB write, then the other workers' next read): on a loaded machine, 16 or 17 429s in
 * the first 2 to 3 s, and none after. So: at most `BURST_429S` 429s to calls received within
 * `LEARNING_MS` of the first 429's answer (the simulator's `answeredAt`); after that the pace holds,
 * and the calls outside that burst are at most 5 % more than the orders. At 5 a second, 300 orders
 * take a minute at least.
 */

jest.setTimeout(240_000);

const ORDERS = 300;
const PER_SECOND = 5;
const SENDERS = 10;
/** How long the service may take to learn a shop's pace from its first 429, on a loaded machine. */
const LEARNING_MS = 5_000;
/** The first burst's 429s at most: creates in flight while the pace is learnt (the sync worker's batches). */
const BURST_429S = 30;
/** The drain at 5 a second is 60 s; the rest is slack for a 2-core machine shared with others. */
const BOUND_MS = 150_000;

describe('a burst of orders into a slow supplier', () => {
  const secret = 'whsec_pace';

  const { service, api } = serviceForSuite();

  const jobsOf = (resellerStoreId: string) => allJobsOf(api(), resellerStoreId);

  it(`places ${ORDERS} orders at ${PER_SECOND} a second: none dead, none doubled, calls <= 1.05 x orders`, async () => {
    const reseller = await createResellerStore(api(), { webhookSecret: secret });
    const supplier = await createSourceStore(api(), reseller.id, { vendorTag: 'Slow' });
    const simUrl = service.runtime.simulator!.url;
    const limit = await fetch(`${simUrl}/_sim/rate-limits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ shopDomain: supplier.shopDomain, perSecond: PER_SECOND }),
    });
    expect(limit.status).toBe(200);

    const payloads = Array.from({ length: ORDERS }, () => orderPayload([{ vendor: 'Slow', price: '12.00' }]));
    const started = Date.now();
    const receipts = await sendOrders(service.runtime.apiUrl, reseller.shopDomain, secret, payloads, SENDERS);
    const statuses = receipts.map((receipt) => receipt.status);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);

    const jobs = await allJobsEnd(() => jobsOf(reseller.id), ORDERS, BOUND_MS);
    const sim = simulator(simUrl);
    const calls = (await sim.calls()).filter((call) => call.shopDomain === supplier.shopDomain);
    const orders = await sim.orders(supplier.shopDomain);
    // The first burst: 429s to calls received within LEARNING_MS of the first 429's answer.
    const first429 = calls.find((call) => call.status === 429);
    const learnt = first429 ? Date.parse(first429.answeredAt) + LEARNING_MS : 0;
    const throttled = calls.filter((call) => call.status === 429);
    const burst = throttled.filter((call) => Date.parse(call.at) <= learnt).length;
    console.log(
      `supplier pace: ${ORDERS} orders drained in ${Date.now() - started} ms; ${calls.length} calls, ` +
        `${throttled.length} answered 429 (${burst} in the first burst)`,
    );

    expect(jobs.filter((job) => job.status === 'dead')).toEqual([]);
    const perOrder = new Map<string, number>();
    for (const order of orders) perOrder.set(order.source_identifier, (perOrder.get(order.source_identifier) ?? 0) + 1);
    expect([...perOrder.values()].filter((n) => n > 1)).toEqual([]);
    expect(orders).toHaveLength(ORDERS);
    for (const job of jobs) expect(perOrder.get(`${reseller.shopDomain}:${job.externalOrderId}:${job.id}`)).toBe(1);
    expect(burst).toBeLessThanOrEqual(BURST_429S);
    expect(calls.length - burst).toBeLessThanOrEqual(ORDERS * 1.05);
  });
});
