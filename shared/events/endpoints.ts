import { randomBytes } from 'node:crypto';
import type { SecretCipher } from '../aws/kms-cipher.js';
import { config } from '../core/config.js';
import {
  InvalidCursorError,
  ResourceMissingError,
  ValidationError,
  WebhookEndpointLimitError,
} from '../core/errors.js';
import { isId, newId, now } from '../core/ids.js';
import { endpointUrlProblem, type UrlRules } from '../domain/endpoint-url.js';
import type { Owner } from '../domain/owner.js';
import { SECRET_PREFIX } from '../domain/webhook-signature.js';
import { type Actor, type AuditAction, auditPut } from '../entities/audit-entry.js';
import {
  type EnabledEvents,
  type EndpointStatus,
  endpointCountLower,
  endpointCountRaise,
  endpointsOf,
  findWebhookEndpoint,
  MAX_ENDPOINTS,
  SECRET_OVERLAP_SECONDS,
  saveEndpointWrites,
  type WebhookEndpoint,
  webhookEndpointChange,
  webhookEndpointDelete,
  webhookEndpointPut,
} from '../entities/webhook-endpoint.js';
import { resolveHost } from './webhook-sender.js';

/**
 * Webhook endpoints (CONTRACT.md §14): create (the secret shown once), list, get, update, delete,
 * rotate the secret. Every write is audited in the same transaction; a secret is only ever held
 * encrypted, and appears in no log line, error or audit entry.
 */

type CipherDeps = { cipher: SecretCipher };

/** The rules a URL is held to here: locally loopback receivers are allowed (shared/core/config.ts). */
export const urlRules = (): UrlRules => ({ local: config.localRuntime(), resolve: resolveHost });

/** Refuses a URL breaking the rules: 400 `validation_failed`, `param` `url`. */
export const checkEndpointUrl = async (url: string, rules: UrlRules = urlRules()) => {
  const problem = await endpointUrlProblem(url, rules);
  if (problem) throw new ValidationError(`Invalid url: ${problem}`, 'url');
};

