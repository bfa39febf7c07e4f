import { apiHandler, ok } from '../shared/http/handler.js';
import { presentSourceStore } from '../shared/http/present.js';
import { findSourceStore } from '../shared/stores/stores.js';

export const handler = apiHandler(async ({ ownerId, path }) =>
  ok(presentSourceStore(await findSourceStore({ ownerId }, path.rst_id, path.id))),
);
