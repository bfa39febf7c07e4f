import { cipher } from '../shared/aws/kms-cipher.js';
import { ok, webhookHandler } from '../shared/http/handler.js';
import { acceptFulfillment, acceptFulfillmentEvent } from '../shared/order-flow/propagating-intake.js';
import { topicOf, verifiedStores } from '../shared/stores/verify.js';

const deps = { cipher };

/**
 * `fulfillments/create` and `fulfillments/update` from a source store: verified against every
 * source store of the shop (resellers may share a supplier), then the parcel, its tracking or its
 * cancellation goes back to each reseller order (or is kept until its job is known).
 * `fulfillment_events/create`: the carrier's progress on a parcel (CONTRACT.md §16.2).
 */
export const handler = webhookHandler(async ({ call, json, requestId }) => {
  const sourceStores = await verifiedStores(deps, 'source', call);
  const topic = topicOf(call, ['fulfillments/create', 'fulfillments/update', 'fulfillment_events/create']);
  if (topic === 'fulfillment_events/create') await acceptFulfillmentEvent(sourceStores, json());
  else await acceptFulfillment(sourceStores, json(), requestId, topic);
  return ok({ object: 'webhook_receipt' });
});