/** `whsec_` and the base64 of 32 random bytes (Standard Webhooks' format). */
const newSecret = () => `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;

const encryptSecret = (deps: CipherDeps, endpointId: string, secret: string) =>
  deps.cipher.encrypt(secret, { storeId: endpointId, field: 'endpointSecret' });

/** The secrets that sign a delivery now: the current one, and the one a rotation replaced for 24 hours. */
export const signingSecrets = async (deps: CipherDeps, endpoint: WebhookEndpoint, at = new Date()) => {
  const decrypt = (ciphertext: string) =>
    deps.cipher.decrypt(ciphertext, { storeId: endpoint.id, field: 'endpointSecret' });
  const previous = endpoint.previousSecret;
  const overlapping = previous !== null && Date.parse(previous.expiresAt) > at.getTime();
  return Promise.all([decrypt(endpoint.secret), ...(overlapping ? [decrypt(previous.secret)] : [])]);
};

const audit = (endpoint: WebhookEndpoint, action: AuditAction, actor: Actor, metadata: Record<string, unknown>) =>
  auditPut({
    action,
    job: { id: endpoint.id, ownerId: endpoint.ownerId, resellerStoreId: null },
    resourceType: 'webhook_endpoint',
    actor,
    metadata,
  });

/** Runs an endpoint's transaction (its own write first); `refused` when that write's condition failed. */
const transact = async (items: Parameters<typeof saveEndpointWrites>[0], refused: () => Error) => {
  const written = await saveEndpointWrites(items);
  if (written === true) return;
  if (written.failed[0]) throw refused();
  throw new Error('a webhook endpoint’s transaction was cancelled');
};

export interface NewEndpoint {
  url: string;
  enabledEvents: EnabledEvents;
  description?: string;
}

/** A new endpoint with its secret (answered this once), the owner's count raised under the limit of 16. */
export const createEndpoint = async (deps: CipherDeps, owner: Owner, input: NewEndpoint, actor: Actor) => {
  await checkEndpointUrl(input.url);
  const id = newId('we');
  const secret = newSecret();
  const at = now();
  const endpoint: WebhookEndpoint = {
    id,
    ownerId: owner.ownerId,
    url: input.url,
    enabledEvents: input.enabledEvents,
    description: input.description ?? null,
    status: 'enabled',
    disabledReason: null,
    secret: await encryptSecret(deps, id, secret),
    previousSecret: null,
    createdAt: at,
    updatedAt: at,
  };
  await transact(
    [
      endpointCountRaise(owner.ownerId),
      webhookEndpointPut(endpoint),
      audit(endpoint, 'webhook_endpoint.created', actor, { url: endpoint.url, enabledEvents: endpoint.enabledEvents }),
    ],
    () => new WebhookEndpointLimitError(MAX_ENDPOINTS),
  );
  return { endpoint, secret };
};

/** A page of the owner's endpoints: they are few, so the page is cut from all of them. */
export const listEndpoints = async (
  owner: Owner,
  limit: number,
  startingAfter: string | undefined,
): Promise<{ data: WebhookEndpoint[]; hasMore: boolean }> => {
  const all = await endpointsOf(owner.ownerId);
  let start = 0;
  if (startingAfter !== undefined) {
    start = all.findIndex((endpoint) => endpoint.id === startingAfter) + 1;
    if (start === 0) throw new InvalidCursorError();
  }
  return { data: all.slice(start, start + limit), hasMore: all.length > start + limit };
};

/** The owner's endpoint, or 404: the key names the caller's owner, so another's is not found. */
export const findEndpoint = async ({ ownerId }: Owner, id: string) => {
  const endpoint = isId('we', id) ? await findWebhookEndpoint(ownerId, id) : undefined;
  if (!endpoint) throw new ResourceMissingError('webhook_endpoint', id);
  return endpoint;
};

export interface EndpointChanges {
  url?: string;
  enabledEvents?: EnabledEvents;
  description?: string | null;
  status?: EndpointStatus;
}

const CHANGEABLE = ['url', 'enabledEvents', 'description', 'status'] as const;

/**
 * Writes an endpoint's changed fields with its audit entry, if it still exists (404 otherwise) and,
 * given `secretWas`, its secret is still that one.
 */
const writeChanges = async (
  endpoint: WebhookEndpoint,
  set: Partial<WebhookEndpoint>,
  entry: { action: AuditAction; actor: Actor; metadata: Record<string, unknown> },
  secretWas?: string,
) =>
  transact(
    [webhookEndpointChange(endpoint, set, secretWas), audit(endpoint, entry.action, entry.actor, entry.metadata)],
    () => new ResourceMissingError('webhook_endpoint', endpoint.id),
  );

/** `PATCH`: the URL is checked again; enabling an endpoint clears why it was disabled. */
export const updateEndpoint = async (owner: Owner, id: string, changes: EndpointChanges, actor: Actor) => {
  const endpoint = await findEndpoint(owner, id);
  if (changes.url !== undefined) await checkEndpointUrl(changes.url);
  const updated: WebhookEndpoint = {
    ...endpoint,
    url: changes.url ?? endpoint.url,
    enabledEvents: changes.enabledEvents ?? endpoint.enabledEvents,
    description: changes.description === undefined ? endpoint.description : changes.description,
    status: changes.status ?? endpoint.status,
    disabledReason: changes.status === 'enabled' ? null : endpoint.disabledReason,
    updatedAt: now(),
  };
  const changed = CHANGEABLE.filter((field) => changes[field] !== undefined);
  const written: (keyof WebhookEndpoint)[] = [...changed, 'disabledReason', 'updatedAt'];
  // A new URL, or an endpoint enabled again, is a receiver not known to answer promptly: its tries lease.
  if (changes.url !== undefined || changes.status === 'enabled') {
    updated.promptSince = null;
    written.push('promptSince');
  }
  const set = Object.fromEntries(written.map((field) => [field, updated[field]]));
  // Field names only: a URL may carry a token of the integrator's in its query.
  await writeChanges(endpoint, set, { action: 'webhook_endpoint.updated', actor, metadata: { changed } });
  return updated;
};

/** `DELETE`: the endpoint goes (its pending deliveries find it gone) and the owner's count goes down. */
export const deleteEndpoint = async (owner: Owner, id: string, actor: Actor) => {
  const endpoint = await findEndpoint(owner, id);
  await transact(
    [
      webhookEndpointDelete(owner.ownerId, id),
      endpointCountLower(owner.ownerId),
      audit(endpoint, 'webhook_endpoint.deleted', actor, { url: endpoint.url }),
    ],
    () => new ResourceMissingError('webhook_endpoint', id),
  );
};

/**
 * A new secret, answered this once; the old one signs beside it for 24 hours. Conditional on the
 * secret read, so of two rotations at once one fails and is read again: none is lost unseen.
 */
export const rotateEndpointSecret = async (deps: CipherDeps, owner: Owner, id: string, actor: Actor) => {
  for (;;) {
    const endpoint = await findEndpoint(owner, id);
    const secret = newSecret();
    const at = new Date();
    const expiresAt = new Date(at.getTime() + SECRET_OVERLAP_SECONDS * 1000).toISOString();
    const set = {
      secret: await encryptSecret(deps, id, secret),
      previousSecret: { secret: endpoint.secret, expiresAt },
      updatedAt: at.toISOString(),
    };
    const entry = {
      action: 'webhook_endpoint.secret_rotated' as const,
      actor,
      metadata: { previousValidUntil: expiresAt },
    };
    try {
      await writeChanges(endpoint, set, entry, endpoint.secret);
      return { endpoint: { ...endpoint, ...set }, secret };
    } catch (error) {
      if (!(error instanceof ResourceMissingError)) throw error;
    }
  }
};
