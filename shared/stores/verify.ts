import type { Deps } from '../aws/deps.js';
import type { SecretCipher } from '../aws/kms-cipher.js';
import { sharedReads } from '../core/concurrency.js';
import { config } from '../core/config.js';
import { InvalidSignatureError, ValidationError } from '../core/errors.js';
import { isShopDomainUnder, isWellFormedSignature, verifySignature } from '../domain/webhook-checks.js';
import {
  findStoresOnShop,
  isErasedSecret,
  readPreviousWebhookSecret,
  type StoreKind,
  type StoreOnShop,
} from '../entities/store.js';
import type { WebhookTopic } from '../platforms/port.js';
import { webhookSecretOf } from './connection.js';

/** A topic a webhook route checks (`topicOf`): every topic the stores subscribe to but the app's own. */
type RouteTopic = Exclude<WebhookTopic, 'app/uninstalled'>;

/** What a platform's webhook call says about itself (its `X-Platform-*` headers) and its raw body. */
export interface WebhookCall {
  shopDomain: string | undefined;
  signature: string | undefined;
  topic: string | undefined;
  /** `X-Platform-Webhook-Id`: the platform's id of the call, the same on its redeliveries. */
  webhookId?: string;
  rawBody: Buffer;
}

/**
 * The call's shop domain, lower-cased, if the call could verify at all; otherwise a 401
 * before anything is read or decrypted: a missing header, a signature that is not the base64 of a
 * 32-byte digest, or a domain no store can be registered under (the creation schema's rule).
 */
const plausibleShopDomain = (call: WebhookCall): string => {
  const shopDomain = call.shopDomain?.trim().toLowerCase();
  if (!shopDomain || !isWellFormedSignature(call.signature)) throw new InvalidSignatureError();
  if (!isShopDomainUnder(shopDomain, config.shopDomainSuffix())) throw new InvalidSignatureError();
  return shopDomain;
};

/**
 * The webhook secret a rotation replaced, while it still verifies (CONTRACT.md §10.9: 24 hours), or
 * undefined. Read from the store's own item, and only once its current secret has not verified: the
 * lookup index carries the current secret alone, so the common case costs nothing more.
 */
const previousWebhookSecretOf = async (
  cipher: SecretCipher,
  store: Pick<StoreOnShop, 'kind' | 'id'>,
  at = Date.now(),
): Promise<string | undefined> => {
  const previous = await readPreviousWebhookSecret(store.kind, store.id);
  if (!previous || Date.parse(previous.until) <= at) return undefined;
  return cipher.decrypt(previous.ciphertext, { storeId: store.id, field: 'webhookSecret' });
};

/**
 * Shop domains with no store of a kind, remembered per container, so a flood of deliveries naming
 * one costs no table read (docs/design.md, "An abusive unsigned caller"). Short, because a store
 * registered meanwhile on such a domain has its deliveries refused by this container until then;
 * bounded, because an abuser can name any number of domains.
 */
export const UNKNOWN_SHOP_TTL_MS = 60_000;
export const UNKNOWN_SHOP_MAX = 1_000;

// Insertion order is expiry order (one TTL for all), so the first entry is the one to drop when full.
const expiries = new Map<string, number>();
const keyOf = (kind: StoreKind, shopDomain: string) => `${kind}|${shopDomain}`;

/** Whether `shopDomain` was found without a store of `kind` in the last UNKNOWN_SHOP_TTL_MS. */
export const isUnknownShop = (kind: StoreKind, shopDomain: string, at = Date.now()) => {
  const key = keyOf(kind, shopDomain);
  const until = expiries.get(key);
  if (until === undefined) return false;
  if (until > at) return true;
  expiries.delete(key);
  return false;
};

/** Remembers that `shopDomain` has no store of `kind`, dropping the oldest entry when full. */
export const rememberUnknownShop = (kind: StoreKind, shopDomain: string, at = Date.now()) => {
  const key = keyOf(kind, shopDomain);
  expiries.delete(key);
  if (expiries.size >= UNKNOWN_SHOP_MAX) expiries.delete(expiries.keys().next().value!);
  expiries.set(key, at + UNKNOWN_SHOP_TTL_MS);
};

/** How long a shop domain's stores, as the lookup found them, are shared by this environment's webhook calls. */
export const LOOKUP_SHARED_MS = 200;

/**
 * The lookups of this environment, by kind and shop domain: the webhook calls of one shop a moment apart
 * share one Query of the lookups index (docs/performance.md, "Fewer calls per order"), which is an
 * index, eventually consistent, so no fresher than this already. A call none of them verifies reads
 * the lookup again before it is refused: a secret rotated within the moment is never refused for it.
 */
