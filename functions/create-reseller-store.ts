import { cipher } from '../shared/aws/cipher.js';
import { apiHandler } from '../shared/http/handler.js';
import { created } from '../shared/http/types.js';
import { parseInput } from '../shared/core/validation.js';
import { presentResellerStore } from '../shared/http/present.js';
import { CreateResellerStoreBody } from '../shared/http/schemas.js';
import { createResellerStore } from '../shared/stores/stores.js';

export const handler = apiHandler(async ({ ownerId, body }) => {
  const input = parseInput(CreateResellerStoreBody, body);
  return created(presentResellerStore(await createResellerStore(cipher, { ownerId }, input)));
});
