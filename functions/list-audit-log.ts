import { parseInput } from '../shared/core/errors.js';
import { listAuditEntries } from '../shared/entities/audit-entry.js';
import { apiHandler, ok } from '../shared/http/handler.js';
import { presentAuditEntry, presentList } from '../shared/http/present.js';
import { ListAuditLogQuery } from '../shared/http/schemas.js';

export const handler = apiHandler(async ({ ownerId, query }) => {
  const { limit, startingAfter, filters } = parseInput(ListAuditLogQuery, query);
  const page = await listAuditEntries({ ownerId }, limit, startingAfter, filters);
  return ok(presentList('/v1/audit_log', page.data.map(presentAuditEntry), page.hasMore));
});
