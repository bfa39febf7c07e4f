import { apiHandler, noContent } from '../shared/http/handler.js';
import { deleteSourceStore } from '../shared/stores/stores.js';

export const handler = apiHandler(async ({ ownerId, path }) => {
  await deleteSourceStore({ ownerId }, path.rst_id, path.id);
  return noContent();
});
