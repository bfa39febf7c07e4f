import { readFileSync } from 'node:fs';
import {
  createResellerStore,
  createSourceStore,
  replaceAccessToken,
  scanAllButEvents,
  serviceForSuite,
  unique,
} from './support.js';
import { eventually, postSigned, sendWebhook, jobReaches as waitForJob } from './webhooks.js';

jest.setTimeout(90_000);

/**
 * storeplatform_b is Shopify's Admin GraphQL API (PLATFORM-API.md): the simulator executes the schema
 * Shopify publishes, takes no idempotency key, and Shopify's stores sign their webhooks with their own
 * headers. Shopify's public fixtures (test/fixtures/shopify/README.md) are sent as Shopify sends them.
 */

let orderId = 8_000_000;
const fixture = (name: string) => JSON.parse(readFileSync(`${__dirname}/../fixtures/shopify/${name}`, 'utf8'));

describe('Shopify stores on both sides (storeplatform_b)', () => {
  const jobReaches = (id: string, status: string, timeoutMs?: number) => waitForJob(api(), id, status, timeoutMs);
  const job = async (id: string) => (await api().get(`/v1/sync_jobs/${id}`)).body;

  const { service, api, sim } = serviceForSuite({ visibilityTimeoutSeconds: 3, platformTimeoutMs: 1_500 }, 120_000);

  /** A Shopify reseller store and its own order on its shop (the reseller's order exists there). */
  const shopifyReseller = async () => {
    const secret = unique('whsec_shopify');
    const reseller = await createResellerStore(api(), { platform: 'storeplatform_b', webhookSecret: secret });
    return { reseller, secret };
  };

  const sendOrder = (shopDomain: string, secret: string, body: unknown) =>
    sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain,
      secret,
      body,
      topic: 'orders/create',
      spelling: 'shopify',
    });

  it('routes Shopify’s own order sent with X-Shopify-* headers, and ships back each supplier’s lines', async () => {
    // Prepare: the fixture's two vendors are two Shopify suppliers.
    const { reseller, secret } = await shopifyReseller();
    const suppliers = {
      VCR: await createSourceStore(api(), reseller.id, {
        platform: 'storeplatform_b',
        vendorTag: 'VCR',
        webhookSecret: 'whsec_vcr',
        pricingConfig: { type: 'percentage', value: 50 },
      }),
      OMC: await createSourceStore(api(), reseller.id, { platform: 'storeplatform_b', vendorTag: 'OMC' }),
    };
    const { order } = fixture('order_with_properties.json');
    await sim().placeOrder(reseller.shopDomain, order);

    // Act: the order webhook, as Shopify sends it.
    const receipt = await sendOrder(reseller.shopDomain, secret, order);

    // Assess: one job per supplier, each placed once on its Shopify shop with the line as sent.
    expect(receipt.status).toBe(200);
    expect(receipt.body.syncJobIds).toHaveLength(2);
    const jobs = await Promise.all(receipt.body.syncJobIds.map((id: string) => jobReaches(id, 'completed')));
    const bySupplier = (store: { id: string }) => jobs.find((j) => j.sourceStoreId === store.id);
    const [vcrOrder] = await sim().orders(suppliers.VCR.shopDomain);
    const [omcOrder] = await sim().orders(suppliers.OMC.shopDomain);
    expect(await sim().orders(suppliers.VCR.shopDomain)).toHaveLength(1);
    expect(await sim().orders(suppliers.OMC.shopDomain)).toHaveLength(1);
    expect(bySupplier(suppliers.VCR).sourceOrderId).toBe(String(vcrOrder.id));
    expect(vcrOrder).toMatchObject({
      source_identifier: `${reseller.shopDomain}:450789469:${bySupplier(suppliers.VCR).id}`,
      tags: 'reseller-order',
      note: 'Test note',
      email: 'bob.norman@hostmail.com',
      shipping_address: expect.objectContaining({ first_name: 'Bob', last_name: 'Norman', country_code: 'US' }),
      line_items: [
        expect.objectContaining({
          title: 'Create Your Own Coffee 3 Pack',
          price: '30.00',
          quantity: 1,
          properties: order.line_items[0].properties,
        }),
      ],
    });
    // A property whose value is an object reaches Shopify, whose values are strings, as its JSON text.
    expect(omcOrder.line_items[0].properties[0]).toEqual({
      name: order.line_items[1].properties[0].name,
      value: JSON.stringify(order.line_items[1].properties[0].value),
    });

    // Act: VCR ships, with Shopify's own fulfillment (its fixture failed; this one succeeded).
    const [parcel] = fixture('fulfillments.json');
    // The fixture's parcel names a line of its own shop's order; on VCR's shop that line is VCR's.
    const lineItems = parcel.line_items.map((line: any, i: number) => ({ ...line, id: vcrOrder.line_items[i].id }));
    const shipped = { ...parcel, status: 'success', order_id: vcrOrder.id, line_items: lineItems };
    const delivery = await sendWebhook(service.runtime.apiUrl, '/v1/fulfillments/webhook', {
      shopDomain: suppliers.VCR.shopDomain,
      secret: 'whsec_vcr',
      body: shipped,
      topic: 'fulfillments/create',
      spelling: 'shopify',
    });

    // Assess: the reseller's order shows VCR's line fulfilled, OMC's untouched.
    expect(delivery.status).toBe(200);
    const vcrJob = bySupplier(suppliers.VCR);
    await eventually(async () => (await job(vcrJob.id)).fulfillment?.status === 'delivered');
    const [resellerOrder] = await sim().orders(reseller.shopDomain);
    expect(resellerOrder.fulfillments).toEqual([
      expect.objectContaining({
        tracking_numbers: ['1Z2345'],
        notify_customer: true,
        line_items: [{ id: 466157049, quantity: 1 }],
      }),
    ]);
    expect(resellerOrder.line_items.map((line: any) => [line.id, line.fulfilled_quantity])).toEqual([
      [466157049, 1],
      [641254555689, 0],
    ]);
  });

  it.each(['tok_flaky', 'tok_lost', 'tok_slow'])(
    'a Shopify supplier answering %s ends with exactly one order, found by lookup where no answer came',
    async (token) => {
      const { reseller, secret } = await shopifyReseller();
      const supplier = await createSourceStore(api(), reseller.id, {
        platform: 'storeplatform_b',
        vendorTag: 'Coffee',
        accessToken: token,
      });
      const order = { ...fixture('order_with_properties.json').order, id: ++orderId };
      order.line_items = [{ ...order.line_items[0], vendor: 'Coffee' }];

      const receipt = await sendOrder(reseller.shopDomain, secret, order);
      const [id] = receipt.body.syncJobIds;
      const completed = await jobReaches(id, 'completed', 40_000);

      const placed = await sim().orders(supplier.shopDomain);
      expect(placed).toHaveLength(1);
      expect(completed.sourceOrderId).toBe(String(placed[0].id));
      // No call carried an idempotency key: Shopify has none for orderCreate.
      const calls = (await sim().calls()).filter((c) => c.shopDomain === supplier.shopDomain);
      expect(calls.every((c) => c.idempotencyKey === null)).toBe(true);
    },
  );

  it('never routes a gift card, and shows the engraved line on the job with both prices', async () => {
    const { reseller, secret } = await shopifyReseller();
    const supplier = await createSourceStore(api(), reseller.id, {
      platform: 'storeplatform_b',
      vendorTag: 'Gifts',
      pricingConfig: { type: 'percentage', value: 50 },
    });
    const order = { ...fixture('order_with_properties.json').order, id: ++orderId };
    // Shopify's order, its first line to this supplier, and a gift card the reseller's shop issues.
    const [engraved] = order.line_items;
    order.line_items = [
      { ...engraved, vendor: 'Gifts' },
      { ...engraved, id: 641254555690, title: 'Gift card', vendor: 'Gifts', gift_card: true, properties: [] },
    ];
    const [id] = (await sendOrder(reseller.shopDomain, secret, order)).body.syncJobIds;
    const completed = await jobReaches(id, 'completed');

    const [placed] = await sim().orders(supplier.shopDomain);
    expect(placed.line_items).toHaveLength(1);
    expect(placed.line_items[0].properties).toEqual(engraved.properties);
    expect(completed.lineItems).toEqual([
      {
        resellerLineItemId: String(engraved.id),
        sourceLineItemId: String(placed.line_items[0].id),
        sku: engraved.sku,
        title: engraved.title,
        variantTitle: engraved.variant_title,
        quantity: 1,
        price: engraved.price,
        sourcePrice: placed.line_items[0].price,
        fulfilledQuantity: 0,
        refundedQuantity: 0,
        removedQuantity: 0,
        returnedQuantity: 0,
      },
    ]);
    // An order whose only line is a gift card goes to no supplier.
    const cardOnly = { ...order, id: ++orderId, line_items: [order.line_items[1]] };
    expect((await sendOrder(reseller.shopDomain, secret, cardOnly)).body.syncJobIds).toEqual([]);
  });

  it('a THROTTLED Shopify supplier is waited for, never dead, and gets one order once it recovers', async () => {
    const { reseller, secret } = await shopifyReseller();
    const supplier = await createSourceStore(api(), reseller.id, {
      platform: 'storeplatform_b',
      vendorTag: 'Busy',
      accessToken: 'tok_fail429',
    });
    const order = { ...fixture('order_with_properties.json').order, id: ++orderId };
    order.line_items = [{ ...order.line_items[0], vendor: 'Busy' }];
    const [id] = (await sendOrder(reseller.shopDomain, secret, order)).body.syncJobIds;

    const history = async () => (await api().get(`/v1/sync_jobs/${id}/attempts`)).body.data;
    await eventually(async () => (await history()).some((a: any) => a.outcome === 'throttled' && a.count >= 2));
    expect((await job(id)).status).not.toBe('dead');
    expect(await sim().orders(supplier.shopDomain)).toEqual([]);

    await replaceAccessToken(service, { kind: 'source', id: supplier.id }, 'tok_recovered');
    const completed = await jobReaches(id, 'completed');

    expect(await sim().orders(supplier.shopDomain)).toHaveLength(1);
    expect((await history()).map((a: any) => a.outcome)).toEqual(['completed', 'throttled']);
    expect(completed.errorMessage).toBeNull();
  });

  describe('Shopify’s webhook headers', () => {
    it.each([
      ['a wrong X-Shopify-Hmac-Sha256', { secret: 'whsec_not_the_secret' }, {}, 401],
      [
        'a shop domain that the two spellings name differently',
        {},
        { 'x-platform-shop-domain': 'someone-else.myshopify.com' },
        401,
      ],
      ['a topic that the two spellings name differently', {}, { 'x-platform-topic': 'fulfillments/create' }, 400],
    ])('refuses %s and writes nothing', async (_, change, extraHeaders, status) => {
      const { reseller, secret } = await shopifyReseller();
      await createSourceStore(api(), reseller.id, { platform: 'storeplatform_b', vendorTag: 'VCR' });
      const { order } = fixture('order_with_properties.json');
      const raw = JSON.stringify(order);
      const signWith = (change as { secret?: string }).secret ?? secret;
      const before = await scanAllButEvents(service.doc, service.tableName);

      const res = await postSigned(service.runtime.apiUrl, '/v1/orders/webhook', raw, {
        shopDomain: reseller.shopDomain,
        secret: signWith,
        spelling: 'shopify',
        headers: {
          'x-shopify-topic': 'orders/create',
          'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
          ...extraHeaders,
        },
      });
      const body = (await res.json()) as any;

      expect(res.status).toBe(status);
      expect(body.error).toMatchObject(
        status === 401 ? { code: 'invalid_signature' } : { code: 'validation_failed', param: 'X-Platform-Topic' },
      );
      expect(await scanAllButEvents(service.doc, service.tableName)).toEqual(before);
    });
  });
});
