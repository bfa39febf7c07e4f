import {
  indexEntry,
  indexKeyNames,
  indexPartitionName,
  type Key,
  keys,
  listSortKey,
  lists,
  lookups,
  storeOfKey,
} from '../dynamo/keys.js';
import {
  attributes,
  ConditionFailed,
  getItem,
  type Item,
  keyOf,
  queryIndex,
  TABLE,
  transactIf,
  updateIf,
} from '../dynamo/table.js';
import { PLATFORMS, type Platform } from '../platforms/port.js';

/**
 * What the two store entities (reseller-store.ts, source-store.ts) share: their fields, secrets,
 * list and shop-domain entries, and what the lookups index carries of either. A store's secrets are
 * kept as KMS ciphertexts (base64) under the attributes `accessToken` and `webhookSecret`;
 * shared/stores/connection.ts decrypts them.
 */

/** The two kinds of merchant store. */
export type StoreKind = 'reseller' | 'source';

/** A store item's key, by its kind. */
export const storeKey = (kind: StoreKind, id: string): Key =>
  kind === 'reseller' ? keys.resellerStore(id) : keys.sourceStore(id);

/** The GSI2 sort-key prefix of one kind of store under a shop domain. */
export const shopStoresOfKind = (kind: StoreKind) =>
  kind === 'reseller' ? lookups.shopResellerStores : lookups.shopSourceStores;

/** Ciphertexts, never plaintext: what a store record holds of its secrets. */
export interface EncryptedSecrets {
  accessToken: string;
  webhookSecret: string;
  /** What refreshes an expiring access token (CONTRACT.md §12.3): all three, or none. */
  refresh?: EncryptedRefreshGrant | null;
}

/** A store's refresh token and its app's client id and secret, each a ciphertext under its own field. */
export interface EncryptedRefreshGrant {
  refreshToken: string;
  clientId: string;
  clientSecret: string;
}

/** The secrets of an expiring token's refresh (KMS encryption context `field`), besides the two of every store. */
export const REFRESH_FIELDS = ['refreshToken', 'clientId', 'clientSecret'] as const;

/** The attributes of a store's access token's life (CONTRACT.md §12.3), absent for a token that does not expire. */
export interface TokenLife {
  /** When the access token expires (ISO 8601); null when it does not, or was not told. */
  tokenExpiresAt: string | null;
  /** When the service got it (created, rotated or refreshed): its life is from then to `tokenExpiresAt`. */
  tokenIssuedAt: string | null;
}

/** The attributes of the token refresh's lease (shared/entities/store-token.ts); removed by a rotation. */
export const REFRESH_LEASE_ATTRIBUTES = ['refreshLeaseHolder', 'refreshLeaseUntil'];

/** The attributes of a refreshable token besides the access token: removed when a token without them replaces it. */
export const TOKEN_ATTRIBUTES = [...REFRESH_FIELDS, 'tokenExpiresAt', 'tokenIssuedAt'];

/** The refresh grant a store item holds, or null when it holds none. */
export const refreshGrantFrom = (item: Item): EncryptedRefreshGrant | null => {
  const read = attributes(item, 'store');
  const refreshToken = read.stringOrNull('refreshToken');
  return refreshToken === null
    ? null
    : { refreshToken, clientId: read.string('clientId'), clientSecret: read.string('clientSecret') };
};

export const tokenLifeFrom = (item: Item): TokenLife => {
  const read = attributes(item, 'store');
  return { tokenExpiresAt: read.stringOrNull('tokenExpiresAt'), tokenIssuedAt: read.stringOrNull('tokenIssuedAt') };
};

/** A refresh grant's and a token life's attributes, for a write: only those present. */
export const tokenAttributes = (refresh: EncryptedRefreshGrant | null | undefined, life: Partial<TokenLife>) => ({
  ...(refresh ? { ...refresh } : {}),
  ...(life.tokenExpiresAt ? { tokenExpiresAt: life.tokenExpiresAt } : {}),
  ...(life.tokenExpiresAt && life.tokenIssuedAt ? { tokenIssuedAt: life.tokenIssuedAt } : {}),
});

/**
 * The webhook secret a rotation replaced (its ciphertext), which keeps verifying until `until`
 * (CONTRACT.md §10.9: 24 hours), so the platform can switch over without losing a delivery.
 */
export interface PreviousWebhookSecret {
  ciphertext: string;
  until: string;
}

/**
 * Whether the service may call a store with its token (CONTRACT.md §12.2): `uninstalled` after the
 * shop's `app/uninstalled`, `reauthorization_required` after a refused token refresh (§12.3); new
 * credentials make it `connected` again.
 */
export const CONNECTION_STATES = ['connected', 'uninstalled', 'reauthorization_required'] as const;
export type ConnectionState = (typeof CONNECTION_STATES)[number];

