import { deleteEndpoint } from '../shared/events/endpoints.js';
import { apiHandler, noContent } from '../shared/http/handler.js';

export const handler = apiHandler(async ({ ownerId, keyId, path }) => {
  await deleteEndpoint({ ownerId }, path.id, { type: 'api_key', id: keyId ?? 'unknown' });
  return noContent();
});
