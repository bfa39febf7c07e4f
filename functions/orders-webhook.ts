import { cipher } from '../shared/aws/cipher.js';
import { webhookHandler } from '../shared/http/handler.js';
import { ok } from '../shared/http/types.js';
import { acceptOrder } from '../shared/orders/accept-order.js';
import { assertTopic, verifiedStores } from '../shared/webhooks/verify.js';

const deps = { cipher };

/** `orders/create` from a reseller store: verify, route by vendor tag, create and enqueue sync jobs. */
export const handler = webhookHandler(async ({ delivery, json }) => {
  const [reseller] = await verifiedStores(deps, 'reseller', delivery);
  assertTopic(delivery, 'orders/create');
  const syncJobIds = await acceptOrder(reseller, json());
  return ok({ object: 'webhook_receipt', syncJobIds });
});
