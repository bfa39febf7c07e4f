import { cipher } from '../shared/aws/kms-cipher.js';
import { metricsMiddleware } from '../shared/core/telemetry.js';
import { assertJsonContentType, ok, webhookHandler } from '../shared/http/handler.js';
import { acceptCancellation, acceptEdit } from '../shared/order-flow/changing.js';
import { acceptOrder, readRoutingEarly } from '../shared/order-flow/receiving.js';
import { AFTER_SALE_TOPICS, acceptAfterSale } from '../shared/order-flow/refunding-request.js';
import { topicOf, verifiedStores, verifiedStoresOfEitherKind } from '../shared/stores/verify.js';

const deps = { cipher };

/**
 * `orders/create` from a reseller store: verify, route by vendor tag, create and enqueue sync jobs.
 * The order is read from the raw signed bytes, so every number keeps its digits (CONTRACT.md §5).
 * `orders/cancelled` from a reseller's shop or a supplier's (CONTRACT.md §10.4–10.5): the order's
 * jobs stop or are cancelled; `orders/updated` (§10.6): the reseller's edits reach its jobs; the
 * refunds and returns of §15 (`refunds/create`, `returns/approve|cancel|close`) reach theirs. The
 * topic is checked once the signature is: any other is a 400.
 */
export const handler = webhookHandler(async ({ call, event, rawBody, json, requestId }) => {
  if (call.topic === undefined || call.topic.trim() === 'orders/create') {
    // Beside the lookup, not after it: the routing of the store the shop's last order was verified for.
    const early = readRoutingEarly(call.shopDomain);
    const [reseller] = await verifiedStores(deps, 'reseller', call);
    topicOf(call, ['orders/create']);
    assertJsonContentType(event);
    const syncJobIds = await acceptOrder(reseller, rawBody, { requestId, early });
    return ok({ object: 'webhook_receipt', syncJobIds });
  }
  const stores = await verifiedStoresOfEitherKind(deps, call);
  const topic = topicOf(call, ['orders/create', 'orders/cancelled', 'orders/updated', ...AFTER_SALE_TOPICS]);
  assertJsonContentType(event);
  const afterSale = AFTER_SALE_TOPICS.find((t) => t === topic);
  const syncJobIds =
    topic === 'orders/updated'
      ? await acceptEdit(stores.resellerStores, json(), rawBody, requestId)
      : afterSale
        ? await acceptAfterSale(afterSale, stores, json(), requestId)
        : await acceptCancellation(stores, json(), requestId);
  return ok({ object: 'webhook_receipt', syncJobIds });
}, metricsMiddleware());
