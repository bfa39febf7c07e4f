/**
 * The tenant (CONTRACT.md, tenancy): every store, job and audit entry belongs to one owner, the
 * owner of the API key that made it. Every use case takes it the same way, as `{ ownerId }`, and
 * answers another owner's resource as missing.
 */
export interface Owner {
  ownerId: string;
}
