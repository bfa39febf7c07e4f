import { main as jobs } from '../../bin/jobs.js';
import { createResellerStore, createSourceStore, REQUEST_ID, scanAll, serviceForSuite, TEST_KEYS } from './support.js';
import { jobReaches, orderPayload, sendWebhook } from './webhooks.js';

/**
 * Per-key rate limits (docs/design.md, "Per-key rate limits"): API_KEY_RATE_LIMIT changes a second per
 * key, counted in DynamoDB Local by the real middleware. A key past its second's limit gets
 * `429 rate_limited` with `Retry-After`, before anything is read or changed; another key, and the
 * same key's reads, still get their answers.
 */

jest.setTimeout(60_000);

const LIMIT = 2;

/** Waits for the start of a wall-clock second, so a burst falls in one window. */
const nextSecond = () => new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5));

describe('per-key rate limits', () => {
  const { service } = serviceForSuite({ apiKeyRateLimit: LIMIT }, 60_000);

  it('answers 429 rate_limited with Retry-After past a key’s changes a second, while another key goes on', async () => {
    const a = service.api('owner_a');
    const b = service.api('owner_b');
    const mine = await createResellerStore(a);
    const theirs = await createResellerStore(b);

    await nextSecond();
    const burst = await Promise.all(
      Array.from({ length: 8 }, (_, i) => a.patch(`/v1/reseller_stores/${mine.id}`, { name: `Burst ${i}` })),
    );
    const refused = burst.filter((res) => res.status === 429);
    const done = burst.filter((res) => res.status === 200);
    expect(refused.length + done.length).toBe(burst.length);
    expect(refused.length).toBeGreaterThan(0);
    // At most LIMIT a second (a slow machine spreads the burst over seconds): each window the table
    // counted holds LIMIT at most, and they hold exactly what was let through (the two creations too).
    expect(done.length).toBeGreaterThanOrEqual(1);
    const windows = (await scanAll(service.doc, service.tableName)).filter((item) =>
      String(item.PK).startsWith('RATE#'),
    );
    for (const window of windows) expect(window.requests).toBeLessThanOrEqual(LIMIT);
    expect(windows.reduce((sum, window) => sum + Number(window.requests), 0)).toBe(2 + done.length);
    for (const window of windows) expect(window.expiresAt).toBe(Number(String(window.PK).split('#').at(-1)) + 60);
    for (const res of refused) {
      expect(res.headers.get('retry-after')).toBe('1');
      expect(res.body).toEqual({
        error: { type: 'invalid_request_error', code: 'rate_limited', message: expect.stringContaining(`${LIMIT}`) },
        request_id: expect.stringMatching(REQUEST_ID),
      });
      expect(res.headers.get('request-id')).toBe(res.body.request_id);
    }

    // Another integrator's key has its own window; the same key's reads are not counted.
    const other = await b.patch(`/v1/reseller_stores/${theirs.id}`, { name: 'Not starved' });
    expect(other.status).toBe(200);
    expect(other.body.name).toBe('Not starved');
    expect((await a.get(`/v1/reseller_stores/${mine.id}`)).status).toBe(200);

    // A refused change changed nothing: the store holds one of the names that were let through.
    const names = done.map((res) => res.body.name);
    expect(names).toContain((await a.get(`/v1/reseller_stores/${mine.id}`)).body.name);

    // The next second the key is let through again.
    await nextSecond();
    expect((await a.patch(`/v1/reseller_stores/${mine.id}`, { name: 'Later' })).status).toBe(200);
  });

  it('npm run jobs -- retry --all-dead waits out each 429 for its Retry-After and retries every dead job', async () => {
    const a = service.api('owner_a');
    await nextSecond();
    const secret = 'whsec_rate_bulk';
    const reseller = await createResellerStore(a, { webhookSecret: secret });
    // The platform refuses it (401): each job dead after its first attempt.
    const failing = await createSourceStore(a, reseller.id, { accessToken: 'tok_fail401' });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
        shopDomain: reseller.shopDomain,
        secret,
        body: orderPayload([{ vendor: failing.vendorTag, price: '5.00' }]),
      });
      ids.push(receipt.body.syncJobIds[0]);
    }
    await Promise.all(ids.map((id) => jobReaches(a, id, 'dead', 45_000)));

    // The same key's changes go on beside the command, so its retries meet the limit every second.
    let running = true;
    const beside = (async () => {
      while (running) {
        await a.patch(`/v1/reseller_stores/${reseller.id}`, { name: 'Busy beside' });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const out: string[] = [];
    const err: string[] = [];
    const code = await jobs(
      ['retry', '--all-dead', '--store', reseller.id, '--url', service.runtime.apiUrl, '--key', TEST_KEYS.owner_a],
      { out: (line) => out.push(line), err: (line) => err.push(line), env: {} },
    ).finally(() => {
      running = false;
    });
    await beside;

    expect(err.filter((line) => line.startsWith('rate limited')).length).toBeGreaterThan(0);
    expect(err).toContain('rate limited (429): waiting 1 s, as Retry-After says');
    expect(out).toEqual([`retried 5 of 5 dead job(s) in ${reseller.id}`]);
    expect(code).toBe(0);
    const retried = (await a.get('/v1/audit_log?action=sync_job.retried&limit=100')).body.data.map(
      (entry: { resourceId: string }) => entry.resourceId,
    );
    expect(retried).toEqual(expect.arrayContaining(ids));
  }, 180_000);
});
