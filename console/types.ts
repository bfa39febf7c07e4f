import type { ApiClient, Schemas } from '../client/client.js';

/**
 * The API's shapes as the console reads them. Holds (CONTRACT.md §11) and a store's health
 * (§12) come with issues 28 and 29: until docs/openapi.json has them, they are read as optional
 * here, in the contract's shapes, and a value the API does not send shows as unknown.
 */

export type HoldReason = 'delay' | 'payment' | 'risk' | 'test_order' | 'manual';
export interface Hold {
  reasons: HoldReason[];
  since: string;
  until: string | null;
}

export type Job = Schemas['sync_job'] & { hold?: Hold | null };
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
