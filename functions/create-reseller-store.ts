import { cipher } from '../shared/aws/cipher.js';
import { parseInput } from '../shared/core/validation.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentResellerStore } from '../shared/http/present.js';
import { CreateResellerStoreBody } from '../shared/http/schemas.js';
import { created } from '../shared/http/types.js';
import { createResellerStore } from '../shared/stores/reseller-stores.js';

const deps = { cipher };

export const handler = idempotentApiHandler(async ({ ownerId, body }) => {
  const input = parseInput(CreateResellerStoreBody, body);
  return created(presentResellerStore(await createResellerStore(deps, { ownerId }, input)));
});
