import { apiHandler, ok } from '../shared/http/handler.js';
import { presentOrder } from '../shared/http/present.js';
import { findOrder, unroutedLineItems } from '../shared/order-flow/reading.js';

export const handler = apiHandler(async ({ ownerId, path }) => {
  const order = await findOrder({ ownerId }, path.rst_id, path.externalOrderId);
  return ok(presentOrder(order, await unroutedLineItems(order)));
});
