import { cipher } from '../shared/aws/kms-cipher.js';
import { parseInput } from '../shared/core/errors.js';
import { created } from '../shared/http/handler.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentResellerStore } from '../shared/http/present.js';
import { CreateResellerStoreBody } from '../shared/http/schemas.js';
import { adapterFor } from '../shared/platforms/adapters.js';
import { createResellerStore } from '../shared/stores/stores.js';
import { withSubscriptions } from '../shared/stores/subscriptions.js';

const deps = { cipher, platforms: adapterFor };

export const handler = idempotentApiHandler(async ({ ownerId, body }) => {
  const input = parseInput(CreateResellerStoreBody, body);
  const store = await createResellerStore(deps, { ownerId }, input);
  // Its webhooks subscribed (CONTRACT.md §12.1); the store is created whatever the platform answers.
  return created(presentResellerStore(await withSubscriptions(deps, 'reseller', store, input, true)));
});
