import { parseInput } from '../shared/core/errors.js';
import { apiHandler, ok } from '../shared/http/handler.js';
import { presentAttempt, presentList } from '../shared/http/present.js';
import { PlainListQuery } from '../shared/http/schemas.js';
import { listAttempts } from '../shared/order-flow/reading.js';

export const handler = apiHandler(async ({ ownerId, path, query }) => {
  const { limit, startingAfter } = parseInput(PlainListQuery, query);
  const { job, page } = await listAttempts({ ownerId }, path.id, limit, startingAfter);
  const url = `/v1/sync_jobs/${job.id}/attempts`;
  return ok(
    presentList(
      url,
      page.data.map((attempt) => presentAttempt(job.id, attempt)),
      page.hasMore,
    ),
  );
});
