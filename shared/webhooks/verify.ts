import type { Deps } from '../aws/deps.js';
import { InvalidSignatureError, ValidationError } from '../core/errors.js';
import { verifySignature } from '../domain/hmac.js';
import type { StoreKind, StoreOnShop } from '../entities/store.js';
import { webhookSecretOf } from '../stores/secrets.js';
import { previousWebhookSecretOf, storesOnShop } from '../stores/shop-lookup.js';

export type WebhookTopic = 'orders/create' | 'fulfillments/create';

/** What a platform's webhook delivery says about itself (its `X-Platform-*` headers) and its raw body. */
export interface WebhookDelivery {
  shopDomain: string | undefined;
  signature: string | undefined;
  topic: string | undefined;
  rawBody: Buffer;
}

/**
 * The stores of one kind registered under the delivery's shop domain whose webhook secret
 * verifies the HMAC of the raw body, before anything of the body is parsed. Every candidate is
 * checked in constant time; none verifying (or no candidate, or no header) is a 401.
 */
export const verifiedStores = async (
  deps: Pick<Deps, 'cipher'>,
  kind: StoreKind,
  delivery: WebhookDelivery,
): Promise<StoreOnShop[]> => {
  const shopDomain = delivery.shopDomain?.trim().toLowerCase();
  if (!shopDomain || !delivery.signature) throw new InvalidSignatureError();
  // Active stores first, then the oldest: the order in which a shared shop domain is resolved.
  const candidates = (await storesOnShop(shopDomain, kind)).sort(
    (a, b) => Number(!!a.deletedAt) - Number(!!b.deletedAt) || a.createdAt.localeCompare(b.createdAt),
  );
  const verified: StoreOnShop[] = [];
  for (const store of candidates) {
    const secret = await webhookSecretOf(deps.cipher, store);
    if (verifySignature(secret, delivery.rawBody, delivery.signature)) verified.push(store);
    else {
      // A secret rotated within the last 24 hours still verifies, while the platform switches over.
      const previous = await previousWebhookSecretOf(deps.cipher, store);
      if (previous !== undefined && verifySignature(previous, delivery.rawBody, delivery.signature))
        verified.push(store);
    }
  }
  if (!verified.length) throw new InvalidSignatureError();
  return verified;
};

/** `X-Platform-Topic` is optional, but when sent it must name this endpoint's topic. */
export const assertTopic = (delivery: WebhookDelivery, topic: WebhookTopic) => {
  const sent = delivery.topic;
  if (sent !== undefined && sent.trim() !== topic) {
    throw new ValidationError(
      `X-Platform-Topic '${sent}' does not match this endpoint, which takes '${topic}'.`,
      'X-Platform-Topic',
    );
  }
};
