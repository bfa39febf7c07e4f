import { parseInput } from '../shared/core/errors.js';
import { ok } from '../shared/http/handler.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentResellerStore } from '../shared/http/present.js';
import { UpdateResellerStoreBody } from '../shared/http/schemas.js';
import { changeResellerStore } from '../shared/stores/stores.js';

export const handler = idempotentApiHandler(async ({ ownerId, path, body }) => {
  const changes = parseInput(UpdateResellerStoreBody, body);
  return ok(presentResellerStore(await changeResellerStore({ ownerId }, path.id, changes)));
});
