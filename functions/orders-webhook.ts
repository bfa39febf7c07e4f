import { cipher } from '../shared/aws/cipher.js';
import { metricsMiddleware } from '../shared/core/metrics.js';
import { webhookHandler } from '../shared/http/handler.js';
import { assertJsonContentType } from '../shared/http/middlewares.js';
import { ok } from '../shared/http/types.js';
import { acceptOrder } from '../shared/orders/accept-order.js';
import { assertTopic, verifiedStores } from '../shared/webhooks/verify.js';

const deps = { cipher };

/**
 * `orders/create` from a reseller store: verify, route by vendor tag, create and enqueue sync jobs.
 * The order is read from the raw signed bytes, so every number keeps its digits (CONTRACT.md §5).
 */
export const handler = webhookHandler(async ({ delivery, event, rawBody, requestId }) => {
  const [reseller] = await verifiedStores(deps, 'reseller', delivery);
  assertTopic(delivery, 'orders/create');
  assertJsonContentType(event);
  const syncJobIds = await acceptOrder(reseller, rawBody, requestId);
  return ok({ object: 'webhook_receipt', syncJobIds });
}, metricsMiddleware());
