import { cipher } from '../shared/aws/cipher.js';
import { parseInput } from '../shared/core/validation.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentSourceStore } from '../shared/http/present.js';
import { CreateSourceStoreBody } from '../shared/http/schemas.js';
import { created } from '../shared/http/types.js';
import { createSourceStore } from '../shared/stores/source-stores.js';

const deps = { cipher };

export const handler = idempotentApiHandler(async ({ ownerId, path, body }) => {
  const input = parseInput(CreateSourceStoreBody, body);
  return created(presentSourceStore(await createSourceStore(deps, { ownerId }, path.rst_id, input)));
});
