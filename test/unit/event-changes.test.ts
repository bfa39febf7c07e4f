import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { seededEntry, seededJob } from '../../bench/seed.js';
import type { SyncJobStatus } from '../../shared/domain/orders.js';
import { DEFAULT_ROUTING_POLICY } from '../../shared/domain/routing.js';
import { imagesOf } from '../../shared/dynamo/stream.js';
import { CONNECTED, type ResellerStore, resellerStoreItem, type StoreConnection } from '../../shared/entities/store.js';
import { changesOf } from '../../shared/events/changes.js';
import { type FulfillmentEntry, type SyncJob, syncJobItem } from '../../shared/order-flow/order-sync-job.js';

/** What a write of an order's record reports (CONTRACT.md §14), from the item's two images. */

const CREATED = '2026-11-20T10:00:00.000Z';
const LATER = '2026-11-20T10:00:05.000Z';
const job = (status: SyncJobStatus, fields: Partial<SyncJob> = {}): SyncJob => ({
  ...seededJob({ id: 'sj_1', ownerId: 'owner_a', resellerStoreId: 'rst_1', createdAt: CREATED, status }),
  ...fields,
});
const item = (status: SyncJobStatus, fields: Partial<SyncJob> = {}) => syncJobItem(job(status, fields));

const entry = (status: FulfillmentEntry['status'], updatedAt = LATER) => seededEntry(status, CREATED, { updatedAt });

const typesOf = (before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined) =>
  changesOf(before, after).map((change) => change.type);

/** Reseller store rst_1 of owner_a as the table holds it, with these fields. */
const shopItem = (fields: Partial<ResellerStore>) =>
  resellerStoreItem({
    id: 'rst_1',
    ownerId: 'owner_a',
    name: 'Shop',
    platform: 'storeplatform_a',
    shopDomain: 'shop.myshopify.com',
    secrets: { accessToken: 'ciphertext', webhookSecret: 'ciphertext' },
    previousWebhookSecret: null,
    createdAt: CREATED,
    updatedAt: LATER,
    deletedAt: null,
    routingPolicy: DEFAULT_ROUTING_POLICY,
    ...fields,
  } as ResellerStore);

