import { cipher } from '../shared/aws/kms-cipher.js';
import { parseInput } from '../shared/core/errors.js';
import { rotateEndpointSecret } from '../shared/events/endpoints.js';
import { ok } from '../shared/http/handler.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentWebhookEndpoint } from '../shared/http/present.js';
import { RotateWebhookEndpointSecretBody } from '../shared/http/schemas.js';

const deps = { cipher };

export const handler = idempotentApiHandler(
  async ({ ownerId, keyId, path, body }) => {
    parseInput(RotateWebhookEndpointSecretBody, body);
    const actor = { type: 'api_key', id: keyId ?? 'unknown' } as const;
    const { endpoint, secret } = await rotateEndpointSecret(deps, { ownerId }, path.id, actor);
    return ok(presentWebhookEndpoint(endpoint, secret));
    // The kept answer holds its secret encrypted (shared/http/idempotency.ts).
  },
  { sealSecrets: cipher },
);
