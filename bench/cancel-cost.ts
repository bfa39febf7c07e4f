/**
 * `npm run bench:cancel`: what cancelling a completed single-supplier order costs (issue 20's
 * budget: write units and platform calls per cancellation).
 *
 * Places a batch of signed single-supplier orders (default 20) through the local runtime and waits
 * until each job is `completed`, uncounted; then counts, from the first `orders/cancelled` webhook
 * until every job is `cancelled`, the DynamoDB units (as DynamoDB Local reports them, by operation)
 * and the calls the supplier received. The exit code is 0 unless a job did not end cancelled.
 *
 *   npm run bench:cancel [-- --orders 20]
 */
import { createApiClient } from '../client/client.js';
import {
  createStores,
  dynamoByOperation,
  endMeteredBench,
  fixed,
  placeOrders,
  postOrderWebhook,
  readJobs,
  sleep,
  startMeteredBench,
  step,
  table,
} from './common.js';

const { orders, meter, runtime } = await startMeteredBench(20);
let failure: unknown;
try {
  const stores = await createStores(runtime.apiUrl);
  const platform = createApiClient({ baseUrl: runtime.apiUrl });
  const send = async (body: string, topic: 'orders/cancelled') => {
    const { data, response } = await postOrderWebhook(platform, stores, body, topic);
    if (response.status !== 200 || !data) throw new Error(`${topic} answered ${response.status}`);
    return data.syncJobIds;
  };
  // Placed means its tag ended too (CONTRACT.md §12.5; refused here, as the reseller's order is not on the
  // simulator's shop: the same call and write): neither falls in the cancellation's count.
  const waitFor = async (ids: Set<string>, status: string) => {
    for (let tries = 0; tries < 240; tries++) {
      const { jobs } = await readJobs(runtime.apiUrl, ids);
      const done = (id: string) =>
        jobs.get(id)?.status === status && (status !== 'completed' || jobs.get(id)?.tagged !== null);
      if ([...ids].every(done)) return true;
      await sleep(250);
    }
    return false;
  };

  const firstId = Date.now() * 1000;
  const ids = await placeOrders(platform, stores, orders, firstId);
  if (!(await waitFor(ids, 'completed'))) throw new Error('not every order was placed');
  await sleep(1000);

  step('cancelling them');
  const callsBefore = runtime.simulator!.calls().length;
  meter.counting = true;
  for (let n = 0; n < orders; n++) {
    const body = JSON.stringify({ id: firstId + n, cancel_reason: 'customer', cancelled_at: new Date().toISOString() });
    await send(body, 'orders/cancelled');
  }
  // Counting runs until the worker has ended every cancellation; the API reads that check it are not counted.
  let ended = false;
  for (let tries = 0; tries < 240 && !ended; tries++) {
    await sleep(500);
    meter.counting = false;
    ended = await waitFor(ids, 'cancelled');
    if (!ended) meter.counting = true;
  }
  meter.counting = false;
  if (!ended) throw new Error('not every job ended cancelled');
  const calls = runtime
    .simulator!.calls()
    .slice(callsBefore)
    .filter((call) => call.shopDomain === stores.sourceShopDomain);

  const u = meter.usage;
  const per = (n: number) => fixed(n / orders, 3);
  console.log(`\nbench:cancel — ${orders} completed single-supplier orders cancelled by the reseller\n`);
  console.log(
    table(
      ['per cancellation', 'count'],
      [
        ['DynamoDB write units', per(u.dynamo.wru + u.dynamo.failedWritesWru)],
        ['  of which GSI writes', per(u.dynamo.gsiWru)],
        ['DynamoDB read units', per(u.dynamo.rru)],
        ['platform calls to the supplier', per(calls.length)],
      ],
    ),
  );
  console.log('\nDynamoDB, by operation:');
  console.log(dynamoByOperation(u, per));
} catch (error) {
  failure = error ?? new Error('the bench failed');
}
await endMeteredBench({ meter, runtime }, failure);