export interface StoreConnection {
  state: ConnectionState;
  /** When it left `connected`; null while connected. */
  since: string | null;
  /** What disconnected it (`app/uninstalled`, `invalid_grant`…); null while connected. */
  reason: string | null;
}

export const CONNECTED: StoreConnection = { state: 'connected', since: null, reason: null };

/** The error code of work that would call a disconnected store (CONTRACT.md §12.2). */
export const STORE_DISCONNECTED = 'store_disconnected';

/**
 * Why work for a store ends without a call, or undefined while it is connected: `store_disconnected`
 * first (the code integrators match), then what disconnected it.
 */
export const disconnectedReason = (kind: StoreKind, store: { id: string; connection: StoreConnection }) =>
  store.connection.state === 'connected'
    ? undefined
    : `${STORE_DISCONNECTED}: ${kind} store ${store.id} is ${store.connection.state} ` +
      `(${store.connection.reason ?? 'no reason given'}, since ${store.connection.since ?? 'unknown'}); ` +
      'new credentials reconnect it, then retry';

/** The attributes that hold a store's connection (absent: connected). */
export const CONNECTION_ATTRIBUTES = ['connectionState', 'connectionSince', 'connectionReason'];

export const connectionFrom = (item: Item): StoreConnection => {
  const read = attributes(item, 'store');
  const state = item.connectionState === undefined ? 'connected' : read.oneOf('connectionState', CONNECTION_STATES);
  return state === 'connected'
    ? CONNECTED
    : { state, since: read.stringOrNull('connectionSince'), reason: read.stringOrNull('connectionReason') };
};

/** What the last check of a store's webhook subscriptions found (CONTRACT.md §12.1). */
export interface StoreWebhooks {
  /** `pending`: the check did not finish within the creation's budget; the next poll finishes it. */
  status: 'healthy' | 'repaired' | 'failing' | 'pending' | 'unmanaged';
  checkedAt: string;
  /** The topics found missing (made again when `repaired`; when `pending`, those not made yet). */
  missing: string[];
  /** The platform's reason, when `failing`. */
  error: string | null;
}

/** The platform API version a store's answers named (CONTRACT.md §12.4). */
export interface StoreApiVersion {
  requested: string;
  /** `X-Shopify-API-Version`; null when the answer had none. */
  served: string | null;
  /** `X-Shopify-API-Deprecated-Reason`s seen on the last answer. */
  deprecations: string[];
  checkedAt: string;
}

