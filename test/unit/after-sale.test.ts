import { seededJob } from '../../bench/seed.js';
import { changesOf } from '../../shared/events/changes.js';
import {
  type AfterSale,
  afterSaleView,
  creditOf,
  emptyAfterSale,
  type JobReturn,
  lineAfterSaleView,
} from '../../shared/order-flow/order-after-sale.js';
import { type SyncJob, syncJobFrom, syncJobItem } from '../../shared/order-flow/order-sync-job.js';
import { parseApprovedReturn, parseRefund } from '../../shared/order-flow/refunding-request.js';

/** What a job shows and reports after the sale (CONTRACT.md §15.3), from its `afterSale` record. */

const AT = '2026-11-29T10:00:00.000Z';
const job = (afterSale: AfterSale | null): SyncJob => ({
  ...seededJob({ id: 'sj_1', ownerId: 'owner_a', resellerStoreId: 'rst_1', createdAt: AT, status: 'completed' }),
  afterSale,
});
const aReturn = (status: JobReturn['status'], quantity = 1): JobReturn => ({
  id: 'ret_1',
  resellerReturnId: '555',
  sourceReturnId: '77',
  status,
  lines: [{ resellerLineItemId: '1', sourceLineItemId: '9', quantity, reason: 'unwanted' }],
  error: null,
  sentAt: null,
  openedAt: AT,
  closedAt: null,
});
const record = (fields: Partial<AfterSale>): AfterSale => ({ ...emptyAfterSale(), currency: 'USD', at: AT, ...fields });
const priceOf = () => '10.00';

