/** custom: the supplier's own endpoint, which receives signed pushes (PLATFORM-API.md). */

import { stringifyExact } from '../domain/orders.js';
import { signBody } from '../domain/webhook-checks.js';
import { customAfterSale } from './custom-after-sale.js';
import { customConnect } from './custom-connect.js';
import { callPlatform, unexpectedAnswer } from './http.js';
import type { PlatformAdapter, ShopConnection } from './port.js';
import {
  changesPage,
  changesQuery,
  isObject,
  lineItemIdsOf,
  lookedUpOrder,
  restOrderChanges,
  restTrackingUpdate,
} from './rest.js';
import { restFulfillment } from './storeplatform-a.js';

const PLATFORM = 'custom';

/** Serializes once and signs those exact bytes, so the receiver verifies what it reads. */
async function signedPush(
  shop: ShopConnection,
  path: string,
  value: unknown,
  idempotencyKey: string,
  method: 'POST' | 'PATCH' = 'POST',
) {
  const rawBody = Buffer.from(stringifyExact(value), 'utf8');
  return callPlatform({
    platform: PLATFORM,
    shop,
    method,
    path,
    headers: {
      Authorization: `Bearer ${shop.accessToken}`,
      'Idempotency-Key': idempotencyKey,
      'X-Platform-Hmac-SHA256': signBody(shop.webhookSecret, rawBody),
    },
    rawBody,
  });
}

/** A read has no body to sign: the signature covers the path and query string instead. */
function signedRead(shop: ShopConnection, path: string) {
  return callPlatform({
    platform: PLATFORM,
    shop,
    method: 'GET',
    path,
    headers: {
      Authorization: `Bearer ${shop.accessToken}`,
      'X-Platform-Hmac-SHA256': signBody(shop.webhookSecret, Buffer.from(path, 'utf8')),
    },
  });
}

function idOf(body: unknown): string | undefined {
  const id = isObject(body) ? body.id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
}

/** The supplier's line ids of a create answer, when it shows the order's lines (`order.line_items` or `line_items`). */
const answeredLineItemIds = (body: unknown): string[] | undefined => {
  if (!isObject(body)) return undefined;
  return (isObject(body.order) ? lineItemIdsOf(body.order) : undefined) ?? lineItemIdsOf(body);
};

const orderPath = (orderId: string) => `/reseller/orders/${encodeURIComponent(orderId)}`;
const fulfillmentPath = (fulfillmentId: string) => `/reseller/fulfillments/${encodeURIComponent(fulfillmentId)}`;

export const customAdapter: PlatformAdapter = {
  takesIdempotencyKeys: true,
  ...customConnect,
  ...customAfterSale((shop, path, value, key) => signedPush(shop, path, value, key)),

  async createOrder(shop, order, idempotencyKey) {
    const answer = await signedPush(shop, '/reseller/orders', { order }, idempotencyKey);
    const orderId = idOf(answer.body);
    if (orderId === undefined) throw unexpectedAnswer(PLATFORM, answer.status, 'no order id');
    const lineItemIds = answeredLineItemIds(answer.body);
    return lineItemIds ? { orderId, status: answer.status, lineItemIds } : { orderId, status: answer.status };
  },

  async findOrder(shop, sourceIdentifier) {
    const answer = await signedRead(shop, `/reseller/orders?source_identifier=${encodeURIComponent(sourceIdentifier)}`);
    const found = lookedUpOrder(isObject(answer.body) ? answer.body.orders : undefined, sourceIdentifier);
    if (found === undefined) throw unexpectedAnswer(PLATFORM, answer.status, 'no list of orders');
    return found;
  },

  async createFulfillment(shop, orderId, tracking, idempotencyKey, options) {
    const path = `${orderPath(orderId)}/fulfillments`;
    const fulfillment = restFulfillment(tracking, options?.lineItems);
    const answer = await signedPush(shop, path, { fulfillment }, idempotencyKey);
    const fulfillmentId = idOf(answer.body);
    if (fulfillmentId === undefined) throw unexpectedAnswer(PLATFORM, answer.status, 'no fulfillment id');
    return { fulfillmentId };
  },

  // The two fulfillment calls are this service's own routes (PLATFORM-API.md names none for custom):
  // signed like the create push, with storeplatform_a's bodies.
  async updateFulfillmentTracking(shop, fulfillmentId, tracking, idempotencyKey) {
    const body = { fulfillment: restTrackingUpdate(tracking) };
    await signedPush(shop, `${fulfillmentPath(fulfillmentId)}/update_tracking`, body, idempotencyKey);
  },

  async cancelFulfillment(shop, fulfillmentId, idempotencyKey) {
    // An empty JSON object: signed bytes the receiver can verify and parse.
    await signedPush(shop, `${fulfillmentPath(fulfillmentId)}/cancel`, {}, idempotencyKey);
  },

  async cancelOrder(shop, orderId, reason, idempotencyKey) {
    await signedPush(shop, `${orderPath(orderId)}/cancel`, { reason }, idempotencyKey);
  },

  async updateOrder(shop, orderId, changes, idempotencyKey) {
    const order = restOrderChanges(changes);
    if (order === null) return; // nothing to change
    await signedPush(shop, orderPath(orderId), { order }, idempotencyKey, 'PATCH');
  },

  async ordersChangedSince(shop, since, options = {}) {
    const answer = await signedRead(shop, `/reseller/orders?${changesQuery(since, options)}`);
    // The tag is asked for and checked on the answer too: the supplier's own endpoint may not filter by it.
    const page = changesPage(answer.body, options.tag);
    if (!page) throw unexpectedAnswer(PLATFORM, answer.status, 'no list of orders with ids and updated_at');
    return page;
  },
};
