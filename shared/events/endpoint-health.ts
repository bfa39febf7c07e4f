import { config } from '../core/config.js';
import { now } from '../core/ids.js';
import { logger } from '../core/telemetry.js';
import {
  clearEndpointFailing,
  disableFailingEndpoint,
  markEndpointFailing,
  type WebhookEndpoint,
} from '../entities/webhook-endpoint.js';

/**
 * Whether an endpoint still deserves deliveries (CONTRACT.md §14), in the manner of Svix: it is
 * `failingSince` its first failed try after a delivered one; when every try has failed for 5 days
 * (ENDPOINT_FAILING_SECONDS) it is disabled, with its reason. A change of the endpoint (a PATCH
 * enabling it again, a new URL) starts the 5 days again: they count from its `updatedAt` at the latest.
 */

export const DISABLED_REASON = 'every delivery failed for 5 days';

/** A delivered try: the endpoint is no longer failing (one write only when it was). */
export const endpointSucceeded = async (endpoint: WebhookEndpoint) => {
  if (!endpoint.failingSince) return;
  await clearEndpointFailing(endpoint);
};

/** A failed try: the endpoint is failing from now, unless it already was; disabled after 5 days of it. */
export const endpointFailed = async (endpoint: WebhookEndpoint, at = Date.now()) => {
  if (!endpoint.failingSince) return markEndpointFailing(endpoint, new Date(at).toISOString());
  const since = Math.max(Date.parse(endpoint.failingSince), Date.parse(endpoint.updatedAt));
  if (endpoint.status !== 'enabled' || at - since < config.endpointFailingSeconds() * 1000) return;
  // Not if a delivery succeeded meanwhile, or the endpoint was changed.
  await disableFailingEndpoint(endpoint, DISABLED_REASON, now());
  logger.warn('webhook endpoint disabled: every delivery failed for 5 days');
};
