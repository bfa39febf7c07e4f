import { apiHandler } from '../shared/http/handler.js';
import { ok } from '../shared/http/types.js';
import { parseInput } from '../shared/http/validation.js';
import { presentList, presentResellerStore } from '../shared/present.js';
import { PlainListQuery } from '../shared/schemas.js';
import { listResellerStores } from '../shared/stores.js';

export const handler = apiHandler(async ({ ownerId, query }) => {
  const { limit, starting_after } = parseInput(PlainListQuery, query);
  const page = await listResellerStores({ ownerId }, limit, starting_after);
  return ok(presentList('/v1/reseller_stores', page.data.map(presentResellerStore), page.hasMore));
});
