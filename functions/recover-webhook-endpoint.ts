import { parseInput } from '../shared/core/errors.js';
import { recoverEndpoint } from '../shared/events/recover.js';
import { ok } from '../shared/http/handler.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentRecovery } from '../shared/http/present.js';
import { RecoverWebhookEndpointBody } from '../shared/http/schemas.js';

export const handler = idempotentApiHandler(async ({ ownerId, keyId, path, body }) => {
  const { since } = parseInput(RecoverWebhookEndpointBody, body);
  const actor = { type: 'api_key', id: keyId ?? 'unknown' } as const;
  return ok(presentRecovery(await recoverEndpoint({ ownerId }, path.id, since, actor)));
});
