import { parseInput } from '../shared/core/errors.js';
import { ok } from '../shared/http/handler.js';
import { idempotentApiHandler } from '../shared/http/idempotent-handler.js';
import { presentSyncJob } from '../shared/http/present.js';
import { HoldSyncJobBody } from '../shared/http/schemas.js';
import { holdByOperator } from '../shared/order-flow/holding.js';
import { linesOf } from '../shared/order-flow/reading.js';

export const handler = idempotentApiHandler(async ({ ownerId, keyId, path, body }) => {
  const input = parseInput(HoldSyncJobBody, body);
  const job = await holdByOperator({ ownerId }, path.id, { type: 'api_key', id: keyId ?? 'unknown' }, input?.note);
  return ok(presentSyncJob(job, await linesOf(job)));
});
