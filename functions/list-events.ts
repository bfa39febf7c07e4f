import { parseInput } from '../shared/core/errors.js';
import { listEvents } from '../shared/events/events.js';
import { apiHandler, ok } from '../shared/http/handler.js';
import { presentEvent, presentList } from '../shared/http/present.js';
import { ListEventsQuery } from '../shared/http/schemas.js';

export const handler = apiHandler(async ({ ownerId, query }) => {
  const { limit, startingAfter, filters } = parseInput(ListEventsQuery, query);
  const page = await listEvents({ ownerId }, limit, startingAfter, filters);
  return ok(presentList('/v1/events', page.data.map(presentEvent), page.hasMore));
});