export interface StoreFields {
  id: string;
  ownerId: string;
  name: string;
  platform: Platform;
  shopDomain: string;
  secrets: EncryptedSecrets;
  previousWebhookSecret: PreviousWebhookSecret | null;
  connection: StoreConnection;
  /** Null until the subscriptions were first checked. */
  webhooks: StoreWebhooks | null;
  /** Null until the store was first called. */
  apiVersion?: StoreApiVersion | null;
  /** The access token's expiry and when it was got (CONTRACT.md §12.3); absent or null: it does not expire. */
  tokenLife?: TokenLife;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
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

/**
 * A store's entries in the indexes: its list (GSI1; `list` is its partition), the active stores the
 * poller reads (GSI5, sorted by the same list sort key; CONTRACT.md §10.7) and its shop domain's
 * stores (GSI2), which verify a webhook's signature with one Query. A deleted store has only the last,
 * and, when its kind keeps one (`deletedList`: reseller stores, for the retention sweep), an entry in
 * its owner's list of deleted stores.
 */
export const storeIndexEntries = (
  kind: StoreKind,
  store: StoreFields,
  list: string,
  deletedList?: string,
): Record<string, string> => {
  const listed = store.deletedAt ? deletedList : list;
  return {
    ...(listed === undefined ? {} : indexEntry('lists', listed, listSortKey(store.createdAt, store.id))),
    ...(store.deletedAt ? {} : indexEntry('stateLists', lists.activeStores())),
    ...indexEntry(
      'lookups',
      lookups.shop(store.shopDomain),
      kind === 'reseller' ? lookups.shopResellerStore(store.id) : lookups.shopSourceStore(store.id),
    ),
  };
};

/**
 * What a soft delete removes: the list entry (GSI1 is sparse) and the active stores' entry (GSI5); the
 * shop-domain entry stays, to verify.
 */
export const DELISTED = [...indexKeyNames('lists'), indexPartitionName('stateLists')];

/** The index attributes a store item may carry (for the backfill of an index added later). */
export const STORE_INDEX_ATTRIBUTES = [...DELISTED, ...indexKeyNames('lookups')];

/** The attributes a rotation writes for the secret it replaced. */
export const previousSecretAttributes = (previous: PreviousWebhookSecret) => ({
  previousWebhookSecret: previous.ciphertext,
  previousWebhookSecretUntil: previous.until,
});

export const storeAttributes = (store: StoreFields) => ({
  id: store.id,
  ownerId: store.ownerId,
  name: store.name,
  platform: store.platform,
  shopDomain: store.shopDomain,
  accessToken: store.secrets.accessToken,
  webhookSecret: store.secrets.webhookSecret,
  ...(store.previousWebhookSecret ? previousSecretAttributes(store.previousWebhookSecret) : {}),
  ...tokenAttributes(store.secrets.refresh, store.tokenLife ?? {}),
  createdAt: store.createdAt,
  updatedAt: store.updatedAt,
  deletedAt: store.deletedAt,
});

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

export const storeFrom = (item: Item, entity: string): StoreFields => {
  const read = attributes(item, entity);
  return {
    id: read.string('id'),
    ownerId: read.string('ownerId'),
    name: read.string('name'),
    platform: read.oneOf('platform', PLATFORMS),
    shopDomain: read.string('shopDomain'),
    secrets: {
      accessToken: read.string('accessToken'),
      webhookSecret: read.string('webhookSecret'),
      refresh: refreshGrantFrom(item),
    },
    previousWebhookSecret: previousSecretFrom(read.stringOrNull('previousWebhookSecret'), read),
    tokenLife: tokenLifeFrom(item),
    connection: connectionFrom(item),
    webhooks: read.optionalObject<StoreWebhooks>('webhooks') ?? null,
    apiVersion: read.optionalObject<StoreApiVersion>('apiVersion') ?? null,
    createdAt: read.string('createdAt'),
    updatedAt: read.string('updatedAt'),
    deletedAt: read.stringOrNull('deletedAt'),
  };
};

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

/** The condition of a change to a store: still its owner's, and not deleted. */
export const OWNED_AND_ACTIVE = 'ownerId = :owner AND deletedAt = :null';

/** The secrets a rotation sets, encrypted; one not given is undefined (kept as it is). */
export interface NewSecrets {
  accessToken: string | undefined;
  webhookSecret: string | undefined;
  /** With a new access token only: its refresh grant, none when it does not refresh (CONTRACT.md §12.3). */
  refresh?: EncryptedRefreshGrant;
  /** With a new access token only: when it expires, none when it does not. */
  tokenExpiresAt?: string;
}

/** The `:name` values of a new access token's refresh grant and life, those it has. */
const newTokenValues = (secrets: NewSecrets, at: string) =>
  Object.fromEntries(
    Object.entries(
      tokenAttributes(secrets.refresh, { tokenExpiresAt: secrets.tokenExpiresAt ?? null, tokenIssuedAt: at }),
    ).map(([name, value]) => [`:${name}`, value]),
  );

/**
 * A rotation's write of a store's new secrets (and the replaced one), as a transaction's Update:
 * conditional on the store alive and on the secrets read, so a rotation racing another keeps both
 * replaced secrets honest.
 */
export const secretsRotation = (
  kind: StoreKind,
  ownerId: string,
  store: StoreFields,
  secrets: NewSecrets,
  previous: PreviousWebhookSecret | undefined,
  at: string,
) => {
  const values: Record<string, unknown> = {
    ':at': at,
    ':owner': ownerId,
    ':null': null,
    ':readToken': store.secrets.accessToken,
    ':readSecret': store.secrets.webhookSecret,
    ...(secrets.accessToken === undefined ? {} : { ':accessToken': secrets.accessToken }),
    ...(secrets.webhookSecret === undefined ? {} : { ':webhookSecret': secrets.webhookSecret }),
    ...(secrets.accessToken === undefined ? {} : newTokenValues(secrets, at)),
    ...(previous === undefined
      ? {}
      : Object.fromEntries(Object.entries(previousSecretAttributes(previous)).map(([k, v]) => [`:${k}`, v]))),
  };
  const sets = Object.keys(values)
    .filter((name) => !['owner', 'null', 'readToken', 'readSecret'].includes(name.slice(1)))
    .map((name) => (name === ':at' ? 'updatedAt = :at' : `${name.slice(1)} = ${name}`));
  // A new access token reconnects a store that was uninstalled or refused (CONTRACT.md §12.2); what
  // refreshed the token it replaces goes with it, and a refresh under way loses its lease (§12.3).
  const removed =
    secrets.accessToken === undefined
      ? []
      : [
          ...CONNECTION_ATTRIBUTES,
          ...REFRESH_LEASE_ATTRIBUTES,
          ...TOKEN_ATTRIBUTES.filter((name) => !(`:${name}` in values)),
        ];
  return {
    Update: {
      TableName: TABLE(),
      Key: storeKey(kind, store.id),
      UpdateExpression: `SET ${sets.join(', ')}${removed.length ? ` REMOVE ${removed.join(', ')}` : ''}`,
      ConditionExpression: `${OWNED_AND_ACTIVE} AND accessToken = :readToken AND webhookSecret = :readSecret`,
      ExpressionAttributeValues: values,
    },
  };
};

/**
 * The replaced webhook secret of a store, as its own item holds it, or null: two attributes read,
 * not the whole item (the lookups index carries the current secret alone).
 */
export const readPreviousWebhookSecret = async (kind: StoreKind, id: string) =>
  (await getItem(storeKey(kind, id), previousWebhookSecretFrom, false, [
    'previousWebhookSecret',
    'previousWebhookSecretUntil',
  ])) ?? null;

/**
 * Marks a store disconnected (CONTRACT.md §12.2): from then on nothing calls it with its token. A
 * store already in that state keeps when and why it got there (a redelivered `app/uninstalled`);
 * a store that is gone is left alone. True when this write disconnected it.
 */
export const disconnectStore = async (
  kind: StoreKind,
  id: string,
  state: Exclude<ConnectionState, 'connected'>,
  reason: string,
  at: string,
) => {
  const written = await updateIf({
    Key: storeKey(kind, id),
    UpdateExpression: 'SET connectionState = :state, connectionSince = :at, connectionReason = :reason',
    ConditionExpression:
      'attribute_exists(PK) AND (attribute_not_exists(connectionState) OR connectionState <> :state)',
    ExpressionAttributeValues: { ':state': state, ':at': at, ':reason': reason },
  });
  return !(written instanceof ConditionFailed);
};

/**
 * Records what a check of the store's subscriptions found; a check that began before the one
 * recorded changes nothing (two polls of a store may overlap), nor does one of a store that is gone.
 */
export const recordWebhooks = async (kind: StoreKind, id: string, webhooks: StoreWebhooks) => {
  await updateIf({
    Key: storeKey(kind, id),
    UpdateExpression: 'SET webhooks = :webhooks',
    ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(webhooks) OR webhooks.checkedAt <= :at)',
    ExpressionAttributeValues: { ':webhooks': webhooks, ':at': webhooks.checkedAt },
  });
};

