import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callPlatform, PlatformError } from '../../shared/platforms/http.js';
import {
  classify,
  deferralSeconds,
  MAX_DEFERRAL_SECONDS,
  MAX_THROTTLE_WAIT_SECONDS,
  secondsUntil,
} from '../../shared/platforms/port.js';

/** The one failure policy of both workers: what a failed platform call means for the work. */

const INTERNAL = 'internal error while doing the work';
const platformError = (
  status: number,
  retryable: boolean,
  extra: { retryAfterSeconds?: number; outcomeUnknown?: boolean } = {},
) => new PlatformError({ platform: 'storeplatform_a', status, retryable, message: `answered ${status}`, ...extra });

describe('classify', () => {
  it('reads a 429 as throttled, waiting as long as Retry-After asks and at least a second', () => {
    expect(classify(platformError(429, true, { retryAfterSeconds: 7 }), INTERNAL)).toEqual({
      kind: 'throttled',
      reason: 'answered 429',
      delaySeconds: expect.any(Number),
    });
    const delay = (retryAfterSeconds?: number) =>
      (classify(platformError(429, true, { retryAfterSeconds }), INTERNAL) as { delaySeconds: number }).delaySeconds;
    expect(delay(7)).toBeGreaterThanOrEqual(7);
    expect(delay(0)).toBeGreaterThanOrEqual(1);
    expect(delay(undefined)).toBeGreaterThanOrEqual(1);
  });

  it('defers by Retry-After plus up to a quarter more of jitter, never less, at most a day', () => {
    expect(deferralSeconds(7, () => 0)).toBe(7);
    expect(deferralSeconds(7, () => 0.999)).toBe(9);
    expect(deferralSeconds(undefined, () => 0)).toBe(1);
    expect(deferralSeconds(undefined, () => 0.999)).toBe(2);
    expect(deferralSeconds(0.2, () => 0)).toBe(1);
    // A supplier asking for an hour is called again after an hour, not after 15 minutes.
    expect(deferralSeconds(3600, () => 0)).toBe(3600);
    expect(deferralSeconds(3600, () => 0.5)).toBe(4050);
    expect(deferralSeconds(880, () => 0.999)).toBe(1100);
    expect(deferralSeconds(10 * 86_400, () => 0.999)).toBe(MAX_THROTTLE_WAIT_SECONDS);
    expect(MAX_DEFERRAL_SECONDS).toBe(900);
  });

  it('tells a message that came before its notBefore how long it still waits', () => {
    const now = Date.parse('2026-11-24T00:00:00.000Z');
    expect(secondsUntil(undefined, now)).toBe(0);
    expect(secondsUntil(now - 5_000, now)).toBe(0);
    expect(secondsUntil(now + 900, now)).toBe(0);
    expect(secondsUntil(now + 2_700_500, now)).toBe(2701);
  });

  it.each([401, 404, 422])('reads a %i as permanent, with the platform reason', (status) => {
    expect(classify(platformError(status, false), INTERNAL)).toEqual({
      kind: 'permanent',
      reason: `answered ${status}`,
      status,
    });
  });

  it('reads a call whose outcome is unknown as unknown_outcome', () => {
    expect(classify(platformError(0, true, { outcomeUnknown: true }), INTERNAL)).toEqual({
      kind: 'unknown_outcome',
      reason: 'answered 0',
    });
  });

  it('reads other retryable platform errors as transient, with the platform reason', () => {
    expect(classify(platformError(503, true), INTERNAL)).toEqual({
      kind: 'transient',
      reason: 'answered 503',
      internal: false,
    });
  });

  it('reads an error that is not the platform one as transient, with the caller text instead of its own', () => {
    expect(classify(new Error('socket hang up with token abc'), INTERNAL)).toEqual({
      kind: 'transient',
      reason: INTERNAL,
      internal: true,
    });
  });
});

describe('classify, after a real call', () => {
  const saved = { url: process.env.PLATFORM_API_URL, timeout: process.env.PLATFORM_TIMEOUT_MS };
  let server: Server;
  let port: number;
  let behaviour: 'stall' | 'hang up';

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      // The request has arrived whole: whatever happens now, the platform may have acted on it.
      req.on('end', () => (behaviour === 'hang up' ? res.socket?.destroy() : undefined));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    for (const [name, value] of [
      ['PLATFORM_API_URL', saved.url],
      ['PLATFORM_TIMEOUT_MS', saved.timeout],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  const call = async (url: string) => {
    process.env.PLATFORM_API_URL = url;
    process.env.PLATFORM_TIMEOUT_MS = '200';
    const shop = { platform: 'custom' as const, shopDomain: 'a.myshopify.com', accessToken: 't', webhookSecret: 's' };
    try {
      await callPlatform({ platform: 'custom', shop, method: 'POST', path: '/orders', json: { order: 1 } });
    } catch (error) {
      return classify(error, INTERNAL).kind;
    }
    throw new Error('the call succeeded');
  };

  it('reads a platform that took the request and never answered as unknown_outcome', async () => {
    behaviour = 'stall';
    await expect(call(`http://127.0.0.1:${port}`)).resolves.toBe('unknown_outcome');
  });

  it('reads a connection lost after the request was sent as unknown_outcome', async () => {
    behaviour = 'hang up';
    await expect(call(`http://127.0.0.1:${port}`)).resolves.toBe('unknown_outcome');
  });

  it('reads a refused connection (nothing was sent) as transient', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(call(`http://127.0.0.1:${closedPort}`)).resolves.toBe('transient');
  });
});
