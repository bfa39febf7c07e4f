import { findEndpoint } from '../shared/events/endpoints.js';
import { apiHandler, ok } from '../shared/http/handler.js';
import { presentWebhookEndpoint } from '../shared/http/present.js';

export const handler = apiHandler(async ({ ownerId, path }) =>
  ok(presentWebhookEndpoint(await findEndpoint({ ownerId }, path.id))),
);
