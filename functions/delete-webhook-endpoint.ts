import { deleteEndpoint } from '../shared/events/endpoints.js';
import { apiHandler } from '../shared/http/handler.js';
import { noContent } from '../shared/http/types.js';

export const handler = apiHandler(async ({ ownerId, keyId, path }) => {
  await deleteEndpoint({ ownerId }, path.id, { type: 'api_key', id: keyId ?? 'unknown' });
  return noContent();
});
