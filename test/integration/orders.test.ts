import { createResellerStore, createSourceStore, REQUEST_ID, serviceForSuite } from './support.js';
import { jobReaches, orderPayload, sendWebhook } from './webhooks.js';

jest.setTimeout(60_000);

/** CONTRACT.md §10.8: orders and their routing, visible, through the local runtime. */
describe('orders through the local runtime', () => {
  let reseller: any;
  const secret = 'whsec_reseller_orders';

  const { service, api } = serviceForSuite();
  beforeAll(async () => {
    reseller = await createResellerStore(api(), { webhookSecret: secret, shopDomain: 'orders-reseller.myshopify.com' });
    await createSourceStore(api(), reseller.id, { vendorTag: 'Acme' });
  }, 90_000);

  const send = (body: unknown) =>
    sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', { shopDomain: reseller.shopDomain, secret, body });
  const orderPath = (externalOrderId: string | number, rst = reseller.id) =>
    `/v1/reseller_stores/${rst}/orders/${encodeURIComponent(String(externalOrderId))}`;
  const listPath = (query = '', rst = reseller.id) => `/v1/reseller_stores/${rst}/orders${query}`;
  // Line 1 routes (Acme); line 2 has a vendor no store has; line 3 is a gift card; line 4 has no vendor.
  const mixed = () => {
    const payload = orderPayload([
      { vendor: 'Acme', price: '10.00' },
      { vendor: 'Nobody', price: '2.00', quantity: 3, sku: 'NB-1' },
      { vendor: 'Acme', price: '5.00' },
      { vendor: '', price: '1.00' },
    ]);
    (payload.line_items[2] as Record<string, unknown>).gift_card = true;
    return payload;
  };

  let mixedId: string;
  let allUnroutedId: string;

  it('shows an order with unrouted items: its jobs, each unrouted item and why, received by webhook', async () => {
    const payload = mixed();
    mixedId = String(payload.id);
    const receipt = await send(payload);
    expect(receipt.status).toBe(200);
    expect(receipt.body.syncJobIds).toHaveLength(1);
    await jobReaches(api(), receipt.body.syncJobIds[0], 'completed');

    const res = await api().get(orderPath(mixedId));

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'order',
      resellerStoreId: reseller.id,
      externalOrderId: mixedId,
      receivedAt: expect.stringMatching(/Z$/),
      receivedVia: 'webhook',
      syncJobIds: receipt.body.syncJobIds,
      refunds: [],
      unroutedLineItems: [
        {
          resellerLineItemId: '2',
          sku: 'NB-1',
          title: 'Item 2',
          vendor: 'Nobody',
          quantity: 3,
          reason: 'no_source_store',
        },
        { resellerLineItemId: '3', sku: 'SKU-3', title: 'Item 3', vendor: 'Acme', quantity: 1, reason: 'gift_card' },
        { resellerLineItemId: '4', sku: 'SKU-4', title: 'Item 4', vendor: '', quantity: 1, reason: 'no_vendor' },
      ],
      cancelledAt: null,
      redactedAt: null,
      request_id: expect.stringMatching(REQUEST_ID),
    });
  });

  it('records an order none of whose items routes: 200 with no jobs, visible, listed, unrouted', async () => {
    const payload = orderPayload([{ vendor: 'Nobody', price: '2.00' }]);
    allUnroutedId = String(payload.id);
    const receipt = await send(payload);
    expect(receipt.status).toBe(200);
    expect(receipt.body.syncJobIds).toEqual([]);

    const res = await api().get(orderPath(allUnroutedId));

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      externalOrderId: allUnroutedId,
      receivedVia: 'webhook',
      syncJobIds: [],
      unroutedLineItems: [expect.objectContaining({ resellerLineItemId: '1', reason: 'no_source_store' })],
      cancelledAt: null,
    });
    const all = await api().get(listPath());
    expect(all.body.data.map((o: any) => o.externalOrderId).slice(0, 2)).toEqual([allUnroutedId, mixedId]);
    const unrouted = await api().get(listPath('?unrouted=true'));
    expect(unrouted.body.data.map((o: any) => o.externalOrderId)).toEqual([allUnroutedId, mixedId]);
  });

  it('changes nothing on a redelivery, even of an unrouted order whose supplier was added since', async () => {
    const before = await Promise.all([api().get(orderPath(mixedId)), api().get(orderPath(allUnroutedId))]);
    await createSourceStore(api(), reseller.id, { vendorTag: 'Nobody' });

    const mixedAgain = await send({ ...mixed(), id: Number(mixedId) });
    const unroutedAgain = await send(
      orderPayload([{ vendor: 'Nobody', price: '2.00' }], { id: Number(allUnroutedId) }),
    );

    expect(mixedAgain.body.syncJobIds).toEqual(before[0].body.syncJobIds);
    expect(unroutedAgain.body.syncJobIds).toEqual([]);
    const after = await Promise.all([api().get(orderPath(mixedId)), api().get(orderPath(allUnroutedId))]);
    const withoutRequest = ({ request_id, ...order }: any) => order;
    expect(after.map((r) => withoutRequest(r.body))).toEqual(before.map((r) => withoutRequest(r.body)));
    const unrouted = await api().get(listPath('?unrouted=true'));
    expect(unrouted.body.data.map((o: any) => o.externalOrderId)).toEqual([allUnroutedId, mixedId]);
  });

  it('records the cancellation of an order that routed nowhere', async () => {
    const res = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
      shopDomain: reseller.shopDomain,
      secret,
      topic: 'orders/cancelled',
      body: { id: Number(allUnroutedId), cancel_reason: 'customer' },
    });
    expect(res.status).toBe(200);
    expect((await api().get(orderPath(allUnroutedId))).body.cancelledAt).toEqual(expect.stringMatching(/Z$/));
  });

  it('answers 404 for an unknown order, and for an order or a list of another owner’s store', async () => {
    const unknown = await api().get(orderPath('no-such-order/x y'));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'resource_missing', param: 'externalOrderId' });

    const foreign = service.api('owner_b');
    expect((await foreign.get(orderPath(mixedId))).status).toBe(404);
    expect((await foreign.get(listPath())).status).toBe(404);
    expect((await foreign.get(listPath(`?starting_after=${mixedId}`))).status).toBe(404);
  });

  it('pages through the orders newest first, without skips or repeats, and the unrouted ones apart', async () => {
    const store = await createResellerStore(api(), { webhookSecret: secret, shopDomain: 'orders-paged.myshopify.com' });
    await createSourceStore(api(), store.id, { vendorTag: 'Acme' });
    const sent: string[] = [];
    for (let n = 0; n < 7; n++) {
      const payload = orderPayload([{ vendor: n % 3 === 0 ? 'Elsewhere' : 'Acme', price: '1.00' }], {
        id: `paged/${n}`,
      });
      const res = await sendWebhook(service.runtime.apiUrl, '/v1/orders/webhook', {
        shopDomain: store.shopDomain,
        secret,
        body: payload,
      });
      expect(res.status).toBe(200);
      sent.push(`paged/${n}`);
    }
    const path = (query: string) => listPath(query, store.id);
    const all: string[] = [];
    for (let after: string | undefined; ; ) {
      const res = await api().get(path(`?limit=3${after ? `&starting_after=${encodeURIComponent(after)}` : ''}`));
      expect(res.status).toBe(200);
      all.push(...res.body.data.map((o: any) => o.externalOrderId));
      if (!res.body.has_more) break;
      after = res.body.data.at(-1).externalOrderId;
    }
    expect(all).toEqual([...sent].reverse());
    const unrouted = await api().get(path('?unrouted=true&limit=2'));
    expect(unrouted.body.data.map((o: any) => o.externalOrderId)).toEqual(['paged/6', 'paged/3']);
    expect(unrouted.body.has_more).toBe(true);
    const next = await api().get(path('?unrouted=true&limit=2&starting_after=paged%2F3'));
    expect(next.body).toMatchObject({
      has_more: false,
      data: [expect.objectContaining({ externalOrderId: 'paged/0' })],
    });
    expect((await api().get(path('?starting_after=nope'))).body.error.code).toBe('invalid_cursor');
    expect((await api().get(path('?unrouted=maybe'))).status).toBe(400);
  });
});
