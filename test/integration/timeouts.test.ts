import { createResellerStore, createSourceStore, jobStatusWrite, serviceForSuite } from './support.js';
import { jobReaches, orderPayload, sendWebhook } from './webhooks.js';

/**
 * Timeouts as on AWS (lib/local/sqs.ts): an invocation past its function's timeout is abandoned
 * (its environment is stopped), its batch is not deleted and comes back, and no message is handed
 * to a second invocation while the first may still be working on it.
 */

jest.setTimeout(90_000);

const TIMEOUT_SECONDS = 4;

describe('timeouts', () => {
  let reseller: any;
  const secret = 'whsec_timeouts';

  const { service, api, sim } = serviceForSuite({ timeouts: { SyncWorker: TIMEOUT_SECONDS } });
  beforeAll(async () => {
    reseller = await createResellerStore(api(), { webhookSecret: secret });
  }, 90_000);
  afterEach(() => service.runtime.faults.clear());

  it('abandons an invocation past its timeout; its batch comes back, and only after it was abandoned', async () => {
    const stuck = await createSourceStore(api(), reseller.id, { vendorTag: 'Stuck' });
    // The first invocation hangs after the supplier has the order, past the function's timeout.
    const hang = service.runtime.faults.inject({ ...jobStatusWrite('completed'), action: 'hold', times: 1 });

    const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret,
      body: orderPayload([{ vendor: 'Stuck', price: '10.00' }]),
    });
    await hang.reached;
    const done = await jobReaches(api(), receipt.body.syncJobIds[0], 'completed', 30_000);

    expect(done.attempts).toBe(2);
    expect(await sim().orders(stuck.shopDomain)).toHaveLength(1);
    const posts = (await sim().calls()).filter((c) => c.shopDomain === stuck.shopDomain && c.method === 'POST');
    expect(posts.map((c) => c.status)).toEqual([201, 200]);
    // The message was not handed out again while the first invocation could still be working.
    expect(Date.parse(posts[1].at) - Date.parse(posts[0].at)).toBeGreaterThanOrEqual(TIMEOUT_SECONDS * 1000 - 500);
  });
});
