import { parseInput } from '../shared/core/errors.js';
import { apiHandler, ok } from '../shared/http/handler.js';
import { presentList, presentSyncJob } from '../shared/http/present.js';
import { ListSyncJobsQuery } from '../shared/http/schemas.js';
import { linesOf, listSyncJobs } from '../shared/order-flow/reading.js';

export const handler = apiHandler(async ({ ownerId, query }) => {
  const { limit, startingAfter, filters } = parseInput(ListSyncJobsQuery, query);
  const page = await listSyncJobs({ ownerId }, limit, startingAfter, filters);
  const data = await Promise.all(page.data.map(async (job) => presentSyncJob(job, await linesOf(job))));
  return ok(presentList('/v1/sync_jobs', data, page.hasMore));
});
