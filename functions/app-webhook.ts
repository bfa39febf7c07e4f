import { acceptAppWebhook } from '../shared/app-webhooks/intake.js';
import { cipher } from '../shared/aws/kms-cipher.js';
import { metricsMiddleware } from '../shared/core/telemetry.js';
import { ok, webhookHandler } from '../shared/http/handler.js';

const deps = { cipher };

/**
 * The app's own webhooks (CONTRACT.md §12.2, §13): `app/uninstalled` and the compliance topics,
 * verified against the shop's reseller and source stores, then handled by their topic's entry in
 * shared/app-webhooks/topics.ts; a topic the service does not handle is answered 200.
 */
export const handler = webhookHandler(async ({ call, json, requestId }) => {
  await acceptAppWebhook(deps, call, json, requestId);
  return ok({ object: 'webhook_receipt' });
}, metricsMiddleware());
