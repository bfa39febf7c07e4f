/** custom: the supplier's own endpoint, which receives signed pushes (PLATFORM-API.md). */
import { signBody } from '../domain/hmac.js';
import { callPlatform, unexpectedAnswer } from './http.js';
import { restFulfillment } from './storeplatform-a.js';
import type { PlatformAdapter, PlatformStore } from './types.js';

const PLATFORM = 'custom';

/** Serializes once and signs those exact bytes, so the receiver verifies what it reads. */
async function signedPost(store: PlatformStore, path: string, value: unknown, idempotencyKey: string) {
  const rawBody = Buffer.from(JSON.stringify(value), 'utf8');
  return callPlatform({
    platform: PLATFORM,
    store,
    method: 'POST',
    path,
    headers: {
      Authorization: `Bearer ${store.accessToken}`,
      'Idempotency-Key': idempotencyKey,
      'X-Platform-Hmac-SHA256': signBody(store.webhookSecret, rawBody),
    },
    rawBody,
  });
}

function idOf(body: unknown): string | undefined {
  const id = (body as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
}

export const customAdapter: PlatformAdapter = {
  async createOrder(store, order, idempotencyKey) {
    const answer = await signedPost(store, '/reseller/orders', { order }, idempotencyKey);
    const orderId = idOf(answer.body);
    if (orderId === undefined) throw unexpectedAnswer(PLATFORM, answer.status, 'no order id');
    return { orderId };
  },

  async createFulfillment(store, orderId, tracking, idempotencyKey) {
    const path = `/reseller/orders/${encodeURIComponent(orderId)}/fulfillments`;
    const answer = await signedPost(store, path, { fulfillment: restFulfillment(tracking) }, idempotencyKey);
    const fulfillmentId = idOf(answer.body);
    if (fulfillmentId === undefined) throw unexpectedAnswer(PLATFORM, answer.status, 'no fulfillment id');
    return { fulfillmentId };
  },
};
