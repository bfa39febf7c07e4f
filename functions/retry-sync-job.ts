import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentSyncJob } from '../shared/http/present.js';
import { ok } from '../shared/http/types.js';
import { retryJob } from '../shared/sync-jobs/retry.js';

export const handler = idempotentApiHandler(async ({ ownerId, keyId, path, requestId }) =>
  ok(presentSyncJob(await retryJob({ ownerId }, path.id, { type: 'api_key', id: keyId ?? 'unknown' }, requestId))),
);
