import type { PricingConfig } from '../domain/money.js';
import {
  DEFAULT_ROUTING_POLICY,
  PAYMENT_POLICIES,
  RISK_POLICIES,
  type RoutingPolicy,
  TEST_ORDER_POLICIES,
} from '../domain/routing.js';
import type { ServiceLevel } from '../domain/shipping.js';
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
  vendorTagOf,
} from '../dynamo/keys.js';
import {
  attributes,
  ConditionFailed,
  getItem,
  type Item,
  keyOf,
  listPage,
  putIf,
  queryIndex,
  queryKeys,
  queryPartition,
  TABLE,
  transactIf,
  updateIf,
} from '../dynamo/table.js';
import { PLATFORMS, type Platform } from '../platforms/port.js';

/**
 * What the two store entities (store.ts, store.ts) share: their fields, secrets,
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

/** The attributes of the token refresh's lease (shared/entities/store.ts); removed by a rotation. */
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
 * Records an observation of the store (its `checkedAt` says when) under `attribute`; one that began
 * before the one recorded changes nothing (two polls of a store may overlap), nor does one of a store
 * that is gone. `placeholder` names the value in the update.
 */
const recordObservation = async (
  kind: StoreKind,
  id: string,
  [attribute, placeholder]: ['webhooks', ':webhooks'] | ['apiVersion', ':version'],
  observed: { checkedAt: string },
) => {
  const unlessLater = `attribute_not_exists(${attribute}) OR ${attribute}.checkedAt <= :at`;
  await updateIf({
    Key: storeKey(kind, id),
    UpdateExpression: `SET ${attribute} = ${placeholder}`,
    ConditionExpression: `attribute_exists(PK) AND (${unlessLater})`,
    ExpressionAttributeValues: { [placeholder]: observed, ':at': observed.checkedAt },
  });
};

/** Records what a check of the store's subscriptions found, unless a later check's is there. */
export const recordWebhooks = (kind: StoreKind, id: string, webhooks: StoreWebhooks) =>
  recordObservation(kind, id, ['webhooks', ':webhooks'], webhooks);

/** Records the API version the store's last answers named; an older observation changes nothing. */
export const recordApiVersion = (kind: StoreKind, id: string, version: StoreApiVersion) =>
  recordObservation(kind, id, ['apiVersion', ':version'], version);

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

/**
 * A store's expiring access token as its item holds it (CONTRACT.md §12.3), and the lease that lets one
 * worker at a time refresh it, whichever Lambda it runs in: a conditional UpdateItem takes the lease for
 * the token it refreshes (`accessToken` still the one it read, no lease in force), and the write of the
 * refreshed pair is conditional on the lease still its holder's and the refresh token still the one it
 * spent. A rotation by the API (new credentials) removes the lease: the refresh's write then fails and
 * the rotation's credentials stay. Ciphertexts only; the attributes are the store item's own.
 */

/** What the token refresh reads of a store: its token, its grant and life, its lease and connection. */
export interface StoreToken extends TokenLife {
  /** The access token's ciphertext: a new one (refreshed or rotated) is a new ciphertext. */
  accessToken: string;
  refresh: EncryptedRefreshGrant | null;
  lease: { holder: string; until: string } | null;
  connection: StoreConnection;
  deletedAt: string | null;
}

const TOKEN_READ = [
  'accessToken',
  'refreshToken',
  'clientId',
  'clientSecret',
  'tokenExpiresAt',
  'tokenIssuedAt',
  ...REFRESH_LEASE_ATTRIBUTES,
  ...CONNECTION_ATTRIBUTES,
  'deletedAt',
];

export const storeTokenFrom = (item: Item): StoreToken => {
  const read = attributes(item, 'store token');
  const holder = read.stringOrNull('refreshLeaseHolder');
  return {
    accessToken: read.string('accessToken'),
    refresh: refreshGrantFrom(item),
    ...tokenLifeFrom(item),
    lease: holder === null ? null : { holder, until: read.string('refreshLeaseUntil') },
    connection: connectionFrom(item),
    deletedAt: read.stringOrNull('deletedAt'),
  };
};

/** The store's token as it is now (a consistent read of its attributes, not the whole item); undefined: gone. */
export const readStoreToken = (kind: StoreKind, id: string) =>
  getItem(storeKey(kind, id), storeTokenFrom, true, TOKEN_READ);

