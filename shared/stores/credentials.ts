import type { Deps } from '../aws/deps.js';
import { Met, withRereads } from '../core/concurrency.js';
import { ResourceMissingError } from '../core/errors.js';
import { now } from '../core/ids.js';
import type { Owner } from '../domain/owner.js';
import { type Actor, auditPut } from '../entities/audit-entry.js';
import {
  CONNECTED,
  type NewSecrets,
  type ResellerStore,
  resellerStoreFrom,
  type SourceStore,
  saveSecretsRotation,
  secretsRotation,
  sourceStoreFrom,
} from '../entities/store.js';
import { encryptRefreshGrant, type PlainSecrets, tokenLifeOf } from './connection.js';
import { findResellerStore, findSourceStore } from './stores.js';

/**
 * New credentials for a store (CONTRACT.md §10.9): a supplier's token expired or was revoked, a
 * webhook secret must be rotated. The store keeps its id, vendor tag and jobs; calls made from now on
 * use the new token. The replaced webhook secret keeps verifying for `overlapSeconds` (24 hours), so
 * the platform can switch over without losing a delivery. Audited; no secret is ever in the entry.
 */

/** How long a replaced webhook secret still verifies. */
export const SECRET_OVERLAP_SECONDS = 24 * 3600;

type AuditedStore = 'reseller_store' | 'source_store';

/**
 * Each rotation is conditional on the secrets it read; one that loses a race to another (two rotations
 * at once) takes the store as its failed write met it (read again, consistently, only when the write
 * answered none) and rotates over what the other wrote, so the last one wins and the one before it is
 * the secret that keeps verifying. A store deleted meanwhile is 404.
 */
export const rotateResellerStoreCredentials = (
  deps: Pick<Deps, 'cipher'>,
  owner: Owner,
  id: string,
  input: Partial<PlainSecrets>,
  actor: Actor,
): Promise<ResellerStore> => {
  let reads = 0;
  return withRereads(
    () => findResellerStore(owner, id, 'id', reads++ > 0),
    (store) => rotate(deps, owner, store, { kind: 'reseller_store', from: resellerStoreFrom }, id, input, actor),
    `reseller store ${id}, while its credentials were rotated,`,
  );
};

export const rotateSourceStoreCredentials = (
  deps: Pick<Deps, 'cipher'>,
  owner: Owner,
  resellerStoreId: string,
  id: string,
  input: Partial<PlainSecrets>,
  actor: Actor,
): Promise<SourceStore> => {
  let reads = 0;
  return withRereads(
    () => findSourceStore(owner, resellerStoreId, id, reads++ > 0),
    (store) =>
      rotate(deps, owner, store, { kind: 'source_store', from: sourceStoreFrom }, resellerStoreId, input, actor),
    `source store ${id}, while its credentials were rotated,`,
  );
};

/** Which kind of store a rotation writes, and how its item reads (the item a lost race met). */
interface RotatedKind<S> {
  kind: AuditedStore;
  from: (item: Parameters<typeof resellerStoreFrom>[0]) => S;
}

const rotate = async <S extends ResellerStore | SourceStore>(
  deps: Pick<Deps, 'cipher'>,
  owner: Owner,
  store: S,
  { kind, from }: RotatedKind<S>,
  resellerStoreId: string,
  input: Partial<PlainSecrets>,
  actor: Actor,
): Promise<S | 'again' | Met<S>> => {
  if (store.deletedAt) throw new ResourceMissingError(kind, store.id);
  const at = now();
  const secrets = await encryptSecrets(deps, store, input, at);
  const previous = replacedSecretOf(store, secrets, at);
  const rotated = [
    ...(secrets.accessToken ? ['accessToken'] : []),
    ...(secrets.webhookSecret ? ['webhookSecret'] : []),
    ...(secrets.refresh ? ['refreshToken', 'clientId', 'clientSecret'] : []),
  ];
  const written = await saveSecretsRotation(
    secretsRotation(kind === 'reseller_store' ? 'reseller' : 'source', owner.ownerId, store, secrets, previous, at),
    auditPut({
      action: `${kind}.credentials_rotated`,
      job: { id: store.id, ownerId: store.ownerId, resellerStoreId },
      resourceType: kind,
      actor,
      // Which secrets were replaced, never a secret: names only.
      metadata: { rotated, ...(previous ? { previousWebhookSecretValidUntil: previous.until } : {}) },
    }),
  );
  // Deleted or rotated meanwhile: over the store as the write met it (a deleted store is then 404).
  if (written !== true) return written.met[0] ? new Met(from(written.met[0])) : 'again';
  return {
    ...store,
    secrets: {
      accessToken: secrets.accessToken ?? store.secrets.accessToken,
      webhookSecret: secrets.webhookSecret ?? store.secrets.webhookSecret,
      refresh: secrets.accessToken === undefined ? store.secrets.refresh : (secrets.refresh ?? null),
    },
    tokenLife:
      secrets.accessToken === undefined
        ? store.tokenLife
        : { tokenExpiresAt: secrets.tokenExpiresAt ?? null, tokenIssuedAt: secrets.tokenExpiresAt ? at : null },
    previousWebhookSecret: previous ?? store.previousWebhookSecret,
    connection: secrets.accessToken === undefined ? store.connection : CONNECTED,
    updatedAt: at,
  };
};

/**
 * The secrets given, encrypted for the store (one KMS call each). A new access token comes with its own
 * refresh grant and expiry, or none (the schema refuses them without it): the old ones go with the old token.
 */
const encryptSecrets = async (
  deps: Pick<Deps, 'cipher'>,
  store: ResellerStore | SourceStore,
  input: Partial<PlainSecrets>,
  at: string,
): Promise<NewSecrets> => {
  const encrypt = (field: 'accessToken' | 'webhookSecret', value: string | undefined) =>
    value === undefined ? undefined : deps.cipher.encrypt(value, { storeId: store.id, field });
  const [accessToken, webhookSecret, refresh] = await Promise.all([
    encrypt('accessToken', input.accessToken),
    encrypt('webhookSecret', input.webhookSecret),
    input.accessToken === undefined ? null : encryptRefreshGrant(deps.cipher, store.id, input),
  ]);
  const { tokenExpiresAt } = tokenLifeOf(input, at);
  return {
    accessToken,
    webhookSecret,
    ...(refresh ? { refresh } : {}),
    ...(accessToken !== undefined && tokenExpiresAt ? { tokenExpiresAt } : {}),
  };
};

/** The webhook secret a new one replaces, and until when it still verifies; none when it is kept. */
const replacedSecretOf = (store: ResellerStore | SourceStore, secrets: NewSecrets, at: string) =>
  secrets.webhookSecret === undefined
    ? undefined
    : {
        ciphertext: store.secrets.webhookSecret,
        until: new Date(Date.parse(at) + SECRET_OVERLAP_SECONDS * 1000).toISOString(),
      };
