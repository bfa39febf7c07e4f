import { apiHandler } from '../shared/http/handler.js';
import { ok } from '../shared/http/types.js';
import { parseInput } from '../shared/http/validation.js';
import { presentList, presentSyncJob } from '../shared/present.js';
import { ListSyncJobsQuery } from '../shared/schemas.js';
import { listSyncJobs } from '../shared/sync-jobs.js';

export const handler = apiHandler(async ({ ownerId, query }) => {
  const { limit, starting_after, ...filters } = parseInput(ListSyncJobsQuery, query);
  const page = await listSyncJobs(ownerId, limit, starting_after, filters);
  return ok(presentList('/v1/sync_jobs', page.data.map(presentSyncJob), page.hasMore));
});
