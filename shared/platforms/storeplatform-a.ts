import { randomUUID } from 'node:crypto';
import {
  callPlatform,
  PlatformError,
  refreshAccessToken,
  STOREPLATFORM_A_API_VERSION,
  unexpectedAnswer,
} from './http.js';
import {
  AFTER_SALE_CALLS,
  type ConnectCalls,
  callsOnDemand,
  type PlatformAdapter,
  restOrderId,
  type ShopConnection,
  type Tracking,
} from './port.js';
import {
  changesPage,
  changesQuery,
  isObject,
  lineItemIdsOf,
  lookedUpOrder,
  restLineItems,
  restOrderChanges,
  restOrderRead,
  restTrackingUpdate,
  restWebhookOf,
  restWebhooksOf,
} from './rest.js';

const PLATFORM = 'storeplatform_a';
const API = `/admin/api/${STOREPLATFORM_A_API_VERSION}`;

const token = (shop: ShopConnection) => ({ 'X-Platform-Access-Token': shop.accessToken });

export const storePlatformAConnect: ConnectCalls = {
  async readOrder(shop, orderId) {
    const path = `${API}/orders/${encodeURIComponent(restOrderId(orderId))}.json`;
    let answer: Awaited<ReturnType<typeof callPlatform>>;
    try {
      answer = await callPlatform({ platform: PLATFORM, shop, method: 'GET', path, headers: token(shop) });
    } catch (error) {
      if (error instanceof PlatformError && error.status === 404) return { kind: 'not_found' };
      throw error;
    }
    const order = restOrderRead(isObject(answer.body) ? answer.body.order : undefined);
    if (!order) throw unexpectedAnswer(PLATFORM, answer.status, 'no order with an id and updated_at');
    return { kind: 'found', order };
  },

  async listWebhooks(shop) {
    const path = `${API}/webhooks.json`;
    const answer = await callPlatform({ platform: PLATFORM, shop, method: 'GET', path, headers: token(shop) });
    const webhooks = restWebhooksOf(isObject(answer.body) ? answer.body.webhooks : undefined);
    if (!webhooks) throw unexpectedAnswer(PLATFORM, answer.status, 'no list of webhooks');
    return webhooks;
  },

  async createWebhook(shop, topic, address) {
    const answer = await callPlatform({
      platform: PLATFORM,
      shop,
      method: 'POST',
      path: `${API}/webhooks.json`,
      // A fresh key each time: a subscription the platform dropped must be made again, not replayed from a
      // key it remembers; the platform itself refuses a second subscription of one address to one topic.
      headers: { ...token(shop), 'Idempotency-Key': `webhook:${randomUUID()}` },
      json: { webhook: { topic, address, format: 'json' } },
    });
    const webhook = restWebhookOf(isObject(answer.body) ? answer.body.webhook : undefined);
    if (!webhook) throw unexpectedAnswer(PLATFORM, answer.status, 'no webhook with an id');
    return webhook;
  },

  refreshAccessToken: (shop, grant) => refreshAccessToken(PLATFORM, shop, grant),

  async addOrderTags(shop, orderId, tags) {
    const id = restOrderId(orderId);
    await callPlatform({
      platform: PLATFORM,
      shop,
      method: 'POST',
      path: `${API}/orders/${encodeURIComponent(id)}/tags.json`,
      headers: { ...token(shop), 'Idempotency-Key': `tags:${id}:${tags.join(',')}` },
      json: { tags },
    });
    return 'tagged';
  },
};

export interface RestFulfillment {
  /** The order's lines and quantities it ships; absent: every unfulfilled item. */
  line_items?: ReturnType<typeof restLineItems>;
  tracking_company: string;
  tracking_number: string | null;
  tracking_numbers: string[];
  tracking_url: string | null;
  tracking_urls: string[];
  notify_customer: true;
}

/** The REST fulfillment body; single and list fields fill each other so either reading of it is complete. */
export function restFulfillment(
  tracking: Tracking,
  lineItems?: Array<{ id: string; quantity: number }>,
): RestFulfillment {
  const number = tracking.number ?? tracking.numbers[0] ?? null;
  const url = tracking.url ?? tracking.urls[0] ?? null;
  return {
    ...(lineItems ? { line_items: restLineItems(lineItems) } : {}),
    tracking_company: tracking.company ?? 'Unknown',
    tracking_number: number,
    tracking_numbers: tracking.numbers.length > 0 ? [...tracking.numbers] : number ? [number] : [],
    tracking_url: url,
    tracking_urls: tracking.urls.length > 0 ? [...tracking.urls] : url ? [url] : [],
    notify_customer: true,
  };
}

function headers(shop: ShopConnection, idempotencyKey: string): Record<string, string> {
  return { 'X-Platform-Access-Token': shop.accessToken, 'Idempotency-Key': idempotencyKey };
}

