import { apiHandler, ok } from '../shared/http/handler.js';
import { presentResellerStore } from '../shared/http/present.js';
import { findResellerStore } from '../shared/stores/stores.js';

export const handler = apiHandler(async ({ ownerId, path }) =>
  ok(presentResellerStore(await findResellerStore({ ownerId }, path.id))),
);
