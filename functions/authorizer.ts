import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { resolveKey } from '../shared/api-keys/api-keys.js';
import { lambdaHandler, logger } from '../shared/core/telemetry.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Resolves `Authorization: Bearer <key>` to its owner. It always allows the request and passes
 * the verdict in its context: an HTTP API answers a denial with its own 403 body, while the
 * contract wants `401 unauthorized` in its error shape, which the route's middleware writes.
 * A lookup that fails throws: API Gateway answers 500 and, unlike a verdict, caches no error.
 */
export const handler = lambdaHandler(async (event: APIGatewayRequestAuthorizerEventV2) => {
  const header = Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === 'authorization')?.[1];
  const key = header ? BEARER.exec(header)?.[1] : undefined;
  if (!key) return { isAuthorized: true, context: {} };
  try {
    const record = await resolveKey(key);
    return { isAuthorized: true, context: record ? { ownerId: record.ownerId, keyId: record.keyId } : {} };
  } catch (error) {
    // A verdict would be cached for the key (docs/design.md, "Authentication"); an error is not.
    logger.error('key lookup failed', error as Error);
    throw new Error('the API keys could not be read');
  }
});
