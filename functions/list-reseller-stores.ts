import { parseInput } from '../shared/core/errors.js';
import { apiHandler, ok } from '../shared/http/handler.js';
import { presentList, presentResellerStore } from '../shared/http/present.js';
import { PlainListQuery } from '../shared/http/schemas.js';
import { listResellerStores } from '../shared/stores/stores.js';

export const handler = apiHandler(async ({ ownerId, query }) => {
  const { limit, startingAfter } = parseInput(PlainListQuery, query);
  const page = await listResellerStores({ ownerId }, limit, startingAfter);
  return ok(presentList('/v1/reseller_stores', page.data.map(presentResellerStore), page.hasMore));
});