/** Records the API version the store's last answers named; an older observation changes nothing. */
export const recordApiVersion = async (kind: StoreKind, id: string, version: StoreApiVersion) => {
  await updateIf({
    Key: storeKey(kind, id),
    UpdateExpression: 'SET apiVersion = :version',
    ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(apiVersion) OR apiVersion.checkedAt <= :at)',
    ExpressionAttributeValues: { ':version': version, ':at': version.checkedAt },
  });
};

/** What an erased secret's attribute holds: no ciphertext, so nothing decrypts it and no signature verifies. */
export const ERASED_SECRET = '';

/** Whether a store's secret was erased (`eraseStoreSecrets`): it verifies nothing and calls nothing. */
export const isErasedSecret = (ciphertext: string) => ciphertext === ERASED_SECRET;

/**
 * A shop's erasure (CONTRACT.md §13, `shop/redact`), after its soft delete: every secret's
 * ciphertext erased and the replaced webhook secret removed, `secretsErasedAt` set. Its shop lookup
 * stays (with no secret: a later delivery is a 401). Repeatable: an erased store is erased again
 * with nothing to change but the time. False when there is no such store.
 */
export const eraseStoreSecrets = async (kind: StoreKind, id: string, at: string) => {
  const out = await updateIf({
    Key: storeKey(kind, id),
    UpdateExpression:
      'SET accessToken = :erased, webhookSecret = :erased, secretsErasedAt = :at, updatedAt = :at ' +
      'REMOVE previousWebhookSecret, previousWebhookSecretUntil',
    ConditionExpression: 'attribute_exists(PK)',
    ExpressionAttributeValues: { ':erased': ERASED_SECRET, ':at': at },
  });
  return !(out instanceof ConditionFailed);
};

/**
 * A store's secrets rotated (`secretsRotation`) together with the audit entry that records it, in one
 * transaction: true, or the store as the failed write met it (`met[0]`), when its condition failed.
 */
export const saveSecretsRotation = (
  rotation: ReturnType<typeof secretsRotation>,
  audit: Parameters<typeof transactIf>[0][number],
) => transactIf([rotation, audit]);

/** Every store of one kind registered under a shop domain, deleted or not (GSI2's projection: what verifying needs). */
export const findStoresOnShop = async (shopDomain: string, kind: StoreKind) =>
  (
    await queryIndex({
      index: 'lookups',
      partition: lookups.shop(shopDomain),
      prefix: shopStoresOfKind(kind),
      forward: true,
    })
  ).map(storeOnShopFrom(kind));

/** The kind of store an item is (by its key: a reseller's `RST`, a source's `SST`), or undefined for any other item. */
export const storeKindOf = (item: Item) => (typeof item.PK === 'string' ? storeOfKey(keyOf(item))?.kind : undefined);
