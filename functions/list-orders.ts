import { parseInput } from '../shared/core/errors.js';
import { apiHandler, ok } from '../shared/http/handler.js';
import { presentList, presentOrder } from '../shared/http/present.js';
import { ListOrdersQuery } from '../shared/http/schemas.js';
import { listOrders, unroutedLineItems } from '../shared/order-flow/reading.js';

export const handler = apiHandler(async ({ ownerId, path, query }) => {
  const { limit, startingAfter, filters } = parseInput(ListOrdersQuery, query);
  const page = await listOrders({ ownerId }, path.rst_id, limit, startingAfter, filters);
  const data = await Promise.all(page.data.map(async (order) => presentOrder(order, await unroutedLineItems(order))));
  return ok(presentList(`/v1/reseller_stores/${path.rst_id}/orders`, data, page.hasMore));
});