describe('changesOf', () => {
  it('reports a job reaching completed, dead or cancelled, once, with the job as its subject', () => {
    for (const status of ['completed', 'dead', 'cancelled'] as const) {
      const [change, ...more] = changesOf(item('processing'), item(status, { updatedAt: LATER }));
      expect(more).toEqual([]);
      expect(change).toMatchObject({ type: `sync_job.${status}`, ownerId: 'owner_a', createdAt: LATER });
      expect(change.subject).toMatchObject({ kind: 'syncJob', job: { id: 'sj_1', status } });
    }
  });

  it('reports each failed attempt: entering failed, and failing again with one attempt more', () => {
    expect(typesOf(item('processing', { attempts: 1 }), item('failed', { attempts: 1 }))).toEqual(['sync_job.failed']);
    const again = changesOf(item('failed', { attempts: 1 }), item('failed', { attempts: 2, updatedAt: LATER }));
    expect(again.map((c) => c.type)).toEqual(['sync_job.failed']);
    expect(typesOf(item('failed', { attempts: 2 }), item('failed', { attempts: 2 }))).toEqual([]);
  });

  it('reports nothing for a write that changes no status (a lease, an index backfilled), nor for other items', () => {
    expect(typesOf(item('processing'), item('processing', { updatedAt: LATER }))).toEqual([]);
    expect(typesOf(item('completed'), item('completed'))).toEqual([]);
    expect(typesOf(undefined, { PK: 'AUD#aud_1', SK: 'AUD', ownerId: 'owner_a' })).toEqual([]);
    expect(typesOf(item('completed'), undefined)).toEqual([]);
  });

  it('reports a job needing a person once per attention', () => {
    const attention = { reason: 'address_unverified', since: LATER };
    expect(typesOf(item('completed'), item('completed', { attention }))).toEqual(['sync_job.attention_required']);
    expect(typesOf(item('completed', { attention }), item('completed', { attention }))).toEqual([]);
  });

  it('reports a job held (written held, or put on hold) and released, but not a held job cancelled', () => {
    const hold = { reasons: ['unpaid'], since: CREATED, until: null } as unknown as NonNullable<SyncJob['hold']>;
    expect(typesOf(undefined, item('pending', { hold }))).toEqual(['sync_job.held']);
    expect(typesOf(item('pending'), item('pending', { hold }))).toEqual(['sync_job.held']);
    expect(typesOf(item('pending', { hold }), item('pending', { hold }))).toEqual([]);
    expect(typesOf(item('pending', { hold }), item('pending', { updatedAt: LATER }))).toEqual(['sync_job.released']);
    expect(typesOf(item('pending', { hold }), item('cancelled', { updatedAt: LATER }))).toEqual(['sync_job.cancelled']);
  });

  it('reports a parcel delivered to the reseller or given up, by its entry', () => {
    const before = item('completed', { fulfillments: { 9001: entry('pending', CREATED) } });
    expect(typesOf(before, item('completed', { fulfillments: { 9001: entry('delivered') } }))).toEqual([
      'fulfillment.delivered',
    ]);
    expect(typesOf(before, item('completed', { fulfillments: { 9001: entry('dead') } }))).toEqual(['fulfillment.dead']);
    const delivered = item('completed', { fulfillments: { 9001: entry('delivered') } });
    expect(typesOf(delivered, delivered)).toEqual([]);
  });

  it('reports a store that left connected, once per disconnection, with the store as its subject', () => {
    const store = (connection: StoreConnection): Record<string, unknown> => ({
      ...shopItem({ connection }),
      // As markDisconnected writes it (shared/entities/store.ts).
      ...(connection.state === 'connected'
        ? {}
        : {
            connectionState: connection.state,
            connectionSince: connection.since,
            connectionReason: connection.reason,
          }),
    });
    const gone: StoreConnection = { state: 'uninstalled', since: LATER, reason: 'app/uninstalled' };
    const [change, ...more] = changesOf(store(CONNECTED), store(gone));
    expect(more).toEqual([]);
    expect(change).toMatchObject({ type: 'store.disconnected', ownerId: 'owner_a', createdAt: LATER });
    expect(change.subject).toMatchObject({ kind: 'resellerStore', store: { id: 'rst_1', connection: gone } });
    expect(typesOf(store(gone), store(gone))).toEqual([]);
    expect(typesOf(store(gone), store(CONNECTED))).toEqual([]);
    expect(typesOf(store(CONNECTED), store(CONNECTED))).toEqual([]);
  });

  it('reports a store whose webhook subscriptions a check found failing, once until they are well again', () => {
    const base = shopItem({ connection: CONNECTED, webhooks: null });
    const checked = (status: string, checkedAt = LATER) => ({
      ...base,
      webhooks: { status, checkedAt, missing: ['orders/create'], error: status === 'failing' ? '403' : null },
    });
    const [change] = changesOf(checked('healthy', CREATED), checked('failing'));
    expect(change).toMatchObject({ type: 'store.webhooks_failing', createdAt: LATER, ownerId: 'owner_a' });
    expect(typesOf(checked('failing', CREATED), checked('failing'))).toEqual([]);
    expect(typesOf(checked('failing'), checked('healthy'))).toEqual([]);
    // `pending` (a shop that did not answer within the creation's budget) is no failure; a poll that
    // then finds them failing is.
    expect(typesOf(checked('healthy', CREATED), checked('pending'))).toEqual([]);
    expect(typesOf(checked('pending', CREATED), checked('failing'))).toEqual(['store.webhooks_failing']);
  });

  it('gives the same write the same event id, and another write another', () => {
    const before = item('processing');
    const after = item('completed', { updatedAt: LATER });
    expect(changesOf(before, after)[0].id).toBe(changesOf(before, after)[0].id);
    expect(changesOf(before, after)[0].id).toMatch(/^evt_[0-9a-z]{24}$/);
    const other = changesOf(item('processing'), item('completed', { updatedAt: '2026-11-20T10:00:06.000Z' }));
    expect(other[0].id).not.toBe(changesOf(before, after)[0].id);
  });

  it('reads a stream record as Lambda hands it over, binaries in base64, as the document client reads items', () => {
    const after = item('completed', { updatedAt: LATER });
    const wire = (value: Record<string, unknown>) =>
      JSON.parse(
        JSON.stringify(marshall(value, { removeUndefinedValues: true }), (_k, v) =>
          v?.type === 'Buffer' ? Buffer.from(v.data).toString('base64') : v,
        ),
      );
    const record = { dynamodb: { OldImage: wire(item('processing')), NewImage: wire(after) } } as DynamoDBRecord;
    const images = imagesOf(record);
    expect(typesOf(images.before, images.after)).toEqual(['sync_job.completed']);
    expect(changesOf(images.before, images.after)[0].subject).toEqual(changesOf(item('processing'), after)[0].subject);
  });
});
