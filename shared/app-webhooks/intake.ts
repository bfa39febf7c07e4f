import type { Deps } from '../aws/deps.js';
import { config } from '../core/config.js';
import { ValidationError } from '../core/errors.js';
import { derivedId, newId, now } from '../core/ids.js';
import { logger } from '../core/telemetry.js';
import { type AppWebhookStore, keepAppWebhook } from '../entities/app-webhook.js';
import type { StoreOnShop } from '../entities/store.js';
import { verifiedStoresOfEitherKind, type WebhookCall } from '../stores/verify.js';
import { sendWork } from '../work/runner.js';
import { APP_TOPICS } from './topics.js';

/** How long a queued call is kept if its worker never gets to it: SQS's longest retention. */
const KEPT_SECONDS = 14 * 86_400;

/** What the app-webhook queue's message says: the kept call's id, never its body. */
export interface AppWebhookMessage {
  appWebhookId: string;
  requestId?: string;
}

const storeOf = (store: StoreOnShop): AppWebhookStore => ({
  kind: store.kind,
  id: store.id,
  ownerId: store.ownerId,
  resellerStoreId: store.resellerStoreId,
  deletedAt: store.deletedAt,
});

/**
 * `POST /v1/app/webhook` (CONTRACT.md §12.2): verified against the reseller and source stores of the
 * shop domain (soft-deleted included; none verifying is a 401), then its topic's handler from
 * APP_TOPICS, at once or through the app-webhook queue. A topic not in the table is accepted and
 * ignored. `json`: the signed body, parsed once verified (415 and 400 as every webhook).
 */
export const acceptAppWebhook = async (
  deps: Pick<Deps, 'cipher'>,
  call: WebhookCall,
  json: () => unknown,
  requestId: string,
): Promise<'handled' | 'queued' | 'ignored'> => {
  const { resellerStores, sourceStores } = await verifiedStoresOfEitherKind(deps, call);
  const topic = call.topic?.trim();
  if (!topic) throw new ValidationError('X-Platform-Topic is required on the app webhook.', 'X-Platform-Topic');
  const handler = APP_TOPICS[topic];
  if (!handler) {
    logger.info('app webhook of a topic the service does not handle; ignored', { topic });
    return 'ignored';
  }
  const stores = [...resellerStores, ...sourceStores].map(storeOf);
  // Parsed even when queued: a body that is not JSON is the sender's 400 now, not a dead letter later.
  const payload = json();
  handler.check?.(payload);
  const shopDomain = resellerStores[0]?.shopDomain ?? sourceStores[0].shopDomain;
  const receivedAt = now();
  if (handler.run === 'now') {
    await handler.handle(deps, { topic, shopDomain, stores, payload, receivedAt, requestId });
    return 'handled';
  }
  // A redelivery (same webhook id) finds the call kept: one item, its message sent again.
  const id = call.webhookId ? derivedId('awh', shopDomain, topic, call.webhookId.slice(0, 255)) : newId('awh');
  await keepAppWebhook({
    id,
    topic,
    shopDomain,
    stores,
    body: call.rawBody.toString('utf8'),
    receivedAt,
    requestId,
    expiresAt: Math.floor(Date.parse(receivedAt) / 1000) + KEPT_SECONDS,
  });
  const message: AppWebhookMessage = { appWebhookId: id, requestId };
  await sendWork(config.appQueueUrl(), [message]);
  return 'queued';
};
