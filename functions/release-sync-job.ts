import { ok } from '../shared/http/handler.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentSyncJob } from '../shared/http/present.js';
import { releaseByOperator } from '../shared/order-flow/holding.js';
import { linesOf } from '../shared/order-flow/reading.js';

export const handler = idempotentApiHandler(async ({ ownerId, keyId, path, requestId }) => {
  const job = await releaseByOperator({ ownerId }, path.id, { type: 'api_key', id: keyId ?? 'unknown' }, requestId);
  return ok(presentSyncJob(job, await linesOf(job)));
});
