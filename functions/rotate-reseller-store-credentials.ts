import { cipher } from '../shared/aws/kms-cipher.js';
import { parseInput } from '../shared/core/errors.js';
import { ok } from '../shared/http/handler.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentResellerStore } from '../shared/http/present.js';
import { RotateCredentialsBody } from '../shared/http/schemas.js';
import { adapterFor } from '../shared/platforms/adapters.js';
import { rotateResellerStoreCredentials } from '../shared/stores/credentials.js';
import { withSubscriptions } from '../shared/stores/subscriptions.js';

const deps = { cipher, platforms: adapterFor };

export const handler = idempotentApiHandler(async ({ ownerId, keyId, path, body }) => {
  const secrets = parseInput(RotateCredentialsBody, body);
  const actor = { type: 'api_key', id: keyId ?? 'unknown' } as const;
  const store = await rotateResellerStoreCredentials(deps, { ownerId }, path.id, secrets, actor);
  // A new token: the subscriptions are checked with it (CONTRACT.md §12.1).
  if (secrets.accessToken === undefined) return ok(presentResellerStore(store));
  const plain = { accessToken: secrets.accessToken, webhookSecret: secrets.webhookSecret ?? '' };
  return ok(presentResellerStore(await withSubscriptions(deps, 'reseller', store, plain, false)));
});
