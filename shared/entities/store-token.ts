import { attributes, ConditionFailed, getItem, type Item, updateIf } from '../dynamo/table.js';
import {
  CONNECTION_ATTRIBUTES,
  connectionFrom,
  type EncryptedRefreshGrant,
  REFRESH_LEASE_ATTRIBUTES,
  refreshGrantFrom,
  type StoreConnection,
  type StoreKind,
  storeKey,
  type TokenLife,
  tokenLifeFrom,
} from './store.js';

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