/**
 * Takes the refresh lease of the store's token `accessToken` (a ciphertext) until `until`: true, or the
 * token the condition met (refreshed or rotated meanwhile, or another worker's lease in force), or
 * undefined when the store is gone.
 */
export const takeRefreshLease = async (
  kind: StoreKind,
  id: string,
  accessToken: string,
  lease: { holder: string; until: string; now: string },
): Promise<true | StoreToken | undefined> => {
  const written = await updateIf({
    Key: storeKey(kind, id),
    UpdateExpression: 'SET refreshLeaseHolder = :holder, refreshLeaseUntil = :until',
    ConditionExpression:
      'attribute_exists(PK) AND accessToken = :token AND attribute_exists(refreshToken) AND ' +
      '(attribute_not_exists(refreshLeaseUntil) OR refreshLeaseUntil < :now)',
    ExpressionAttributeValues: {
      ':holder': lease.holder,
      ':until': lease.until,
      ':now': lease.now,
      ':token': accessToken,
    },
  });
  if (!(written instanceof ConditionFailed)) return true;
  return written.met ? storeTokenFrom(written.met) : readStoreToken(kind, id);
};

/** The condition of a write under the lease: still its holder's, over the refresh token it read. */
const UNDER_LEASE = 'refreshLeaseHolder = :holder AND refreshToken = :spent';

/** A refreshed token, its ciphertexts and life: what one write stores together. */
export interface RefreshedStoreToken extends TokenLife {
  accessToken: string;
  refreshToken: string;
}

/**
 * Stores the refreshed access token, refresh token and expiry in one write and ends the lease; false
 * when the lease was lost (a rotation removed it, or it lapsed and another worker took it): nothing written.
 */
export const recordRefreshedToken = async (
  kind: StoreKind,
  id: string,
  holder: string,
  spentRefreshToken: string,
  token: RefreshedStoreToken,
) => {
  const expires = token.tokenExpiresAt !== null;
  const expiry = expires ? ', tokenExpiresAt = :expiresAt, tokenIssuedAt = :issuedAt' : '';
  const removed = [...REFRESH_LEASE_ATTRIBUTES, ...(expires ? [] : ['tokenExpiresAt', 'tokenIssuedAt'])];
  const written = await updateIf({
    Key: storeKey(kind, id),
    UpdateExpression:
      `SET accessToken = :accessToken, refreshToken = :refreshToken${expiry} ` + `REMOVE ${removed.join(', ')}`,
    ConditionExpression: UNDER_LEASE,
    ExpressionAttributeValues: {
      ':accessToken': token.accessToken,
      ':refreshToken': token.refreshToken,
      ':holder': holder,
      ':spent': spentRefreshToken,
      ...(token.tokenExpiresAt === null
        ? {}
        : { ':expiresAt': token.tokenExpiresAt, ':issuedAt': token.tokenIssuedAt }),
    },
  });
  return !(written instanceof ConditionFailed);
};

/** Ends the lease without a new token (the refresh failed, and may heal): the next worker may try. */
export const releaseRefreshLease = async (kind: StoreKind, id: string, holder: string) => {
  await updateIf({
    Key: storeKey(kind, id),
    UpdateExpression: `REMOVE ${REFRESH_LEASE_ATTRIBUTES.join(', ')}`,
    ConditionExpression: 'refreshLeaseHolder = :holder',
    ExpressionAttributeValues: { ':holder': holder },
  });
};

/**
 * The platform refused the refresh (CONTRACT.md §12.3): the store becomes `reauthorization_required`
 * and the lease ends, unless new credentials replaced the refresh token meanwhile (they win). True
 * when this write disconnected the store.
 */
export const refuseRefresh = async (
  kind: StoreKind,
  id: string,
  holder: string,
  spentRefreshToken: string,
  reason: string,
  at: string,
) => {
  const written = await updateIf({
    Key: storeKey(kind, id),
    UpdateExpression:
      'SET connectionState = :state, connectionSince = :at, connectionReason = :reason ' +
      `REMOVE ${REFRESH_LEASE_ATTRIBUTES.join(', ')}`,
    ConditionExpression: UNDER_LEASE,
    ExpressionAttributeValues: {
      ':state': 'reauthorization_required',
      ':at': at,
      ':reason': reason,
      ':holder': holder,
      ':spent': spentRefreshToken,
    },
  });
  return !(written instanceof ConditionFailed);
};

