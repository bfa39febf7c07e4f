import { parseInput } from '../shared/core/errors.js';
import { updateEndpoint } from '../shared/events/endpoints.js';
import { ok } from '../shared/http/handler.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentWebhookEndpoint } from '../shared/http/present.js';
import { UpdateWebhookEndpointBody } from '../shared/http/schemas.js';

export const handler = idempotentApiHandler(async ({ ownerId, keyId, path, body }) => {
  const changes = parseInput(UpdateWebhookEndpointBody, body);
  const actor = { type: 'api_key', id: keyId ?? 'unknown' } as const;
  return ok(presentWebhookEndpoint(await updateEndpoint({ ownerId }, path.id, changes, actor)));
});
