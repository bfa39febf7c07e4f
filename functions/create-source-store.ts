import { cipher } from '../shared/aws/kms-cipher.js';
import { parseInput } from '../shared/core/errors.js';
import type { SourceStore } from '../shared/entities/store.js';
import { created } from '../shared/http/handler.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentSourceStore } from '../shared/http/present.js';
import { CreateSourceStoreBody } from '../shared/http/schemas.js';
import { adapterFor } from '../shared/platforms/adapters.js';
import { createSourceStore } from '../shared/stores/stores.js';
import { withSubscriptions } from '../shared/stores/subscriptions.js';

const deps = { cipher, platforms: adapterFor };

export const handler = idempotentApiHandler(async ({ ownerId, path, body }) => {
  const input = parseInput(CreateSourceStoreBody, body);
  // A promise without a zone takes the shop's own (CONTRACT.md §16.1), read with the secrets given.
  const shopTimeZone = async (store: SourceStore) =>
    (await adapterFor(store.platform).shopTimeZone?.({ ...input, platform: store.platform })) ?? null;
  const store = await createSourceStore({ ...deps, shopTimeZone }, { ownerId }, path.rst_id, input);
  // Its webhooks subscribed (CONTRACT.md §12.1); the store is created whatever the platform answers.
  return created(presentSourceStore(await withSubscriptions(deps, 'source', store, input, true)));
});