/**
 * The reseller store entity: a merchant's store that resells (SPEC: `rst_…`). Its fields are the
 * stores' common ones (store.ts) and its routing policy (CONTRACT.md §11); the only place that knows its item.
 */
export type ResellerStore = StoreFields & { routingPolicy: RoutingPolicy };

/**
 * The routing policy's attributes: one per field, so a PATCH of some fields is one UpdateItem that keeps
 * the others; a field never set is absent, and reads as its default (no byte for a store that keeps them).
 */
const POLICY_ATTRIBUTES: Record<keyof RoutingPolicy, string> = {
  holdSeconds: 'policyHoldSeconds',
  payment: 'policyPayment',
  risk: 'policyRisk',
  testOrders: 'policyTestOrders',
};

const policyAttributes = (policy: Partial<RoutingPolicy>) =>
  Object.fromEntries(
    Object.entries(policy)
      .filter(([field, value]) => value !== undefined && field in POLICY_ATTRIBUTES)
      .map(([field, value]) => [POLICY_ATTRIBUTES[field as keyof RoutingPolicy], value]),
  );

/** The routing policy a store item holds (defaults for the fields it does not). */
export const routingPolicyFrom = (item: Item): RoutingPolicy => {
  const read = attributes(item, 'reseller store');
  const has = (field: keyof RoutingPolicy) => item[POLICY_ATTRIBUTES[field]] !== undefined;
  return {
    holdSeconds: has('holdSeconds') ? read.number(POLICY_ATTRIBUTES.holdSeconds) : DEFAULT_ROUTING_POLICY.holdSeconds,
    payment: has('payment') ? read.oneOf(POLICY_ATTRIBUTES.payment, PAYMENT_POLICIES) : DEFAULT_ROUTING_POLICY.payment,
    risk: has('risk') ? read.oneOf(POLICY_ATTRIBUTES.risk, RISK_POLICIES) : DEFAULT_ROUTING_POLICY.risk,
    testOrders: has('testOrders')
      ? read.oneOf(POLICY_ATTRIBUTES.testOrders, TEST_ORDER_POLICIES)
      : DEFAULT_ROUTING_POLICY.testOrders,
  };
};

export const resellerStoreKey = (id: string) => storeKey('reseller', id);

/**
 * A reseller store's item: in its owner's list (GSI1), or its list of deleted stores once deleted, and
 * under its shop domain (GSI2).
 */
export const resellerStoreItem = (store: ResellerStore): Item => ({
  ...resellerStoreKey(store.id),
  ...storeIndexEntries(
    'reseller',
    store,
    lists.resellerStores(store.ownerId),
    lists.deletedResellerStores(store.ownerId),
  ),
  ...storeAttributes(store),
  ...policyAttributes(changedFields(store.routingPolicy)),
});

/** The fields of a policy that differ from the defaults: all a new store's item needs to write. */
const changedFields = (policy: RoutingPolicy): Partial<RoutingPolicy> =>
  Object.fromEntries(
    Object.entries(policy).filter(([field, value]) => DEFAULT_ROUTING_POLICY[field as keyof RoutingPolicy] !== value),
  );

export const resellerStoreFrom = (item: Item): ResellerStore => ({
  ...storeFrom(item, 'reseller store'),
  routingPolicy: routingPolicyFrom(item),
});

/**
 * What the orders webhook routes an order with, in one Query of the store's partition: its routing
 * policy (the store's own item) and its active source stores by vendor tag (its vendor-tag items).
 * The store's item shares the read's 4 KB units with the tags, so the policy costs no read of its own.
 */
export const routingOf = async (resellerStoreId: string) => {
  const items = await queryPartition(keys.resellerStore(resellerStoreId).PK, undefined, false);
  const storeItem = items.find((item) => item.SK === keys.resellerStore(resellerStoreId).SK);
  const prefix = keys.vendorTagPrefix(resellerStoreId).SKPrefix;
  const tags = items.filter((item) => typeof item.SK === 'string' && item.SK.startsWith(prefix));
  return {
    routingPolicy: storeItem ? routingPolicyFrom(storeItem) : DEFAULT_ROUTING_POLICY,
    vendorTags: new Map(tags.map(vendorTagFrom).map(({ vendorTag, sourceStoreId }) => [vendorTag, sourceStoreId])),
  };
};

