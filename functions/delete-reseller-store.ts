import { apiHandler, noContent } from '../shared/http/handler.js';
import { deleteResellerStore } from '../shared/stores/stores.js';

export const handler = apiHandler(async ({ ownerId, path }) => {
  await deleteResellerStore({ ownerId }, path.id);
  return noContent();
});
