import { createResellerStore, REQUEST_ID, scanAll, startService, type TestService } from './support.js';

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
  let service: TestService;

  beforeAll(async () => {
    service = await startService({ apiKeyRateLimit: LIMIT });
  }, 60_000);
  afterAll(() => service?.stop());

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
});
