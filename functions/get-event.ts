import { findEvent } from '../shared/events/events.js';
import { apiHandler, ok } from '../shared/http/handler.js';
import { presentEventWithDeliveries } from '../shared/http/present.js';

export const handler = apiHandler(async ({ ownerId, path }) => {
  const { event, deliveries } = await findEvent({ ownerId }, path.id);
  return ok(presentEventWithDeliveries(event, deliveries));
});
