import { cipher } from '../shared/aws/cipher.js';
import { acceptFulfillment } from '../shared/fulfillments/intake.js';
import { webhookHandler } from '../shared/http/handler.js';
import { ok } from '../shared/http/types.js';
import { assertTopic, parseWebhookJson, verifiedStores } from '../shared/webhooks/verify.js';

/** `fulfillments/create` from a source store: verify against every store of the shop, then send the tracking back (or keep it). */
export const handler = webhookHandler(async ({ event, rawBody }) => {
  const sources = await verifiedStores(cipher, event, rawBody, 'SST');
  assertTopic(event, 'fulfillments/create');
  await acceptFulfillment(sources, parseWebhookJson(event, rawBody));
  return ok({ object: 'webhook_receipt' });
});
