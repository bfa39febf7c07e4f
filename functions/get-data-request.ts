import { apiHandler, ok } from '../shared/http/handler.js';
import { presentDataRequest } from '../shared/http/present.js';
import { findDataRequest } from '../shared/privacy/data-requests.js';

export const handler = apiHandler(async ({ ownerId, path }) =>
  ok(presentDataRequest(await findDataRequest({ ownerId }, path.rst_id, path.id))),
);