describe('after the sale', () => {
  it('counts the credit: expected from open and closed returns, refunded in its currency, due when short', () => {
    const closed = record({ returns: [aReturn('closed', 2)] });
    expect(creditOf(closed, 'USD', priceOf)).toEqual({
      currency: 'USD',
      expected: '20.00',
      refunded: '0.00',
      due: true,
    });
    const refunded = record({
      returns: [aReturn('closed', 2)],
      sourceRefunds: [
        { id: 'r1', amount: '20.00', currency: 'USD', returnId: 'ret_1', lines: [], createdAt: AT },
        { id: 'r2', amount: '5.00', currency: 'EUR', returnId: null, lines: [], createdAt: AT },
      ],
    });
    expect(creditOf(refunded, 'USD', priceOf)).toEqual({
      currency: 'USD',
      expected: '20.00',
      refunded: '20.00',
      due: false,
    });
    // An open return is expected but not yet due; a cancelled one counts for nothing.
    expect(creditOf(record({ returns: [aReturn('open')] }), 'USD', priceOf)).toMatchObject({
      expected: '10.00',
      due: false,
    });
    expect(creditOf(record({ returns: [aReturn('cancelled')] }), 'USD', priceOf)).toMatchObject({ expected: '0.00' });
    expect(creditOf(null, 'USD', priceOf)).toBeNull();
  });

  it('shows each line’s refunded, removed and returned units, and the job’s returns without their bookkeeping', () => {
    const afterSale = record({ lines: { '1': { refunded: 2, cut: 1, removed: 1 } }, returns: [aReturn('open')] });
    expect(lineAfterSaleView(afterSale, '1')).toEqual({ refundedQuantity: 2, removedQuantity: 1, returnedQuantity: 1 });
    expect(lineAfterSaleView(null, '1')).toEqual({ refundedQuantity: 0, removedQuantity: 0, returnedQuantity: 0 });
    const view = afterSaleView(afterSale, [{ resellerLineItemId: '1', sourcePrice: '10.00' }]);
    expect(view.returns[0]).not.toHaveProperty('sentAt');
    expect(view.credit).toEqual({ currency: 'USD', expected: '10.00', refunded: '0.00' });
  });

  it('stores the record under two-letter names without nulls, and reads it back whole', () => {
    const full = record({
      v: 4,
      seen: ['refund:1'],
      lines: { '1': { refunded: 2, cut: 1, removed: 1 } },
      removal: { status: 'done', at: 2, requestedAt: AT, endedAt: null },
      returns: [{ ...aReturn('open'), cancelRequested: true }],
      sourceRefunds: [{ id: 'r1', amount: '10.00', currency: 'USD', returnId: null, lines: [], createdAt: AT }],
      creditDue: true,
      orderRefunds: [{ id: '1', createdAt: AT, lines: [], amount: null, currency: null }],
    });
    const stored = syncJobItem(job(full)).afterSale as Record<string, unknown>;
    const names = (value: unknown): string[] =>
      value && typeof value === 'object'
        ? Object.entries(value).flatMap(([name, entry]) => [...(Array.isArray(value) ? [] : [name]), ...names(entry)])
        : [];
    expect(names(stored).filter((name) => !/^\d+$/.test(name) && name.length > 2)).toEqual([]);
    expect(JSON.stringify(stored)).not.toContain('null');
    expect(JSON.stringify(stored).length).toBeLessThan(JSON.stringify(full).length * 0.7);
    expect(syncJobFrom(syncJobItem(job(full))).afterSale).toEqual(full);
  });

  it('keeps the record through the job item, and reports each change once', () => {
    const before = syncJobItem(job(record({ v: 1, returns: [aReturn('pending')] })));
    expect(syncJobFrom(before).afterSale?.returns[0].status).toBe('pending');
    const opened = syncJobItem(job(record({ v: 2, returns: [aReturn('open')] })));
    expect(changesOf(before, opened).map((c) => c.type)).toEqual(['sync_job.return_opened']);
    const closedAndRefunded = syncJobItem(
      job(
        record({
          v: 3,
          lines: { '1': { refunded: 1, cut: 1, removed: 1 } },
          returns: [aReturn('closed')],
          sourceRefunds: [{ id: 'r1', amount: '10.00', currency: 'USD', returnId: 'ret_1', lines: [], createdAt: AT }],
        }),
      ),
    );
    expect(changesOf(opened, closedAndRefunded).map((c) => c.type)).toEqual([
      'sync_job.units_removed',
      'sync_job.return_closed',
      'sync_job.refunded_by_source',
    ]);
    // The same image again (a stream record handed over twice): the same ids; an unchanged version, nothing.
    expect(changesOf(opened, closedAndRefunded).map((c) => c.id)).toEqual(
      changesOf(opened, closedAndRefunded).map((c) => c.id),
    );
    expect(changesOf(closedAndRefunded, closedAndRefunded)).toEqual([]);
  });

  it('reads the payloads of §15 keeping every digit, and keeps no customer', () => {
    const refund = parseRefund({
      id: 123456789012345678901234567890n.toString(),
      order_id: 5551234,
      refund_line_items: [
        {
          line_item_id: 1,
          quantity: 1,
          restock_type: 'CANCEL',
          subtotal_set: { shop_money: { amount: '13.00', currency_code: 'USD' } },
        },
      ],
      refund_shipping_lines: [{ subtotal_amount_set: { shop_money: { amount: '5.00', currency_code: 'USD' } } }],
    });
    expect(refund).toMatchObject({
      id: '123456789012345678901234567890',
      orderId: '5551234',
      lines: [{ lineItemId: '1', quantity: 1, restockType: 'cancel' }],
      amounts: ['13.00', '5.00'],
      currency: 'USD',
    });
    const approved = parseApprovedReturn({
      id: 555,
      order: { id: 5551234 },
      customer: { email: 'shopper@example.com' },
      return_line_items: [{ fulfillment_line_item: { line_item: { id: 1 } }, quantity: 2, return_reason: 'DEFECTIVE' }],
    });
    expect(approved).toEqual({
      id: '555',
      orderId: '5551234',
      lines: [{ lineItemId: '1', quantity: 2, reason: 'defective' }],
    });
    expect(() => parseApprovedReturn({ id: 1, return_line_items: [] })).toThrow(/order\.id/);
  });
});
