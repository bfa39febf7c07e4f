import type { SQSRecord } from 'aws-lambda';
import { sqsBatchHandler } from '../shared/aws/batch.js';
import { ENVIRONMENT_LIFE, kms, kmsCipher } from '../shared/aws/kms-cipher.js';
import { config } from '../shared/core/config.js';
import { lambdaHandler, logger, metricsMiddleware } from '../shared/core/telemetry.js';
import { adapterFor } from '../shared/platforms/adapters.js';
import { pollStore } from '../shared/polling/poll-store.js';
import { pollMessageOf } from '../shared/polling/schedule.js';

/**
 * The secrets are kept for the environment's life as everywhere, for up to 20,000 stores rather than
 * 1,000: each store comes back every interval to one
 * of two environments (the poll queue's concurrency), so a warm environment decrypts a store's token
 * once in its life instead of at every poll (docs/performance.md, "Polling"). A rotated token is
 * another ciphertext, so another entry: the cache never answers an old secret for a new one.
 */
const deps = { cipher: kmsCipher(kms, config.keyId, { ttlMs: ENVIRONMENT_LIFE, max: 20_000 }), platforms: adapterFor };

const poll = async (received: SQSRecord) => {
  const store = pollMessageOf(received);
  if (!store) return void logger.error('not a poll message; dropped');
  // A shop's failure is the store's (counted, its watermark left): only the service's own errors throw.
  await pollStore(deps, store);
};

/** The poll queue's consumer: each message one store's poll (shared/polling/poll-store.ts). */
export const handler = lambdaHandler(sqsBatchHandler(poll), metricsMiddleware());
