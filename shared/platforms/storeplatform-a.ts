/** storeplatform_a: the REST Admin API (PLATFORM-API.md). */
import { callPlatform, unexpectedAnswer } from './http.js';
import { lookedUpOrderId, type PlatformAdapter, restOrderId, type ShopConnection, type Tracking } from './port.js';

const API = '/admin/api/2025-07';

export interface RestFulfillment {
  tracking_company: string;
  tracking_number: string | null;
  tracking_numbers: string[];
  tracking_url: string | null;
  tracking_urls: string[];
  notify_customer: true;
}

/** The REST fulfillment body; single and list fields fill each other so either reading of it is complete. */
export function restFulfillment(tracking: Tracking): RestFulfillment {
  const number = tracking.number ?? tracking.numbers[0] ?? null;
  const url = tracking.url ?? tracking.urls[0] ?? null;
  return {
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

export const storePlatformAAdapter: PlatformAdapter = {
  takesIdempotencyKeys: true,

  async createOrder(shop, order, idempotencyKey) {
    const answer = await callPlatform({
      platform: 'storeplatform_a',
      shop,
      method: 'POST',
      path: `${API}/orders.json`,
      headers: headers(shop, idempotencyKey),
      json: { order },
    });
    const orderId = idOf((answer.body as { order?: { id?: unknown } } | undefined)?.order?.id);
    if (orderId === undefined) throw unexpectedAnswer('storeplatform_a', answer.status, 'no order id');
    return { orderId, status: answer.status };
  },

  async findOrder(shop, sourceIdentifier) {
    const answer = await callPlatform({
      platform: 'storeplatform_a',
      shop,
      method: 'GET',
      path: `${API}/orders.json?source_identifier=${encodeURIComponent(sourceIdentifier)}`,
      headers: { 'X-Platform-Access-Token': shop.accessToken },
    });
    const orderId = lookedUpOrderId((answer.body as { orders?: unknown } | undefined)?.orders, sourceIdentifier);
    if (orderId === undefined) throw unexpectedAnswer('storeplatform_a', answer.status, 'no list of orders');
    return orderId === null ? null : { orderId };
  },

  async createFulfillment(shop, orderId, tracking, idempotencyKey) {
    const answer = await callPlatform({
      platform: 'storeplatform_a',
      shop,
      method: 'POST',
      path: `${API}/orders/${encodeURIComponent(restOrderId(orderId))}/fulfillments.json`,
      headers: headers(shop, idempotencyKey),
      json: { fulfillment: restFulfillment(tracking) },
    });
    const fulfillmentId = idOf((answer.body as { fulfillment?: { id?: unknown } } | undefined)?.fulfillment?.id);
    if (fulfillmentId === undefined) throw unexpectedAnswer('storeplatform_a', answer.status, 'no fulfillment id');
    return { fulfillmentId };
  },
};
