import { cipher } from '../shared/aws/cipher.js';
import { webhookHandler } from '../shared/http/handler.js';
import { ok } from '../shared/http/types.js';
import { acceptOrder } from '../shared/orders/accept-order.js';
import { assertTopic, parseWebhookJson, verifiedStores } from '../shared/webhooks/verify.js';

/** `orders/create` from a reseller store: verify, route by vendor tag, create and enqueue sync jobs. */
export const handler = webhookHandler(async ({ event, rawBody }) => {
  const [reseller] = await verifiedStores(cipher, event, rawBody, 'RST');
  assertTopic(event, 'orders/create');
  const syncJobIds = await acceptOrder(reseller, parseWebhookJson(event, rawBody));
  return ok({ object: 'webhook_receipt', syncJobIds });
});
