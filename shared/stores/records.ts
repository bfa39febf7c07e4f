import type { PricingConfig } from '../domain/pricing.js';
import { attributes } from '../dynamo/attributes.js';
import { keys, listSortKey, lists, lookups, type StoreKind, vendorTagOf } from '../dynamo/keys.js';
import { type Item, keyOf } from '../dynamo/table.js';
import { PLATFORMS, type Platform } from '../platforms/port.js';

/**
 * Reseller and source stores as records, and their conversions to and from table items: the
 * only place that knows their attributes. A store's secrets are kept as KMS ciphertexts (base64)
 * under the attributes `accessToken` and `webhookSecret`; shared/stores/secrets.ts decrypts them.
 */

export interface Owner {
  ownerId: string;
}

/** Ciphertexts, never plaintext: what a store record holds of its secrets. */
export interface EncryptedSecrets {
  accessToken: string;
  webhookSecret: string;
}

/**
 * The webhook secret a rotation replaced (its ciphertext), which keeps verifying until `until`
 * (CONTRACT.md §10.9: 24 hours), so the platform can switch over without losing a delivery.
 */
export interface PreviousWebhookSecret {
  ciphertext: string;
  until: string;
}

interface StoreFields {
  id: string;
  ownerId: string;
  name: string;
  platform: Platform;
  shopDomain: string;
  secrets: EncryptedSecrets;
  previousWebhookSecret: PreviousWebhookSecret | null;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

export type ResellerStore = StoreFields;

export const PRICING_MODES = ['percentage', 'field_rules'] as const;
export type PricingMode = (typeof PRICING_MODES)[number];

export interface SourceStore extends StoreFields {
  resellerStoreId: string;
  vendorTag: string;
  pricingMode: PricingMode;
  pricingConfig: PricingConfig;
}

/** What the lookups index (GSI2) carries of a store: enough to verify a webhook's signature. */
export interface StoreOnShop {
  kind: StoreKind;
  id: string;
  ownerId: string;
  /** The source store's reseller store; null for a reseller store. */
  resellerStoreId: string | null;
  shopDomain: string;
  createdAt: string;
  deletedAt: string | null;
  secrets: Pick<EncryptedSecrets, 'webhookSecret'>;
}

// ---------- to items

/** The attributes a rotation writes for the secret it replaced. */
export const previousSecretAttributes = (previous: PreviousWebhookSecret) => ({
  previousWebhookSecret: previous.ciphertext,
  previousWebhookSecretUntil: previous.until,
});

const storeAttributes = (store: StoreFields) => ({
  id: store.id,
  ownerId: store.ownerId,
  name: store.name,
  platform: store.platform,
  shopDomain: store.shopDomain,
  accessToken: store.secrets.accessToken,
  webhookSecret: store.secrets.webhookSecret,
  ...(store.previousWebhookSecret ? previousSecretAttributes(store.previousWebhookSecret) : {}),
  createdAt: store.createdAt,
  updatedAt: store.updatedAt,
  deletedAt: store.deletedAt,
});

/** A new reseller store's item: in its owner's list (GSI1) and under its shop domain (GSI2). */
export const resellerStoreItem = (store: ResellerStore): Item => ({
  ...keys.resellerStore(store.id),
  GSI1PK: lists.resellerStores(store.ownerId),
  GSI1SK: listSortKey(store.createdAt, store.id),
  GSI2PK: lookups.shop(store.shopDomain),
  GSI2SK: lookups.shopResellerStore(store.id),
  ...storeAttributes(store),
});

/** A new source store's item: in its reseller store's list (GSI1) and under its shop domain (GSI2). */
export const sourceStoreItem = (store: SourceStore): Item => ({
  ...keys.sourceStore(store.id),
  GSI1PK: lists.sourceStores(store.resellerStoreId),
  GSI1SK: listSortKey(store.createdAt, store.id),
  GSI2PK: lookups.shop(store.shopDomain),
  GSI2SK: lookups.shopSourceStore(store.id),
  ...storeAttributes(store),
  resellerStoreId: store.resellerStoreId,
  vendorTag: store.vendorTag,
  pricingMode: store.pricingMode,
  pricingConfig: store.pricingConfig,
});

/**
 * The vendor-tag item: it makes "one active source store per tag" a key constraint, and routing
 * reads every active tag of a reseller store with one Query.
 */
export const vendorTagItem = (store: SourceStore): Item => ({
  ...keys.vendorTag(store.resellerStoreId, store.vendorTag),
  sourceStoreId: store.id,
  createdAt: store.createdAt,
});

// ---------- from items

/** The replaced webhook secret of a store item (or of the part of it a read asked for), or null. */
export const previousWebhookSecretFrom = (item: Item): PreviousWebhookSecret | null => {
  const read = attributes(item, 'store');
  return previousSecretFrom(read.stringOrNull('previousWebhookSecret'), read);
};

const previousSecretFrom = (
  ciphertext: string | null,
  read: ReturnType<typeof attributes>,
): PreviousWebhookSecret | null =>
  ciphertext === null ? null : { ciphertext, until: read.string('previousWebhookSecretUntil') };

const storeFrom = (item: Item, entity: string): StoreFields => {
  const read = attributes(item, entity);
  return {
    id: read.string('id'),
    ownerId: read.string('ownerId'),
    name: read.string('name'),
    platform: read.oneOf('platform', PLATFORMS),
    shopDomain: read.string('shopDomain'),
    secrets: { accessToken: read.string('accessToken'), webhookSecret: read.string('webhookSecret') },
    previousWebhookSecret: previousSecretFrom(read.stringOrNull('previousWebhookSecret'), read),
    createdAt: read.string('createdAt'),
    updatedAt: read.string('updatedAt'),
    deletedAt: read.stringOrNull('deletedAt'),
  };
};

export const resellerStoreFrom = (item: Item): ResellerStore => storeFrom(item, 'reseller store');

export const sourceStoreFrom = (item: Item): SourceStore => {
  const read = attributes(item, 'source store');
  return {
    ...storeFrom(item, 'source store'),
    resellerStoreId: read.string('resellerStoreId'),
    vendorTag: read.string('vendorTag'),
    pricingMode: read.oneOf('pricingMode', PRICING_MODES),
    pricingConfig: read.object<PricingConfig>('pricingConfig'),
  };
};

/** A vendor-tag item: which source store holds the tag. */
export const vendorTagFrom = (item: Item) => ({
  vendorTag: vendorTagOf(keyOf(item)),
  sourceStoreId: attributes(item, 'vendor tag').string('sourceStoreId'),
});

export const storeOnShopFrom =
  (kind: StoreKind) =>
  (item: Item): StoreOnShop => {
    const read = attributes(item, `${kind} store lookup`);
    return {
      kind,
      id: read.string('id'),
      ownerId: read.string('ownerId'),
      resellerStoreId: kind === 'source' ? read.string('resellerStoreId') : null,
      shopDomain: read.string('shopDomain'),
      createdAt: read.string('createdAt'),
      deletedAt: read.stringOrNull('deletedAt'),
      secrets: { webhookSecret: read.string('webhookSecret') },
    };
  };
