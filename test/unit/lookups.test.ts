import { brotliCompressSync } from 'node:zlib';
import { type LineSummary, sameLines } from '../../shared/domain/orders.js';
import { syncJobFrom } from '../../shared/order-flow/order-sync-job.js';
import { lookUpSupplierOrder } from '../../shared/order-flow/placing.js';
import { PlatformError } from '../../shared/platforms/http.js';
import type { FoundOrder, ShopConnection } from '../../shared/platforms/port.js';
import { fakeDeps } from './fake-deps.js';
import { jobFields } from './job-fixtures.js';

/**
 * PLATFORM-API.md, "Lookups": an order is found by the `source_identifier` that names its job; one
 * placed before carries the reseller order's only, shared by that order's jobs on one shop, and is
 * taken only when its lines are the job's.
 */

const findOrder = jest.fn<Promise<FoundOrder | null>, [ShopConnection, string]>();
const deps = fakeDeps({ findOrder });
const shop: ShopConnection = {
  platform: 'storeplatform_a',
  shopDomain: 'supplier.myshopify.com',
  accessToken: 'tok',
  webhookSecret: 'sec',
};

/** One reseller order, two vendor tags: both source stores on the same supplier shop. */
const RAW = JSON.stringify({
  id: 5551234,
  currency: 'USD',
  line_items: [
    { id: 1, sku: 'MUG-1', quantity: 2, price: '13.00', vendor: 'Acme' },
    { id: 2, sku: 'CAP-1', quantity: 1, price: '5.00', vendor: 'Bolt' },
    { id: 3, quantity: 1, price: '4.00', vendor: 'Acme' },
  ],
});
const jobOf = (id: string, vendorTag: string, raw = RAW) =>
  syncJobFrom({
    id,
    ...jobFields('processing', 1),
    sourceStoreId: `sst_${vendorTag}`,
    resellerShopDomain: 'reseller.myshopify.com',
    vendorTag,
    orderBody: brotliCompressSync(Buffer.from(raw)),
    createdAt: '2026-11-21T04:00:00.000Z',
    updatedAt: '2026-11-21T04:00:00.000Z',
  });
const acme = jobOf('sj_acme', 'Acme');
const ACME_LINES: LineSummary[] = [
  { sku: 'MUG-1', quantity: 2, vendor: 'Acme' },
  { sku: null, quantity: 1, vendor: 'Acme' },
];

describe('lookUpSupplierOrder: the order that names the job, then the one placed before', () => {
  beforeEach(() => findOrder.mockReset());

  it('asks by <reseller shop>:<order>:<job> first, and takes what it finds without asking again', async () => {
    findOrder.mockResolvedValueOnce({ orderId: '7001', lineItemIds: ['11', '12'] });

    const lookup = await lookUpSupplierOrder(deps, shop, acme);

    expect(lookup).toEqual({ kind: 'found', orderId: '7001', lineItemIds: ['11', '12'] });
    expect(findOrder.mock.calls.map(([, source]) => source)).toEqual(['reseller.myshopify.com:5551234:sj_acme']);
  });

  it('then asks by <reseller shop>:<order>, and takes that order when its lines are the job’s', async () => {
    findOrder
      .mockResolvedValueOnce(null)
      .mockResolvedValueOnce({ orderId: '7002', lineItemIds: ['21', '22'], lines: ACME_LINES });

    const lookup = await lookUpSupplierOrder(deps, shop, acme);

    expect(lookup).toEqual({ kind: 'found', orderId: '7002', lineItemIds: ['21', '22'] });
    expect(findOrder.mock.calls.map(([, source]) => source)).toEqual([
      'reseller.myshopify.com:5551234:sj_acme',
      'reseller.myshopify.com:5551234',
    ]);
  });

  it.each<[string, LineSummary[] | undefined]>([
    ['the other job’s (the other vendor tag)', [{ sku: 'CAP-1', quantity: 1, vendor: 'Bolt' }]],
    ['the same skus and quantities of another vendor', ACME_LINES.map((line) => ({ ...line, vendor: 'Bolt' }))],
    ['another quantity', [ACME_LINES[0], { ...ACME_LINES[1], quantity: 2 }]],
    ['the same lines in another order', [ACME_LINES[1], ACME_LINES[0]]],
    ['one line fewer', [ACME_LINES[0]]],
    ['lines the platform did not answer', undefined],
  ])('does not take an order placed before whose lines are %s: absent', async (_, lines) => {
    findOrder.mockResolvedValueOnce(null).mockResolvedValueOnce({ orderId: '7003', ...(lines ? { lines } : {}) });

    expect(await lookUpSupplierOrder(deps, shop, acme)).toEqual({ kind: 'absent' });
  });

  it('does not take an order placed before when the job’s own order cannot be read', async () => {
    findOrder.mockResolvedValueOnce(null).mockResolvedValueOnce({ orderId: '7004', lines: ACME_LINES });

    expect(await lookUpSupplierOrder(deps, shop, jobOf('sj_acme', 'Acme', 'not json'))).toEqual({ kind: 'absent' });
  });

  it('is absent when neither identifier finds an order', async () => {
    findOrder.mockResolvedValue(null);
    expect(await lookUpSupplierOrder(deps, shop, acme)).toEqual({ kind: 'absent' });
    expect(findOrder).toHaveBeenCalledTimes(2);
  });

  it('cannot tell when a lookup fails, and asks nothing more', async () => {
    findOrder.mockRejectedValueOnce(
      new PlatformError({ platform: 'storeplatform_a', status: 503, retryable: true, message: 'lookup 503' }),
    );

    expect(await lookUpSupplierOrder(deps, shop, acme)).toEqual({
      kind: 'unknown',
      reason: 'lookup 503',
      refused: false,
    });
    expect(findOrder).toHaveBeenCalledTimes(1);
  });
});

describe('sameLines', () => {
  it('reads an empty sku or vendor as none, and a number sku as its digits', () => {
    expect(sameLines([{ sku: null, quantity: 1, vendor: 'Acme' }], [{ sku: '', quantity: 1, vendor: 'Acme' }])).toBe(
      true,
    );
    expect(sameLines([{ sku: '12345', quantity: 1, vendor: null }], [{ sku: '12345', quantity: 1, vendor: '' }])).toBe(
      true,
    );
  });

  it('never matches no lines', () => {
    expect(sameLines([], [])).toBe(false);
  });
});
