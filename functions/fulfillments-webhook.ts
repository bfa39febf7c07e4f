import { cipher } from '../shared/aws/cipher.js';
import { acceptFulfillment } from '../shared/fulfillments/intake.js';
import { webhookHandler } from '../shared/http/handler.js';
import { ok } from '../shared/http/types.js';
import { assertTopic, verifiedStores } from '../shared/webhooks/verify.js';

const deps = { cipher };

/**
 * `fulfillments/create` from a source store: verified against every source store of the shop
 * (resellers may share a supplier), then the tracking goes back to each reseller order (or is kept).
 */
export const handler = webhookHandler(async ({ delivery, json, requestId }) => {
  const sources = await verifiedStores(deps, 'source', delivery);
  assertTopic(delivery, 'fulfillments/create');
  await acceptFulfillment(sources, json(), requestId);
  return ok({ object: 'webhook_receipt' });
});
