import { cipher } from '../shared/aws/cipher.js';
import { parseInput } from '../shared/core/validation.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentResellerStore } from '../shared/http/present.js';
import { RotateCredentialsBody } from '../shared/http/schemas.js';
import { ok } from '../shared/http/types.js';
import { rotateResellerStoreCredentials } from '../shared/stores/credentials.js';

const deps = { cipher };

export const handler = idempotentApiHandler(async ({ ownerId, keyId, path, body }) => {
  const secrets = parseInput(RotateCredentialsBody, body);
  const actor = { type: 'api_key', id: keyId ?? 'unknown' } as const;
  return ok(presentResellerStore(await rotateResellerStoreCredentials(deps, { ownerId }, path.id, secrets, actor)));
});
