import { routes } from '../../lib/routes.js';
import { SYNC_JOB_STATUSES } from '../../shared/domain/orders.js';
import { INDEX_KEYS, LIST_SHARDS } from '../../shared/dynamo/keys.js';
import {
  ACTIONS_LISTED_APART,
  AUDIT_ACTIONS,
  AUDITED_RESOURCES,
  type AuditEntry,
  auditEntryIndexEntries,
  auditListSource,
} from '../../shared/entities/audit-entry.js';
import { EVENT_GROUPS, EVENT_TYPES } from '../../shared/entities/event.js';
import { eventSources } from '../../shared/events/events.js';
import { syncJobListSource } from '../../shared/order-flow/order.js';

/** Every filter combination of the two filtered lists, and the list source each one reads. */
const jobSources = [undefined, ...SYNC_JOB_STATUSES].flatMap((status) =>
  [undefined, 'rst_1'].map((resellerStoreId) => ({
    filters: { status, resellerStoreId },
    source: syncJobListSource({ ownerId: 'owner_a' }, { status, resellerStoreId }),
  })),
);
const auditSources = [undefined, ...AUDIT_ACTIONS].flatMap((action) =>
  [undefined, 'rst_1'].flatMap((resellerStoreId) =>
    [undefined, 'sj_1'].flatMap((resourceId) =>
      [undefined, ...AUDITED_RESOURCES].map((resourceType) => {
        const filters = { action, resellerStoreId, resourceId, resourceType };
        return { filters, source: auditListSource({ ownerId: 'owner_a' }, filters) };
      }),
    ),
  ),
);

const declared = (name: string) => routes.find((route) => route.name === name)?.access.indexes ?? [];

describe('list sources', () => {
  it('declares on each list route exactly the indexes its filters read (the Query grant names them)', () => {
    expect(new Set(declared('ListSyncJobs'))).toEqual(new Set(jobSources.map((s) => s.source.index)));
    expect(new Set(declared('ListAuditLog'))).toEqual(new Set(auditSources.map((s) => s.source.index)));
  });

  it('reads a partition of only matches for the rare job states and every audit filter but a resource', () => {
    const exact = (s: { source: { exact: boolean } }) => s.source.exact;
    expect(jobSources.filter(exact).map((s) => s.filters)).toEqual([
      { status: undefined, resellerStoreId: undefined },
      { status: undefined, resellerStoreId: 'rst_1' },
      { status: 'failed', resellerStoreId: undefined },
      { status: 'failed', resellerStoreId: 'rst_1' },
      { status: 'dead', resellerStoreId: undefined },
      { status: 'dead', resellerStoreId: 'rst_1' },
      { status: 'cancelled', resellerStoreId: undefined },
      { status: 'cancelled', resellerStoreId: 'rst_1' },
    ]);
    expect(auditSources.filter((s) => !exact(s)).every((s) => s.filters.resourceId !== undefined)).toBe(true);
  });
});

describe('audit entries in their lists', () => {
  const entry = (action: AuditEntry['action'], resellerStoreId: string | null): AuditEntry => ({
    id: 'aud_1',
    ownerId: 'owner_a',
    action,
    resellerStoreId,
    resourceType: 'sync_job',
    resourceId: 'sj_1',
    actorId: 'system',
    actor: { type: 'system', id: 'system' },
    metadata: {},
    createdAt: '2026-11-29T10:00:00.000Z',
  });
  const reads = (written: AuditEntry, filters: { action?: AuditEntry['action']; resellerStoreId?: string }) => {
    const source = auditListSource({ ownerId: 'owner_a' }, filters);
    const entries = auditEntryIndexEntries(written);
    return source.partitions.includes(entries[INDEX_KEYS[source.index].pk]);
  };

  it('is read by every filter it matches and by none it does not, whatever lists it is written in', () => {
    for (const action of AUDIT_ACTIONS) {
      const written = entry(action, 'rst_1');
      const other = AUDIT_ACTIONS.find((a) => a !== action)!;
      expect([reads(written, {}), reads(written, { action }), reads(written, { resellerStoreId: 'rst_1' })]).toEqual([
        true,
        true,
        true,
      ]);
      expect(reads(written, { action, resellerStoreId: 'rst_1' })).toBe(true);
      expect(reads(written, { action: other })).toBe(false);
      expect(reads(written, { resellerStoreId: 'rst_2' })).toBe(false);
      expect(reads(entry(action, null), {})).toBe(true);
    }
  });

  it('keeps a refund’s and a return’s actions in three lists, the others in five (an entry is a write unit)', () => {
    const lists = (action: AuditEntry['action']) =>
      Object.keys(auditEntryIndexEntries(entry(action, 'rst_1'))).filter((name) => name.endsWith('PK')).length;
    expect(ACTIONS_LISTED_APART.map(lists)).toEqual([3, 3]);
    expect(lists('sync_job.retried')).toBe(5);
  });
});

describe('event list sources', () => {
  const types = [undefined, ...EVENT_TYPES.map((exact) => ({ exact })), ...EVENT_GROUPS.map((group) => ({ group }))];
  const sources = types.flatMap((type) =>
    [false, true].flatMap((failing) => eventSources('owner_a', { type, failing })),
  );
  const route = routes.find((r) => r.name === 'ListEvents');

  it('declares on ListEvents exactly the indexes its filters read, and a Query of the table', () => {
    const indexes = sources.map((s) => s.index).filter((index) => index !== 'table');
    expect(new Set(declared('ListEvents'))).toEqual(new Set(indexes));
    expect(route?.access.table).toContain('Query');
  });

  it('reads the 16 shards of each type’s list in the table, and its list of the first layout if it had one', () => {
    const partitions = (filters: Parameters<typeof eventSources>[1]) =>
      eventSources('o', filters).map((s) => `${s.index} ${s.partition}`);
    // The 12 types of the first layout (2026-11-27) have a GSI5 list; the types added since have none to read.
    expect(partitions({})).toHaveLength(EVENT_TYPES.length * LIST_SHARDS + 12);
    expect(partitions({ type: { exact: 'fulfillment.unscanned' } }).filter((p) => p.startsWith('stateLists'))).toEqual(
      [],
    );
    expect(partitions({ type: { exact: 'sync_job.dead' } })).toEqual([
      'table EVT#o#sync_job.dead',
      ...Array.from({ length: LIST_SHARDS - 1 }, (_, n) => `table EVT#o#sync_job.dead#${n + 1}`),
      'stateLists OWNER#o#EVT#sync_job.dead',
    ]);
    const group = partitions({ type: { group: 'fulfillment' } });
    expect(group).toHaveLength(3 * LIST_SHARDS + 2);
    expect(group.filter((p) => p.startsWith('stateLists'))).toEqual([
      'stateLists OWNER#o#EVT#fulfillment.delivered',
      'stateLists OWNER#o#EVT#fulfillment.dead',
    ]);
    expect(partitions({ type: { group: 'fulfillment' }, failing: true })).toEqual([
      'storeStateLists OWNER#o#EVT#FAILING',
    ]);
  });
});
