import type { ApiClient, Schemas } from '../client/client.js';

/**
 * The API's shapes as the console reads them, from docs/openapi.json. A store's health (CONTRACT.md
 * §12) comes with issue 29: until the document has it, it is read as optional here, in the
 * contract's shapes, and a value the API does not send shows as not shown.
 */

export type Job = Schemas['sync_job'];
export type Attempt = Schemas['sync_job_attempt'];
export type AuditEntry = Schemas['audit_log_entry'];
export type Order = Schemas['order'];

/** What §12 adds to a store; every field optional until the API shows it. */
export interface StoreHealth {
  webhooks?: { status: string; checkedAt?: string | null; missing?: string[]; error?: string | null } | null;
  connection?: { state: string; since?: string | null; reason?: string | null } | null;
  tokenExpiresAt?: string | null;
  lastPolledAt?: string | null;
}
export type ResellerStore = Schemas['reseller_store'] & StoreHealth;
export type SourceStore = Schemas['source_store'] & StoreHealth;

export type { ApiClient };
