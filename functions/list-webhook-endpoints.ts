import { parseInput } from '../shared/core/errors.js';
import { listEndpoints } from '../shared/events/endpoints.js';
import { apiHandler, ok } from '../shared/http/handler.js';
import { presentList, presentWebhookEndpoint } from '../shared/http/present.js';
import { PlainListQuery } from '../shared/http/schemas.js';

export const handler = apiHandler(async ({ ownerId, query }) => {
  const { limit, startingAfter } = parseInput(PlainListQuery, query);
  const page = await listEndpoints({ ownerId }, limit, startingAfter);
  return ok(
    presentList(
      '/v1/webhook_endpoints',
      page.data.map((e) => presentWebhookEndpoint(e)),
      page.hasMore,
    ),
  );
});
