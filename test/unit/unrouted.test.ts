import { routeLineItems, unroutedLines, unroutedReason } from '../../shared/domain/routing.js';
import { INDEX_KEYS, keys, lists, orderRecordKeyOf } from '../../shared/dynamo/keys.js';
import { orderFrom, orderOrNothing } from '../../shared/order-flow/order.js';
import { orderCancellationItem, syncJobOrNothing } from '../../shared/order-flow/order-items.js';
import {
  syncJobFrom,
  syncJobItem,
  type UnroutedOrder,
  unroutedLinesAttribute,
  unroutedLinesFrom,
  unroutedOrderFrom,
  unroutedOrderItem,
  unroutedOrderMarkItem,
} from '../../shared/order-flow/order-sync-job.js';
import { newSyncJob } from '../../shared/order-flow/receiving.js';

/** CONTRACT.md §10.8: which items route nowhere and why, and the records that keep them. */
describe('unrouted items', () => {
  const stores = new Map([
    ['Acme', 'sst_acme'],
    ['', 'sst_blank'],
  ]);

  it('says why an item goes to no supplier, and nothing for one that routes', () => {
    expect(unroutedReason({ vendor: 'Acme' }, stores)).toBeNull();
    expect(unroutedReason({ vendor: 'Acme', giftCard: true }, stores)).toBe('gift_card');
    expect(unroutedReason({ vendor: 'Nobody' }, stores)).toBe('no_source_store');
    expect(unroutedReason({ vendor: 'acme' }, stores)).toBe('no_source_store');
    expect(unroutedReason({ vendor: null }, stores)).toBe('no_vendor');
    expect(unroutedReason({}, stores)).toBe('no_vendor');
    // A blank vendor names no store, even a (never valid) blank tag.
    expect(unroutedReason({ vendor: '' }, stores)).toBe('no_vendor');
    expect(unroutedReason({ vendor: '  ' }, stores)).toBe('no_vendor');
    expect(unroutedReason({ vendor: null, giftCard: true }, stores)).toBe('gift_card');
  });

  it('routes exactly the items it finds no reason for, and lists the others by position', () => {
    const items = [
      { vendor: 'Acme' },
      { vendor: 'Nobody' },
      { vendor: 'Acme', giftCard: true },
      { vendor: '' },
      { vendor: 'Acme' },
    ];
    const routed = routeLineItems(items, stores).flatMap((group) => group.lineItems);
    expect(routed).toEqual([items[0], items[4]]);
    expect(unroutedLines(items, stores)).toEqual([
      { position: 1, reason: 'no_source_store' },
      { position: 2, reason: 'gift_card' },
      { position: 3, reason: 'no_vendor' },
    ]);
    expect(unroutedLines([{ vendor: 'Acme' }], stores)).toEqual([]);
  });

  it('keeps the unrouted lines in a few bytes, and reads them back', () => {
    const lines = unroutedLines([{ vendor: 'x' }, { vendor: 'Acme' }, { giftCard: true }, { vendor: null }], stores);
    expect(unroutedLinesAttribute(lines)).toBe('0s,2g,3v');
    expect(unroutedLinesFrom('0s,2g,3v')).toEqual(lines);
    expect(unroutedLinesFrom(null)).toBeNull();
    expect(() => unroutedLinesFrom('1x')).toThrow(/unrouted line/);
  });
});