const lookups = sharedReads(
  // Every store of the kind under the domain, deleted or not (the lookups index carries what verifying needs).
  (key: string) => findStoresOnShop(key.slice(key.indexOf('|') + 1), key.slice(0, key.indexOf('|')) as StoreKind),
  LOOKUP_SHARED_MS,
  (stores) => stores.length > 0,
);

/**
 * The stores of one kind on a shop domain, none without a read if the domain had none a moment ago;
 * `shared`: whether they are a lookup kept from a moment ago (not one made or joined now).
 */
const storesOnKnownShop = async (shopDomain: string, kind: StoreKind, fresh = false) => {
  if (isUnknownShop(kind, shopDomain)) return { stores: [] as StoreOnShop[], shared: false };
  const key = `${kind}|${shopDomain}`;
  if (fresh) lookups.drop(key);
  const shared = lookups.kept(key);
  const stores = await lookups.get(key);
  if (!stores.length) rememberUnknownShop(kind, shopDomain);
  return { stores, shared };
};

/**
 * The stores of one kind registered under the call's shop domain whose webhook secret
 * verifies the HMAC of the raw body, before anything of the body is parsed. Every candidate is
 * checked in constant time; none verifying (or no candidate, or no header) is a 401.
 */
export const verifiedStores = async (
  deps: Pick<Deps, 'cipher'>,
  kind: StoreKind,
  call: WebhookCall,
): Promise<StoreOnShop[]> => {
  const shopDomain = plausibleShopDomain(call);
  const first = await storesOnKnownShop(shopDomain, kind);
  const verified = await verifiedAmong(deps, first.stores, call);
  if (verified.length) return verified;
  // Refused by the stores a lookup of a moment ago gave: read again, in case one changed within the moment.
  if (!first.shared) throw new InvalidSignatureError();
  const again = await verifiedAmong(deps, (await storesOnKnownShop(shopDomain, kind, true)).stores, call);
  if (!again.length) throw new InvalidSignatureError();
  return again;
};

/** The stores among `stores` whose webhook secret (or the previous one, within its day) verifies the call. */
const verifiedAmong = async (deps: Pick<Deps, 'cipher'>, stores: StoreOnShop[], call: WebhookCall) => {
  // Active stores first, then the oldest: the order in which a shared shop domain is resolved.
  const candidates = [...stores].sort(
    (a, b) => Number(!!a.deletedAt) - Number(!!b.deletedAt) || a.createdAt.localeCompare(b.createdAt),
  );
  const verified: StoreOnShop[] = [];
  for (const store of candidates) {
    // A store whose shop was erased (`shop/redact`, CONTRACT.md §13) keeps no secret: nothing verifies.
    if (isErasedSecret(store.secrets.webhookSecret)) continue;
    const secret = await webhookSecretOf(deps.cipher, store);
    if (verifySignature(secret, call.rawBody, call.signature)) verified.push(store);
    else {
      // A secret rotated within the last 24 hours still verifies, while the platform switches over.
      const previous = await previousWebhookSecretOf(deps.cipher, store);
      if (previous !== undefined && verifySignature(previous, call.rawBody, call.signature)) verified.push(store);
    }
  }
  return verified;
};

/**
 * The topic of a webhook call (CONTRACT.md §10): one this endpoint takes (`topics`, its create topic
 * first, which an absent `X-Platform-Topic` means); any other is 400 naming the header.
 */
export const topicOf = <T extends RouteTopic>(call: WebhookCall, topics: readonly [T, ...T[]]): T => {
  const sent = call.topic?.trim();
  if (sent === undefined) return topics[0];
  const topic = topics.find((t) => t === sent);
  if (topic === undefined) {
    throw new ValidationError(
      `X-Platform-Topic '${call.topic}' is not a topic of this endpoint, which takes ${topics
        .map((t) => `'${t}'`)
        .join(', ')}.`,
      'X-Platform-Topic',
    );
  }
  return topic;
};

/** `X-Platform-Topic` is optional, but when sent it must name this endpoint's topic. */
export const assertTopic = (call: WebhookCall, topic: RouteTopic) => topicOf(call, [topic]);

/**
 * The reseller and source stores of the call's shop domain whose secret verifies it: a topic
 * either kind of store sends (`orders/cancelled`, `orders/updated`). None of either is a 401.
 */
export const verifiedStoresOfEitherKind = async (deps: Pick<Deps, 'cipher'>, call: WebhookCall) => {
  const orNone = (error: unknown) => {
    if (error instanceof InvalidSignatureError) return [];
    throw error;
  };
  const resellerStores = await verifiedStores(deps, 'reseller', call).catch(orNone);
  const sourceStores = await verifiedStores(deps, 'source', call).catch(orNone);
  if (!resellerStores.length && !sourceStores.length) throw new InvalidSignatureError();
  return { resellerStores, sourceStores };
};