/** Puts a new reseller store's item; its id is new, so an item met there is a fault. */
export const putResellerStore = async (store: ResellerStore) => {
  if ((await putIf(resellerStoreItem(store))) !== true) throw new Error(`reseller store ${store.id} exists already`);
};

/** What a PATCH of a reseller store changes (SPEC 4.2, CONTRACT.md §11): any of them, or none. */
export interface ResellerStoreChanges {
  name?: string;
  routingPolicy?: Partial<RoutingPolicy>;
}

/**
 * Changes an active store of `ownerId`: its name and any fields of its routing policy (nothing given:
 * changes nothing, still answers it); the store as written, or undefined when there is no such store
 * (unknown, deleted or another owner's).
 */
export const changeResellerStoreItem = async (
  ownerId: string,
  id: string,
  changes: ResellerStoreChanges,
  at: string,
): Promise<ResellerStore | undefined> => {
  const set: Record<string, unknown> = {
    ...(changes.name === undefined ? {} : { name: changes.name }),
    ...policyAttributes(changes.routingPolicy ?? {}),
  };
  const names = Object.keys(set);
  const written = await updateIf(
    {
      Key: resellerStoreKey(id),
      UpdateExpression: names.length
        ? `SET ${names.map((_, i) => `#a${i} = :a${i}`).join(', ')}, updatedAt = :now`
        : 'SET updatedAt = updatedAt',
      ConditionExpression: OWNED_AND_ACTIVE,
      ExpressionAttributeNames: names.length ? Object.fromEntries(names.map((name, i) => [`#a${i}`, name])) : undefined,
      ExpressionAttributeValues: {
        ':owner': ownerId,
        ':null': null,
        ...(names.length ? { ':now': at, ...Object.fromEntries(names.map((name, i) => [`:a${i}`, set[name]])) } : {}),
      },
    },
    true,
  );
  return written instanceof ConditionFailed ? undefined : resellerStoreFrom(written ?? {});
};

/**
 * Soft-deletes an active store of `ownerId`: out of the active stores, its shop lookup kept, and its
 * list entry moved (same sort key) from its owner's list to the owner's deleted reseller stores,
 * which the retention sweep reads for the store's unrouted orders (docs/design.md, "Customer data");
 * false when there is no such store.
 */
export const deleteResellerStoreItem = async (ownerId: string, id: string, at: string) =>
  !(
    (await updateIf({
      Key: resellerStoreKey(id),
      UpdateExpression: 'SET deletedAt = :at, updatedAt = :at, #list = :deleted REMOVE #active',
      ConditionExpression: OWNED_AND_ACTIVE,
      ExpressionAttributeNames: { '#list': indexPartitionName('lists'), '#active': indexPartitionName('stateLists') },
      ExpressionAttributeValues: {
        ':owner': ownerId,
        ':null': null,
        ':at': at,
        ':deleted': lists.deletedResellerStores(ownerId),
      },
    })) instanceof ConditionFailed
  );

/**
 * The ids of the owner's reseller stores, soft-deleted ones included (its list and its list of deleted
 * stores), read by key a page of 100 at a time: the retention sweep's, whose orders were received all the same.
 * `createdBefore`: only the stores created before then (the lists sort by `<createdAt>#<id>`).
 */
export const findResellerStoreIdsOf = async (ownerId: string, createdBefore?: string) => {
  const ids: string[] = [];
  for (const pk of [lists.resellerStores(ownerId), lists.deletedResellerStores(ownerId)]) {
    let startKey: Item | undefined;
    do {
      const page = await queryKeys({
        index: 'lists',
        pk,
        limit: 100,
        exclusiveStartKey: startKey,
        before: createdBefore,
      });
      for (const key of page.keys) {
        const store = storeOfKey(key);
        if (store?.kind === 'reseller') ids.push(store.id);
      }
      startKey = page.lastKey;
    } while (startKey);
  }
  return ids;
};

/** A reseller store by id, of any owner, deleted or not; `consistent`: a read after a lost race. */
export const findResellerStoreById = (id: string, consistent = false) =>
  getItem(resellerStoreKey(id), resellerStoreFrom, consistent);

