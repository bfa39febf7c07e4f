import { parseInput } from '../shared/core/errors.js';
import { apiHandler, ok } from '../shared/http/handler.js';
import { presentList, presentSourceStore } from '../shared/http/present.js';
import { PlainListQuery } from '../shared/http/schemas.js';
import { listSourceStores } from '../shared/stores/stores.js';

export const handler = apiHandler(async ({ ownerId, path, query }) => {
  const { limit, startingAfter } = parseInput(PlainListQuery, query);
  const page = await listSourceStores({ ownerId }, path.rst_id, limit, startingAfter);
  const url = `/v1/reseller_stores/${path.rst_id}/source_stores`;
  return ok(presentList(url, page.data.map(presentSourceStore), page.hasMore));
});
