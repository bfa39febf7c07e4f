import { apiHandler, ok } from '../shared/http/handler.js';
import { presentSyncJob } from '../shared/http/present.js';
import { findSyncJob, linesOf } from '../shared/order-flow/reading.js';

export const handler = apiHandler(async ({ ownerId, path }) => {
  const job = await findSyncJob({ ownerId }, path.id);
  return ok(presentSyncJob(job, await linesOf(job)));
});
