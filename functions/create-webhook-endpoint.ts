import { cipher } from '../shared/aws/kms-cipher.js';
import { parseInput } from '../shared/core/errors.js';
import { createEndpoint } from '../shared/events/endpoints.js';
import { created } from '../shared/http/handler.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentWebhookEndpoint } from '../shared/http/present.js';
import { CreateWebhookEndpointBody } from '../shared/http/schemas.js';

const deps = { cipher };

export const handler = idempotentApiHandler(
  async ({ ownerId, keyId, body }) => {
    const input = parseInput(CreateWebhookEndpointBody, body);
    const actor = { type: 'api_key', id: keyId ?? 'unknown' } as const;
    const { endpoint, secret } = await createEndpoint(deps, { ownerId }, input, actor);
    return created(presentWebhookEndpoint(endpoint, secret));
    // The kept answer holds its secret encrypted (shared/http/idempotency.ts).
  },
  { sealSecrets: cipher },
);
