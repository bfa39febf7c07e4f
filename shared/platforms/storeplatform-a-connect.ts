/**
 * storeplatform_a's calls for staying connected (PLATFORM-API.md, "Staying connected"): the order read
 * before it goes, webhook subscriptions, token refresh and tags, on the REST Admin API.
 */
import { randomUUID } from 'node:crypto';
import { STOREPLATFORM_A_API_VERSION } from './api-version.js';
import { restOrderRead, restWebhookOf, restWebhooksOf } from './connect-read.js';
import { callPlatform, unexpectedAnswer } from './http.js';
import { PlatformError } from './platform-errors.js';
import { type ConnectCalls, restOrderId, type ShopConnection } from './port.js';
import { isObject } from './rest.js';
import { refreshAccessToken } from './token-refresh.js';

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
