import { allJobsOf, createResellerStore, createSourceStore, startService, type TestService } from './support.js';
import { eventually, orderPayload, sendWebhook, simulator } from './webhooks.js';

/**
 * A supplier's pace (docs/design.md, "A pace per supplier"): a burst of orders into a supplier shop
 * that allows 5 calls a second (the simulator's `/_sim/rate-limits`, answering 429 with Retry-After
 * as a platform does) drains at that rate: none dead, one supplier order per order, and the calls
 * the shop received at most 5 % more than the orders, leaving out the first burst's 429s: calls the
 * shop received before it had answered its first 429, which no pace could have held back. How many
 * of those there are follows how many creates are in flight at once and how late the simulator (in
 * this process) answers on a loaded machine, not the pace; the burst is bounded by a batch's worth.
 * At 5 a second, 300 orders take a minute at least.
 */

jest.setTimeout(240_000);

const ORDERS = 300;
const PER_SECOND = 5;
const SENDERS = 10;
/** The first burst's 429s at most: the sync worker's batch of 10, twice over. */
const BLIND_429S = 20;
/** The drain at 5 a second is 60 s; the rest is slack for a 2-core machine shared with others. */
const BOUND_MS = 150_000;

describe('a burst of orders into a slow supplier', () => {
  let service: TestService;
  const secret = 'whsec_pace';
  const api = () => service.api('owner_a');

  beforeAll(async () => {
    service = await startService();
  }, 90_000);
  afterAll(() => service?.stop());

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
    const statuses: number[] = [];
    let next = 0;
    const sender = async () => {
      while (next < payloads.length) {
        const body = payloads[next++];
        const sent = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
          shopDomain: reseller.shopDomain,
          secret,
          body,
        });
        statuses.push(sent.status);
      }
    };
    const started = Date.now();
    await Promise.all(Array.from({ length: SENDERS }, sender));
    expect(statuses.filter((status) => status !== 200)).toEqual([]);

    const jobs = await eventually(
      async () => {
        const all = await jobsOf(reseller.id);
        return all.length === ORDERS && all.every((j) => j.status === 'completed' || j.status === 'dead') && all;
      },
      BOUND_MS,
      1000,
    );
    const sim = simulator(simUrl);
    const calls = (await sim.calls()).filter((call) => call.shopDomain === supplier.shopDomain);
    const orders = await sim.orders(supplier.shopDomain);
    // The first burst: 429s to calls received before the first 429 was answered (ISO times compare as strings).
    const firstAnswered = calls.find((call) => call.status === 429)?.answeredAt ?? '';
    const blind = calls.filter((call) => call.status === 429 && call.at <= firstAnswered).length;
    console.log(
      `supplier pace: ${ORDERS} orders drained in ${Date.now() - started} ms; ${calls.length} calls, ` +
        `${calls.filter((call) => call.status === 429).length} answered 429 (${blind} of them the first burst's)`,
    );

    expect(jobs.filter((job) => job.status === 'dead')).toEqual([]);
    const perOrder = new Map<string, number>();
    for (const order of orders) perOrder.set(order.source_identifier, (perOrder.get(order.source_identifier) ?? 0) + 1);
    expect([...perOrder.values()].filter((n) => n > 1)).toEqual([]);
    expect(orders).toHaveLength(ORDERS);
    for (const job of jobs) expect(perOrder.get(`${reseller.shopDomain}:${job.externalOrderId}:${job.id}`)).toBe(1);
    expect(blind).toBeLessThanOrEqual(BLIND_429S);
    expect(calls.length - blind).toBeLessThanOrEqual(ORDERS * 1.05);
  });
});
