import { allJobsOf, createResellerStore, createSourceStore, serviceForSuite } from './support.js';
import { allJobsEnd, orderPayload, sendOrders, simulator } from './webhooks.js';

/**
 * A burst of orders, many in flight, to suppliers that misbehave in every way the simulator knows
 * (PLATFORM-API.md test tokens) but throttling and slowness, at the default concurrency: every job
 * ends, `completed` with exactly one order on its supplier or `dead` with a reason. This is what
 * the shared batch processor of the old in-process runtime broke (failed records reported as
 * successes, their messages deleted, jobs left `failed` for ever).
 */

jest.setTimeout(240_000);

const ORDERS = 60;
const IN_FLIGHT = 10;
/** Every job ends within this, on a 2-core machine shared with others. */
const BOUND_MS = 150_000;

const TOKENS = {
  ordinary: 'tok_ordinary',
  flaky: 'tok_flaky',
  fail500: 'tok_fail500',
  fail401: 'tok_fail401',
  fail422: 'tok_fail422',
} as const;
type Kind = keyof typeof TOKENS;
const ENDS: Record<Kind, 'completed' | 'dead'> = {
  ordinary: 'completed',
  flaky: 'completed',
  fail500: 'dead',
  fail401: 'dead',
  fail422: 'dead',
};

describe('a burst of orders to misbehaving suppliers', () => {
  const secret = 'whsec_burst';

  const { service, api } = serviceForSuite();

  const jobsOf = (resellerStoreId: string) => allJobsOf(api(), resellerStoreId);

  it(`ends every job of ${ORDERS} orders, ${IN_FLIGHT} in flight: completed once on its supplier or dead`, async () => {
    const reseller = await createResellerStore(api(), { webhookSecret: secret });
    const kinds = Object.keys(TOKENS) as Kind[];
    const suppliers = new Map<Kind, any>();
    for (const kind of kinds)
      suppliers.set(kind, await createSourceStore(api(), reseller.id, { vendorTag: kind, accessToken: TOKENS[kind] }));
    const kindOfStore = new Map([...suppliers].map(([kind, store]) => [store.id as string, kind]));

    // Each order goes to one supplier, every third to two: batches mix jobs that end every way.
    const payloads = Array.from({ length: ORDERS }, (_, i) => {
      const vendors = [kinds[i % kinds.length], ...(i % 3 === 0 ? [kinds[(i + 2) % kinds.length]] : [])];
      return orderPayload(vendors.map((vendor) => ({ vendor, price: '12.00' })));
    });
    const receipts = await sendOrders(service.runtime.apiUrl, reseller.shopDomain, secret, payloads, IN_FLIGHT);
    expect(receipts.filter((r) => r.status !== 200)).toEqual([]);
    expect(receipts).toHaveLength(ORDERS);
    const expectedJobs = payloads.reduce((sum, p) => sum + p.line_items.length, 0);

    const started = Date.now();
    const jobs = await allJobsEnd(() => jobsOf(reseller.id), expectedJobs, BOUND_MS);
    console.log(`burst: ${jobs.length} jobs of ${ORDERS} orders ended ${Date.now() - started} ms after the last 200`);

    const sim = simulator(service.runtime.simulator!.url);
    const placed = new Map<Kind, any[]>();
    for (const [kind, store] of suppliers) placed.set(kind, await sim.orders(store.shopDomain));
    for (const job of jobs) {
      const kind = kindOfStore.get(job.sourceStoreId)!;
      expect({ kind, status: job.status }).toEqual({ kind, status: ENDS[kind] });
      if (job.status === 'dead') {
        expect(job.errorMessage).toEqual(expect.stringMatching(/\S/));
        continue;
      }
      const mine = placed
        .get(kind)!
        .filter((o) => o.source_identifier === `${reseller.shopDomain}:${job.externalOrderId}:${job.id}`);
      expect(mine.map((o) => String(o.id))).toEqual([job.sourceOrderId]);
    }
    // The suppliers that refuse never got an order; the others got one per job, no more.
    for (const kind of kinds) {
      const jobsOfKind = jobs.filter((j) => kindOfStore.get(j.sourceStoreId) === kind);
      expect({ kind, orders: placed.get(kind)!.length }).toEqual({
        kind,
        orders: ENDS[kind] === 'completed' ? jobsOfKind.length : 0,
      });
    }
  });
});