/** A page of the owner's reseller stores (its list, GSI1), below the store `cursorItem` finds. */
export const findResellerStorePage = (
  ownerId: string,
  limit: number,
  startingAfter: string | undefined,
  cursorItem: (id: string) => Promise<ResellerStore | undefined>,
) =>
  listPage({
    source: { index: 'lists', partitions: [lists.resellerStores(ownerId)], exact: true },
    ownerId,
    from: resellerStoreFrom,
    limit,
    startingAfter,
    cursorItem,
  });

/**
 * The source store entity (a supplier's store, `sst_…`) and its vendor-tag item, which makes "one
 * active source store per tag" a key constraint: the only place that knows their items.
 */
export const PRICING_MODES = ['percentage', 'field_rules'] as const;
export type PricingMode = (typeof PRICING_MODES)[number];

export interface SourceStore extends StoreFields {
  resellerStoreId: string;
  vendorTag: string;
  pricingMode: PricingMode;
  pricingConfig: PricingConfig;
  /** The supplier's promise (CONTRACT.md §16.1), its zone resolved; null: no promise, no due times. */
  serviceLevel?: ServiceLevel | null;
}

export const sourceStoreKey = (id: string) => storeKey('source', id);

/** The key of the vendor-tag item of `vendorTag` under a reseller store. */
export const vendorTagKey = (resellerStoreId: string, vendorTag: string) => keys.vendorTag(resellerStoreId, vendorTag);

/** Every vendor-tag item of a reseller store: one partition, one sort-key prefix. */
export const vendorTagsOf = (resellerStoreId: string) => keys.vendorTagPrefix(resellerStoreId);

/** A new source store's item: in its reseller store's list (GSI1) and under its shop domain (GSI2). */
export const sourceStoreItem = (store: SourceStore): Item => ({
  ...sourceStoreKey(store.id),
  ...storeIndexEntries('source', store, lists.sourceStores(store.resellerStoreId)),
  ...storeAttributes(store),
  resellerStoreId: store.resellerStoreId,
  vendorTag: store.vendorTag,
  pricingMode: store.pricingMode,
  pricingConfig: store.pricingConfig,
  ...(store.serviceLevel ? { serviceLevel: store.serviceLevel } : {}),
});

/**
 * The vendor-tag item: it makes "one active source store per tag" a key constraint, and routing
 * reads every active tag of a reseller store with one Query.
 */
export const vendorTagItem = (store: SourceStore): Item => ({
  ...vendorTagKey(store.resellerStoreId, store.vendorTag),
  sourceStoreId: store.id,
  createdAt: store.createdAt,
});

export const sourceStoreFrom = (item: Item): SourceStore => {
  const read = attributes(item, 'source store');
  return {
    ...storeFrom(item, 'source store'),
    resellerStoreId: read.string('resellerStoreId'),
    vendorTag: read.string('vendorTag'),
    pricingMode: read.oneOf('pricingMode', PRICING_MODES),
    pricingConfig: read.object<PricingConfig>('pricingConfig'),
    serviceLevel: read.optionalObject<ServiceLevel>('serviceLevel') ?? null,
  };
};

/** A vendor-tag item: which source store holds the tag. */
export const vendorTagFrom = (item: Item) => ({
  vendorTag: vendorTagOf(keyOf(item)),
  sourceStoreId: attributes(item, 'vendor tag').string('sourceStoreId'),
});

/** The new vendor tag's item, put only where no store holds the tag ("one active store per tag"). */
const claimVendorTag = (store: SourceStore) => ({
  Put: { TableName: TABLE(), Item: vendorTagItem(store), ConditionExpression: 'attribute_not_exists(PK)' },
});

/**
 * Frees a store's vendor tag for another store, as a transaction's Delete; the condition keeps a
 * racing delete or retag from freeing a successor's tag.
 */
const releaseVendorTag = (resellerStoreId: string, vendorTag: string, id: string) => ({
  Delete: {
    TableName: TABLE(),
    Key: vendorTagKey(resellerStoreId, vendorTag),
    ConditionExpression: 'sourceStoreId = :id',
    ExpressionAttributeValues: { ':id': id },
  },
});

/**
 * Puts a new source store's item with its vendor tag's, in one transaction: `vendor_tag_taken` when
 * another active store holds the tag.
 */
