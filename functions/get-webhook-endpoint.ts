import { findEndpoint } from '../shared/events/endpoints.js';
import { apiHandler } from '../shared/http/handler.js';
import { presentWebhookEndpoint } from '../shared/http/present.js';
import { ok } from '../shared/http/types.js';

export const handler = apiHandler(async ({ ownerId, path }) =>
  ok(presentWebhookEndpoint(await findEndpoint({ ownerId }, path.id))),
);
