import type { Deps } from '../aws/deps.js';
import { config } from '../core/config.js';
import { InvalidSignatureError, ValidationError } from '../core/errors.js';
import { isWellFormedSignature, verifySignature } from '../domain/hmac.js';
import { isShopDomainUnder } from '../domain/shop-domain.js';
import { isErasedSecret, type StoreKind, type StoreOnShop } from '../entities/store.js';
import { webhookSecretOf } from './secrets.js';
import { previousWebhookSecretOf, storesOnShop } from './shop-lookup.js';
import { isUnknownShop, rememberUnknownShop } from './unknown-shops.js';

export const WEBHOOK_TOPICS = [
  'orders/create',
  'orders/cancelled',
  'orders/updated',
  'fulfillments/create',
  'fulfillments/update',
  'refunds/create',
  'returns/approve',
  'returns/cancel',
  'returns/close',
] as const;
export type WebhookTopic = (typeof WEBHOOK_TOPICS)[number];

/** What a platform's webhook delivery says about itself (its `X-Platform-*` headers) and its raw body. */
export interface WebhookDelivery {
  shopDomain: string | undefined;
  signature: string | undefined;
  topic: string | undefined;
  /** `X-Platform-Webhook-Id`: the platform's id of the delivery, the same on its redeliveries. */
  webhookId?: string;
  rawBody: Buffer;
}

/**
 * The delivery's shop domain, lower-cased, if the delivery could verify at all; otherwise a 401
 * before anything is read or decrypted: a missing header, a signature that is not the base64 of a
 * 32-byte digest, or a domain no store can be registered under (the creation schema's rule).
 */
const plausibleShopDomain = (delivery: WebhookDelivery): string => {
  const shopDomain = delivery.shopDomain?.trim().toLowerCase();
  if (!shopDomain || !isWellFormedSignature(delivery.signature)) throw new InvalidSignatureError();
  if (!isShopDomainUnder(shopDomain, config.shopDomainSuffix())) throw new InvalidSignatureError();
  return shopDomain;
};

/** The stores of one kind on a shop domain, none without a read if the domain had none a moment ago. */
const storesOnKnownShop = async (shopDomain: string, kind: StoreKind): Promise<StoreOnShop[]> => {
  if (isUnknownShop(kind, shopDomain)) return [];
  const stores = await storesOnShop(shopDomain, kind);
  if (!stores.length) rememberUnknownShop(kind, shopDomain);
  return stores;
};

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
  const shopDomain = plausibleShopDomain(delivery);
  // Active stores first, then the oldest: the order in which a shared shop domain is resolved.
  const candidates = (await storesOnKnownShop(shopDomain, kind)).sort(
    (a, b) => Number(!!a.deletedAt) - Number(!!b.deletedAt) || a.createdAt.localeCompare(b.createdAt),
  );
  const verified: StoreOnShop[] = [];
  for (const store of candidates) {
    // A store whose shop was erased (`shop/redact`, CONTRACT.md §13) keeps no secret: nothing verifies.
    if (isErasedSecret(store.secrets.webhookSecret)) continue;
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

/**
 * The topic of a delivery (CONTRACT.md §10): one this endpoint takes (`topics`, its create topic
 * first, which an absent `X-Platform-Topic` means); any other is 400 naming the header.
 */
export const topicOf = <T extends WebhookTopic>(delivery: WebhookDelivery, topics: readonly [T, ...T[]]): T => {
  const sent = delivery.topic?.trim();
  if (sent === undefined) return topics[0];
  const topic = topics.find((t) => t === sent);
  if (topic === undefined) {
    throw new ValidationError(
      `X-Platform-Topic '${delivery.topic}' is not a topic of this endpoint, which takes ${topics
        .map((t) => `'${t}'`)
        .join(', ')}.`,
      'X-Platform-Topic',
    );
  }
  return topic;
};

/** `X-Platform-Topic` is optional, but when sent it must name this endpoint's topic. */
export const assertTopic = (delivery: WebhookDelivery, topic: WebhookTopic) => topicOf(delivery, [topic]);

/**
 * The reseller and source stores of the delivery's shop domain whose secret verifies it: a topic
 * either kind of store sends (`orders/cancelled`, `orders/updated`). None of either is a 401.
 */
export const verifiedStoresOfEitherKind = async (deps: Pick<Deps, 'cipher'>, delivery: WebhookDelivery) => {
  const orNone = (error: unknown) => {
    if (error instanceof InvalidSignatureError) return [];
    throw error;
  };
  const resellerStores = await verifiedStores(deps, 'reseller', delivery).catch(orNone);
  const sourceStores = await verifiedStores(deps, 'source', delivery).catch(orNone);
  if (!resellerStores.length && !sourceStores.length) throw new InvalidSignatureError();
  return { resellerStores, sourceStores };
};
