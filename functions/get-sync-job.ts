import { apiHandler } from '../shared/http/handler.js';
import { presentSyncJob } from '../shared/http/present.js';
import { ok } from '../shared/http/types.js';
import { findSyncJob } from '../shared/sync-jobs/sync-jobs.js';

export const handler = apiHandler(async ({ ownerId, path }) =>
  ok(presentSyncJob(await findSyncJob({ ownerId }, path.id))),
);