describe('the order records', () => {
  const job = (position: number, unrouted: boolean, via: 'webhook' | 'poll' = 'webhook') => {
    const base = newSyncJob(
      {
        ownerId: 'owner_a',
        resellerStoreId: 'rst_1',
        resellerShopDomain: 'a.myshopify.com',
        externalOrderId: '1001',
        receivedVia: via,
      },
      { sourceStoreId: 'sst_1', vendorTag: 'Acme' },
      position,
      { body: Buffer.from('{}') },
      '2026-11-25T10:00:00.000Z',
    );
    return position === 0
      ? {
          ...base,
          orderJobIds: [base.id],
          unroutedLines: unrouted ? [{ position: 2, reason: 'gift_card' as const }] : null,
        }
      : base;
  };

  it('puts an order’s first job, and no other, in its store’s list of orders', () => {
    const first = syncJobItem(job(0, false));
    expect(first[INDEX_KEYS.resourceLists.pk]).toBe(lists.storeOrders('rst_1').of(job(0, false).id));
    expect(syncJobItem(job(1, false))[INDEX_KEYS.resourceLists.pk]).toBeUndefined();
  });

  it('writes receivedVia and the unrouted lines only when they say something (each byte is paid per write)', () => {
    const plain = syncJobItem(job(0, false));
    expect(plain.receivedVia).toBeUndefined();
    expect(plain.unroutedLines).toBeUndefined();
    const polled = syncJobItem(job(0, true, 'poll'));
    expect(polled).toMatchObject({ receivedVia: 'poll', unroutedLines: '2g' });
    expect(syncJobFrom(polled)).toMatchObject({
      receivedVia: 'poll',
      unroutedLines: [{ position: 2, reason: 'gift_card' }],
    });
    expect(syncJobFrom(plain)).toMatchObject({ receivedVia: 'webhook', unroutedLines: null });
  });

  it('reads an order from its first job, never from another job', () => {
    const first = job(0, true, 'poll');
    expect(orderFrom(syncJobItem(first))).toEqual({
      firstJobId: first.id,
      ownerId: 'owner_a',
      resellerStoreId: 'rst_1',
      externalOrderId: '1001',
      createdAt: '2026-11-25T10:00:00.000Z',
      receivedVia: 'poll',
      syncJobIds: [first.id],
      unroutedLines: [{ position: 2, reason: 'gift_card' }],
      cancelledAt: null,
      redactedAt: null,
      refunds: [],
      stored: { body: Buffer.from('{}') },
    });
    expect(orderOrNothing(syncJobItem(job(1, false)))).toBeUndefined();
  });

  const unrouted: UnroutedOrder = {
    firstJobId: 'sj_first',
    ownerId: 'owner_a',
    resellerStoreId: 'rst_1',
    externalOrderId: '1002',
    receivedAt: '2026-11-25T10:00:00.000Z',
    receivedVia: 'poll',
    unroutedLines: [{ position: 0, reason: 'no_source_store' }],
    cancelledAt: null,
    redactedAt: null,
    order: { body: new Uint8Array([1, 2, 3]) },
  };

  it('keeps an order that routes nowhere at its first job’s key, which no reader of jobs mistakes for a job', () => {
    const item = unroutedOrderItem(unrouted);
    expect(item).toMatchObject(keys.syncJob('sj_first'));
    expect(item[INDEX_KEYS.resourceLists.pk]).toBe(lists.storeOrders('rst_1').of('sj_first'));
    expect(item.id).toBeUndefined(); // the index backfill takes an item with an `id` at a job key for a job
    expect(unroutedOrderFrom('sj_first', item)).toEqual(unrouted);
    expect(syncJobOrNothing(item)).toBeUndefined();
    expect(orderFrom(item)).toMatchObject({ firstJobId: 'sj_first', externalOrderId: '1002', syncJobIds: [] });
    expect(orderFrom(unroutedOrderItem({ ...unrouted, order: { parts: 2 } })).stored).toEqual({ parts: 2 });
  });

  it('marks an order with unrouted items where its list entry names the order’s record', () => {
    const mark = unroutedOrderMarkItem(unrouted);
    expect(mark[INDEX_KEYS.resourceLists.pk]).toBe(lists.storeUnroutedOrders('rst_1').of('sj_first'));
    expect(mark[INDEX_KEYS.resourceLists.sk]).toBe(unroutedOrderItem(unrouted)[INDEX_KEYS.resourceLists.sk]);
    expect(orderRecordKeyOf({ PK: String(mark.PK), SK: String(mark.SK) })).toEqual(keys.syncJob('sj_first'));
  });

  it('reads no order where a cancellation waits for its order', () => {
    const kept = orderCancellationItem({ firstJobId: 'sj_first', reason: null, cancelledAt: 'x', expiresAt: 1 });
    expect(orderOrNothing(kept)).toBeUndefined();
    expect(() => orderFrom(kept)).toThrow(/records no order/);
  });
});
