import { readFileSync } from 'node:fs';
import {
  createResellerStore,
  createSourceStore,
  itemsHolding,
  readableItem,
  replaceAccessToken,
  scanAll,
  serviceForSuite,
  unique,
} from './support.js';
import { eventually, fulfillmentPayload, jobReaches, orderPayload, sendWebhook } from './webhooks.js';

/**
 * A shopper's personal data (CONTRACT.md §13) through the local runtime: what the compliance topics
 * erase is looked for in every item DynamoDB Local holds, binary attributes decompressed, and the
 * order still answers its routes and its jobs still move.
 */

jest.setTimeout(120_000);

const fixture = (name: string) => JSON.parse(readFileSync(`${__dirname}/../fixtures/shopify/${name}`, 'utf8'));

/** The fixture order's personal strings: its email, names, address, phone, note. */
const FIXTURE_PERSONAL = [
  'bob.norman@hostmail.com',
  'Bob Norman',
  'Norman',
  'Chestnut Street 92',
  'Louisville',
  'Kentucky',
  '40202',
  '555-625-1199',
  'Test note',
  'XXXX-XXXX-XXXX-4242',
];

describe('customer data: compliance topics, redaction and what still works after it', () => {
  const job = async (id: string) => (await api().get(`/v1/sync_jobs/${id}`)).body;

  const { service, api, sim } = serviceForSuite({ visibilityTimeoutSeconds: 2, platformTimeoutMs: 1_500 }, 120_000);

  /** APPHOOK items still kept: deliveries the app-webhook queue's worker has not handled yet. */
  const pendingDeliveries = async () =>
    (await scanAll(service.doc, service.tableName)).filter((item) => String(item.PK).startsWith('APPHOOK#'));

  /**
   * A compliance topic as Shopify sends it to `POST /v1/app/webhook` (signed with the store's secret),
   * answered 200 at once; resolves once the queue's worker has done its work.
   */
  const deliver = async (topic: string, shopDomain: string, secret: string, body: Record<string, unknown>) => {
    const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/app/webhook', {
      shopDomain,
      secret,
      body: { shop_domain: shopDomain, ...body },
      topic,
      spelling: 'shopify',
    });
    expect(receipt.status).toBe(200);
    await eventually(async () => (await pendingDeliveries()).length === 0);
  };

  /** Every item of the table holding any of `strings`, as `PK/SK: string`. */
  const holding = (strings: string[]) => itemsHolding(service, strings);

  const auditOf = async (resellerStoreId: string, action: string) =>
    (await api().get(`/v1/audit_log?reseller_store_id=${resellerStoreId}&action=${action}`)).body.data;

  it('customers/redact: Shopify’s own order, placed and fulfilled, erased everywhere; it still answers', async () => {
    // Prepare: Shopify's fixture order, routed to two Shopify suppliers, one of which ships.
    const secret = unique('whsec_shopify');
    const reseller = await createResellerStore(api(), { platform: 'storeplatform_b', webhookSecret: secret });
    const vcr = await createSourceStore(api(), reseller.id, {
      platform: 'storeplatform_b',
      vendorTag: 'VCR',
      webhookSecret: 'whsec_vcr',
    });
    await createSourceStore(api(), reseller.id, { platform: 'storeplatform_b', vendorTag: 'OMC' });
    const { order } = fixture('order_with_properties.json');
    await sim().placeOrder(reseller.shopDomain, order);
    const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret,
      body: order,
      topic: 'orders/create',
      spelling: 'shopify',
    });
    expect(receipt.status).toBe(200);
    const jobIds: string[] = receipt.body.syncJobIds;
    const jobs = await Promise.all(jobIds.map((id) => jobReaches(api(), id, 'completed')));
    const vcrJob = jobs.find((j) => j.sourceStoreId === vcr.id);
    const [vcrOrder] = await sim().orders(vcr.shopDomain);
    const parcel = { ...fixture('fulfillments.json')[0], status: 'success', order_id: vcrOrder.id, line_items: [] };
    const shipped = await sendWebhook(service.runtime.apiUrl, '/v1/fulfillments/webhook', {
      shopDomain: vcr.shopDomain,
      secret: 'whsec_vcr',
      body: parcel,
      topic: 'fulfillments/create',
      spelling: 'shopify',
    });
    expect(shipped.status).toBe(200);
    await eventually(async () => (await job(vcrJob.id)).fulfillment?.status === 'delivered');
    const held = await holding(FIXTURE_PERSONAL);
    expect(held).not.toEqual([]);
    const before = await Promise.all(jobIds.map(job));

    // A customers/redact with a bad signature is a 401 and changes nothing: nothing kept or queued, and
    // a while later (time for a worker to have done it) every copy of the order is still there, unaudited.
    const forged = await sendWebhook(service.runtime.apiUrl, '/v1/app/webhook', {
      shopDomain: reseller.shopDomain,
      secret: 'not-the-secret',
      body: { shop_domain: reseller.shopDomain, orders_to_redact: [order.id] },
      topic: 'customers/redact',
      spelling: 'shopify',
    });
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe('invalid_signature');
    expect(await pendingDeliveries()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await holding(FIXTURE_PERSONAL)).toEqual(held);
    expect((await Promise.all(jobIds.map(job))).map((j) => j.redactedAt)).toEqual(jobIds.map(() => null));
    expect(await auditOf(reseller.id, 'customer.redacted')).toEqual([]);

    // Act: Shopify's customers/redact, delivered twice.
    const redact = {
      customer: { id: order.customer.id, email: order.email, phone: order.customer.phone },
      orders_to_redact: [order.id],
    };
    await deliver('customers/redact', reseller.shopDomain, secret, redact);
    await deliver('customers/redact', reseller.shopDomain, secret, redact);

    // Assess: no item holds any of the order's personal strings.
    expect(await holding(FIXTURE_PERSONAL)).toEqual([]);
    // The order and its jobs still answer, with lines, prices, statuses and tracking kept.
    const answered = await api().get(`/v1/reseller_stores/${reseller.id}/orders/${order.id}`);
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ syncJobIds: jobIds, redactedAt: expect.any(String) });
    for (const [i, id] of jobIds.entries()) {
      const after = await job(id);
      const { redactedAt, ...kept } = after;
      const { redactedAt: none, ...was } = before[i];
      expect(none).toBeNull();
      expect(redactedAt).toBe(answered.body.redactedAt);
      expect({ ...kept, request_id: 'x' }).toEqual({ ...was, request_id: 'x' });
      expect((await api().get(`/v1/sync_jobs/${id}/attempts`)).status).toBe(200);
    }
    expect((await job(vcrJob.id)).fulfillment).toMatchObject({ status: 'delivered', trackingNumber: '1Z2345' });
    // One audit entry for the two deliveries, with counts and the supplier orders that hold a copy.
    const entries = await auditOf(reseller.id, 'customer.redacted');
    expect(entries).toHaveLength(1);
    expect(entries[0].metadata).toEqual({
      ordersRequested: 1,
      ordersHeld: 1,
      ordersErased: 1,
      jobs: 2,
      supplierOrderCount: 2,
      supplierOrders: expect.arrayContaining(
        jobs.map((j) => ({ sourceStoreId: j.sourceStoreId, sourceOrderId: j.sourceOrderId })),
      ),
    });
    expect(readableItem(entries[0])).not.toMatch(/hostmail|Norman|Chestnut/);
  });

  /** A reseller on storeplatform_a with one supplier, and an order of it whose personal strings are unique. */
  const personalOrder = async (store: { reseller: any; secret: string; vendorTag: string }) => {
    const email = `${unique('shopper')}@example.com`;
    const street = `${unique('Elm')} Road`;
    const [phone, note, name] = [`+1-${Date.now()}`, unique('leave at the door'), unique('Ada Lovelace')];
    const payload = orderPayload([{ vendor: store.vendorTag, price: '12.00' }], {
      email,
      phone,
      note,
      shipping_address: { name, address1: street, city: 'X', zip: '1', country_code: 'US' },
      customer: { id: 42, email, first_name: 'Ada' },
    });
    const receipt = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: store.reseller.shopDomain,
      secret: store.secret,
      body: payload,
    });
    expect(receipt.status).toBe(200);
    const personal = [email, street, phone, note, name];
    return { payload, personal, jobIds: receipt.body.syncJobIds as string[] };
  };

  const resellerWithSupplier = async (source: Record<string, unknown> = {}) => {
    const secret = unique('whsec_r');
    const reseller = await createResellerStore(api(), { webhookSecret: secret });
    const vendorTag = unique('Vendor');
    const sourceSecret = unique('whsec_s');
    const supplier = await createSourceStore(api(), reseller.id, { vendorTag, webhookSecret: sourceSecret, ...source });
    return { reseller, secret, vendorTag, supplier, sourceSecret };
  };

  it('shop/redact: every order of the shop erased, then its stores soft-deleted and their secrets erased', async () => {
    const shop = await resellerWithSupplier();
    const orders = [await personalOrder(shop), await personalOrder(shop)];
    for (const { jobIds } of orders) await jobReaches(api(), jobIds[0], 'completed');
    const personal = orders.flatMap((o) => o.personal);
    expect(await holding(personal)).not.toEqual([]);

    await deliver('shop/redact', shop.reseller.shopDomain, shop.secret, { shop_id: 1 });
    // The shop's secrets are erased with it: a redelivery no longer verifies, and changes nothing.
    const again = await sendWebhook(service.runtime.apiUrl, '/v1/app/webhook', {
      shopDomain: shop.reseller.shopDomain,
      secret: shop.secret,
      body: { shop_domain: shop.reseller.shopDomain },
      topic: 'shop/redact',
      spelling: 'shopify',
    });
    expect(again.status).toBe(401);
    expect(await pendingDeliveries()).toEqual([]);

    expect(await holding(personal)).toEqual([]);
    for (const { payload } of orders) {
      const answered = await api().get(`/v1/reseller_stores/${shop.reseller.id}/orders/${payload.id}`);
      expect(answered.body.redactedAt).toEqual(expect.any(String));
    }
    const store = (await api().get(`/v1/reseller_stores/${shop.reseller.id}`)).body;
    expect(store.deletedAt).toEqual(expect.any(String));
    expect((await api().get('/v1/reseller_stores?limit=100')).body.data.map((s: any) => s.id)).not.toContain(
      shop.reseller.id,
    );
    // Its secrets are gone: a delivery signed with the old one no longer verifies.
    const late = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: shop.reseller.shopDomain,
      secret: shop.secret,
      body: orderPayload([{ vendor: shop.vendorTag, price: '1.00' }]),
    });
    expect(late.status).toBe(401);
    const [entry, ...more] = await auditOf(shop.reseller.id, 'shop.redacted');
    expect(more).toEqual([]);
    expect(entry.metadata).toEqual({ ordersHeld: 2, ordersErased: 2, jobs: 2, supplierOrders: 2, storeErased: true });
  });

  it('a redacted order’s dead job is still retried, fulfilled and cancelled, with no personal data sent', async () => {
    const shop = await resellerWithSupplier({ accessToken: 'tok_fail422' });
    const { payload, personal, jobIds } = await personalOrder(shop);
    const [id] = jobIds;
    await jobReaches(api(), id, 'dead');
    await deliver('customers/redact', shop.reseller.shopDomain, shop.secret, {
      customer: { id: 42 },
      orders_to_redact: [payload.id],
    });
    expect(await holding(personal)).toEqual([]);

    await replaceAccessToken(service, { kind: 'source', id: shop.supplier.id }, 'tok_healed');
    expect((await api().post(`/v1/sync_jobs/${id}/retry`)).status).toBe(200);
    const completed = await jobReaches(api(), id, 'completed');

    const [placed] = await sim().orders(shop.supplier.shopDomain);
    expect(JSON.stringify(placed)).not.toMatch(new RegExp(personal.map((s) => s.replace(/[+.]/g, '\\$&')).join('|')));
    expect(placed.line_items).toEqual([expect.objectContaining({ quantity: 1, sku: 'SKU-1' })]);
    const parcel = fulfillmentPayload(completed.sourceOrderId);
    const shipped = await sendWebhook(service.runtime.apiUrl, '/v1/fulfillments/webhook', {
      shopDomain: shop.supplier.shopDomain,
      secret: shop.sourceSecret,
      body: parcel,
    });
    expect(shipped.status).toBe(200);
    await eventually(async () => (await job(id)).fulfillment?.status === 'delivered');
    const cancel = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: shop.reseller.shopDomain,
      secret: shop.secret,
      body: { id: payload.id, cancel_reason: 'customer', cancelled_at: new Date().toISOString() },
      topic: 'orders/cancelled',
    });
    expect(cancel.status).toBe(200);
    await eventually(async () => (await job(id)).cancellation !== null);
    expect(await holding(personal)).toEqual([]);
  });
  it('customers/data_request: a record of the orders held and the fields kept, names only, for 30 days', async () => {
    const shop = await resellerWithSupplier();
    const { payload, personal, jobIds } = await personalOrder(shop);
    await jobReaches(api(), jobIds[0], 'completed');
    const request = {
      customer: { id: 42, email: personal[0] },
      orders_requested: [payload.id, 999999999],
      data_request: { id: 9999 },
    };
    await deliver('customers/data_request', shop.reseller.shopDomain, shop.secret, request);
    await deliver('customers/data_request', shop.reseller.shopDomain, shop.secret, request);

    const path = `/v1/reseller_stores/${shop.reseller.id}/data_requests/9999`;
    const read = await api().get(path);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      id: '9999',
      object: 'data_request',
      resellerStoreId: shop.reseller.id,
      customerId: '42',
      orders: [
        {
          externalOrderId: String(payload.id),
          held: true,
          syncJobIds: jobIds,
          personalFields: ['email', 'phone', 'customer', 'shipping_address', 'note'],
          redactedAt: null,
        },
        { externalOrderId: '999999999', held: false, syncJobIds: [], personalFields: [], redactedAt: null },
      ],
    });
    const kept = Date.parse(read.body.expiresAt) - Date.parse(read.body.receivedAt);
    expect(kept).toBe(30 * 86_400_000);
    expect(JSON.stringify(read.body)).not.toMatch(
      new RegExp(personal.map((s) => s.replace(/[+.]/g, '\\$&')).join('|')),
    );
    expect(await auditOf(shop.reseller.id, 'customer.data_requested')).toEqual([
      expect.objectContaining({ metadata: { dataRequestId: '9999', ordersRequested: 2, ordersHeld: 1 } }),
    ]);
    // Another owner's key, another store, an unknown id: as missing.
    expect((await service.api('owner_b').get(path)).status).toBe(404);
    expect((await api().get(`/v1/reseller_stores/${shop.reseller.id}/data_requests/1`)).body.error).toMatchObject({
      code: 'resource_missing',
      param: 'id',
    });
  });
});