export const putSourceStore = async (store: SourceStore): Promise<'created' | 'vendor_tag_taken'> => {
  const written = await transactIf([
    { Put: { TableName: TABLE(), Item: sourceStoreItem(store), ConditionExpression: 'attribute_not_exists(PK)' } },
    claimVendorTag(store),
  ]);
  if (written === true) return 'created';
  if (written.failed[1]) return 'vendor_tag_taken';
  // The store's own id was taken, or the transaction was cancelled otherwise: a fault, not an outcome.
  throw new Error(`source store ${store.id} was not created: its transaction was cancelled`);
};

/** Soft-deletes a store read active and frees its tag, in one transaction; false when it was deleted meanwhile. */
export const deleteSourceStoreItems = async (store: SourceStore, at: string) =>
  (await transactIf([
    {
      Update: {
        TableName: TABLE(),
        Key: sourceStoreKey(store.id),
        UpdateExpression: `SET deletedAt = :at, updatedAt = :at REMOVE ${DELISTED.join(', ')}`,
        ConditionExpression: 'deletedAt = :null',
        ExpressionAttributeValues: { ':at': at, ':null': null },
      },
    },
    releaseVendorTag(store.resellerStoreId, store.vendorTag, store.id),
  ])) === true;

/** The store's new values, conditional on the store as read: a racing change or delete fails it, never undone. */
const sourceStoreUpdate = (store: SourceStore, updated: SourceStore) => ({
  Update: {
    TableName: TABLE(),
    Key: sourceStoreKey(store.id),
    UpdateExpression:
      'SET #name = :name, vendorTag = :vendorTag, pricingMode = :pricingMode, pricingConfig = :pricingConfig, ' +
      'serviceLevel = :serviceLevel, updatedAt = :at',
    ConditionExpression: 'deletedAt = :null AND vendorTag = :readTag AND updatedAt = :readAt',
    ExpressionAttributeNames: { '#name': 'name' },
    ExpressionAttributeValues: {
      ':name': updated.name,
      ':vendorTag': updated.vendorTag,
      ':pricingMode': updated.pricingMode,
      ':pricingConfig': updated.pricingConfig,
      ':serviceLevel': updated.serviceLevel ?? null,
      ':at': updated.updatedAt,
      ':null': null,
      ':readTag': store.vendorTag,
      ':readAt': store.updatedAt,
    },
  },
});

/**
 * Writes a store's changes over the store as read; a new vendor tag moves the tag item in the same
 * transaction. `vendor_tag_taken` when another store holds the new tag, `changed` when the store
 * was changed or deleted meanwhile.
 */
export const updateSourceStoreItems = async (
  store: SourceStore,
  updated: SourceStore,
): Promise<'updated' | 'vendor_tag_taken' | 'changed'> => {
  const retag = updated.vendorTag !== store.vendorTag;
  const written = await transactIf([
    sourceStoreUpdate(store, updated),
    ...(retag ? [claimVendorTag(updated), releaseVendorTag(store.resellerStoreId, store.vendorTag, store.id)] : []),
  ]);
  if (written === true) return 'updated';
  return retag && written.failed[1] ? 'vendor_tag_taken' : 'changed';
};

/** The active source stores of a reseller store by vendor tag: one Query over its vendor-tag items. */
export const activeVendorTagsOf = async (resellerStoreId: string) => {
  const prefix = vendorTagsOf(resellerStoreId);
  const items = await queryPartition(prefix.PK, prefix.SKPrefix, false);
  return new Map(items.map(vendorTagFrom).map(({ vendorTag, sourceStoreId }) => [vendorTag, sourceStoreId]));
};

/** A source store by id, of any owner, deleted or not; `consistent`: a read after a lost race. */
export const findSourceStoreById = (id: string, consistent = false) =>
  getItem(sourceStoreKey(id), sourceStoreFrom, consistent);

/** A page of a reseller store's source stores (its list, GSI1), below `cursor` when given. */
export const findSourceStorePage = (
  ownerId: string,
  resellerStoreId: string,
  limit: number,
  startingAfter: string | undefined,
  cursor: SourceStore | undefined,
) =>
  listPage({
    source: { index: 'lists', partitions: [lists.sourceStores(resellerStoreId)], exact: true },
    ownerId,
    from: sourceStoreFrom,
    limit,
    startingAfter,
    cursorItem: async () => cursor,
  });