function idOf(value: unknown): string | undefined {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}

const orderPath = (orderId: string) => `${API}/orders/${encodeURIComponent(restOrderId(orderId))}`;
const fulfillmentPath = (fulfillmentId: string) => `${API}/fulfillments/${encodeURIComponent(fulfillmentId)}`;

/** A write after the order, under its key; a 2xx is done (the answer's body is not needed). */
async function write(
  shop: ShopConnection,
  method: 'POST' | 'PUT',
  path: string,
  idempotencyKey: string,
  json?: unknown,
): Promise<void> {
  await callPlatform({ platform: PLATFORM, shop, method, path, headers: headers(shop, idempotencyKey), json });
}

export const storePlatformAAdapter: PlatformAdapter = {
  takesIdempotencyKeys: true,
  ...storePlatformAConnect,
  // CONTRACT §15, which one order's round trip never calls: loaded by the first of its calls.
  ...callsOnDemand(
    AFTER_SALE_CALLS,
    async () => (await import('./storeplatform-a-after-sale.js')).storePlatformAAfterSale,
  ),

  async createOrder(shop, order, idempotencyKey) {
    const answer = await callPlatform({
      platform: 'storeplatform_a',
      shop,
      method: 'POST',
      path: `${API}/orders.json`,
      headers: headers(shop, idempotencyKey),
      json: { order },
    });
    const created = isObject(answer.body) ? answer.body.order : undefined;
    const orderId = idOf(isObject(created) ? created.id : undefined);
    if (orderId === undefined) throw unexpectedAnswer('storeplatform_a', answer.status, 'no order id');
    const lineItemIds = lineItemIdsOf(created);
    return lineItemIds ? { orderId, status: answer.status, lineItemIds } : { orderId, status: answer.status };
  },

  async findOrder(shop, sourceIdentifier) {
    const answer = await callPlatform({
      platform: 'storeplatform_a',
      shop,
      method: 'GET',
      path: `${API}/orders.json?source_identifier=${encodeURIComponent(sourceIdentifier)}`,
      headers: { 'X-Platform-Access-Token': shop.accessToken },
    });
    const found = lookedUpOrder(isObject(answer.body) ? answer.body.orders : undefined, sourceIdentifier);
    if (found === undefined) throw unexpectedAnswer('storeplatform_a', answer.status, 'no list of orders');
    return found;
  },

  async createFulfillment(shop, orderId, tracking, idempotencyKey, options) {
    const answer = await callPlatform({
      platform: 'storeplatform_a',
      shop,
      method: 'POST',
      path: `${API}/orders/${encodeURIComponent(restOrderId(orderId))}/fulfillments.json`,
      headers: headers(shop, idempotencyKey),
      json: { fulfillment: restFulfillment(tracking, options?.lineItems) },
    });
    const created = isObject(answer.body) ? answer.body.fulfillment : undefined;
    const fulfillmentId = idOf(isObject(created) ? created.id : undefined);
    if (fulfillmentId === undefined) throw unexpectedAnswer('storeplatform_a', answer.status, 'no fulfillment id');
    return { fulfillmentId };
  },

  async updateFulfillmentTracking(shop, fulfillmentId, tracking, idempotencyKey) {
    const path = `${fulfillmentPath(fulfillmentId)}/update_tracking.json`;
    await write(shop, 'POST', path, idempotencyKey, { fulfillment: restTrackingUpdate(tracking) });
  },

  async cancelFulfillment(shop, fulfillmentId, idempotencyKey) {
    // Already cancelled: the platform answers 200 with the fulfillment as it is.
    await write(shop, 'POST', `${fulfillmentPath(fulfillmentId)}/cancel.json`, idempotencyKey);
  },

  async cancelOrder(shop, orderId, reason, idempotencyKey) {
    // Already cancelled: 200 with the order as it is; anything shipped: 422.
    await write(shop, 'POST', `${orderPath(orderId)}/cancel.json`, idempotencyKey, { reason });
  },

  async updateOrder(shop, orderId, changes, idempotencyKey) {
    const order = restOrderChanges(changes);
    if (order === null) return; // nothing to change
    await write(shop, 'PUT', `${orderPath(orderId)}.json`, idempotencyKey, { order });
  },

  async ordersChangedSince(shop, since, options = {}) {
    const answer = await callPlatform({
      platform: PLATFORM,
      shop,
      method: 'GET',
      path: `${API}/orders.json?${changesQuery(since, { ...options, limit: 250 })}`,
      headers: { 'X-Platform-Access-Token': shop.accessToken },
    });
    const page = changesPage(answer.body);
    if (!page) throw unexpectedAnswer(PLATFORM, answer.status, 'no list of orders with ids and updated_at');
    return page;
  },
};
