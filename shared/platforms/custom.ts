/** custom: the supplier's own endpoint, which receives signed pushes (PLATFORM-API.md). */
import { signBody } from '../domain/hmac.js';
import { stringifyExact } from '../domain/json-text.js';
import { callPlatform, unexpectedAnswer } from './http.js';
import { lookedUpOrderId, type PlatformAdapter, type ShopConnection } from './port.js';
import { restFulfillment } from './storeplatform-a.js';

const PLATFORM = 'custom';

/** Serializes once and signs those exact bytes, so the receiver verifies what it reads. */
async function signedPost(shop: ShopConnection, path: string, value: unknown, idempotencyKey: string) {
  const rawBody = Buffer.from(stringifyExact(value), 'utf8');
  return callPlatform({
    platform: PLATFORM,
    shop,
    method: 'POST',
    path,
    headers: {
      Authorization: `Bearer ${shop.accessToken}`,
      'Idempotency-Key': idempotencyKey,
      'X-Platform-Hmac-SHA256': signBody(shop.webhookSecret, rawBody),
    },
    rawBody,
  });
}

function idOf(body: unknown): string | undefined {
  const id = (body as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
}

export const customAdapter: PlatformAdapter = {
  takesIdempotencyKeys: true,

  async createOrder(shop, order, idempotencyKey) {
    const answer = await signedPost(shop, '/reseller/orders', { order }, idempotencyKey);
    const orderId = idOf(answer.body);
    if (orderId === undefined) throw unexpectedAnswer(PLATFORM, answer.status, 'no order id');
    return { orderId, status: answer.status };
  },

  async findOrder(shop, sourceIdentifier) {
    // A read has no body to sign: the signature covers the path and query string instead.
    const path = `/reseller/orders?source_identifier=${encodeURIComponent(sourceIdentifier)}`;
    const answer = await callPlatform({
      platform: PLATFORM,
      shop,
      method: 'GET',
      path,
      headers: {
        Authorization: `Bearer ${shop.accessToken}`,
        'X-Platform-Hmac-SHA256': signBody(shop.webhookSecret, Buffer.from(path, 'utf8')),
      },
    });
    const orderId = lookedUpOrderId((answer.body as { orders?: unknown } | undefined)?.orders, sourceIdentifier);
    if (orderId === undefined) throw unexpectedAnswer(PLATFORM, answer.status, 'no list of orders');
    return orderId === null ? null : { orderId };
  },

  async createFulfillment(shop, orderId, tracking, idempotencyKey) {
    const path = `/reseller/orders/${encodeURIComponent(orderId)}/fulfillments`;
    const answer = await signedPost(shop, path, { fulfillment: restFulfillment(tracking) }, idempotencyKey);
    const fulfillmentId = idOf(answer.body);
    if (fulfillmentId === undefined) throw unexpectedAnswer(PLATFORM, answer.status, 'no fulfillment id');
    return { fulfillmentId };
  },
};
