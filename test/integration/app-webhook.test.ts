import { createResellerStore, createSourceStore, scanAllButEvents, serviceForSuite, unique } from './support.js';
import { sendWebhook } from './webhooks.js';

jest.setTimeout(60_000);

describe('POST /v1/app/webhook', () => {
  const { service, api } = serviceForSuite();

  const send = (options: Parameters<typeof sendWebhook>[2]) =>
    sendWebhook(service.runtime.apiUrl, '/v1/app/webhook', options);

  /** A reseller store and a source store of another reseller on one shop domain, both signed with `secret`. */
  const shopWithBothKinds = async () => {
    const shopDomain = `${unique('shop')}.myshopify.com`;
    const secret = unique('whsec_app');
    const reseller = await createResellerStore(api(), { shopDomain, webhookSecret: secret });
    const other = await createResellerStore(api());
    const source = await createSourceStore(api(), other.id, { shopDomain, webhookSecret: secret });
    return { shopDomain, secret, reseller, source, other };
  };

  it('makes every store of the shop `uninstalled` on app/uninstalled, and a redelivery keeps when', async () => {
    const { shopDomain, secret, reseller, source, other } = await shopWithBothKinds();
    expect((await api().get(`/v1/reseller_stores/${reseller.id}`)).body.connection).toEqual({
      state: 'connected',
      since: null,
      reason: null,
    });
    const body = { id: 548380009, domain: shopDomain, myshopify_domain: shopDomain };
    const sent = await send({ shopDomain, secret, body, topic: 'app/uninstalled' });
    expect(sent).toEqual({ status: 200, body: { object: 'webhook_receipt', request_id: expect.any(String) } });

    const resellerNow = (await api().get(`/v1/reseller_stores/${reseller.id}`)).body;
    expect(resellerNow.connection).toEqual({
      state: 'uninstalled',
      since: expect.any(String),
      reason: 'app/uninstalled',
    });
    const sourceNow = (await api().get(`/v1/reseller_stores/${other.id}/source_stores/${source.id}`)).body;
    expect(sourceNow.connection.state).toBe('uninstalled');
    // The other reseller's own shop was not uninstalled.
    expect((await api().get(`/v1/reseller_stores/${other.id}`)).body.connection.state).toBe('connected');

    // Shopify's spelling, redelivered: 200, and the store still says when it was first uninstalled.
    const again = await send({ shopDomain, secret, body, topic: 'app/uninstalled', spelling: 'shopify' });
    expect(again.status).toBe(200);
    expect((await api().get(`/v1/reseller_stores/${reseller.id}`)).body.connection).toEqual(resellerNow.connection);
  });

  it('answers 401 invalid_signature on a bad signature and changes nothing', async () => {
    const { shopDomain, reseller } = await shopWithBothKinds();
    const before = await scanAllButEvents(service.doc, service.tableName);
    const sent = await send({ shopDomain, secret: 'not-the-secret', body: {}, topic: 'app/uninstalled' });
    expect(sent.status).toBe(401);
    expect(sent.body.error.code).toBe('invalid_signature');
    expect(await scanAllButEvents(service.doc, service.tableName)).toEqual(before);
    expect((await api().get(`/v1/reseller_stores/${reseller.id}`)).body.connection.state).toBe('connected');
  });

  it('answers 200 to a topic it does not handle, and changes nothing', async () => {
    const { shopDomain, secret, reseller } = await shopWithBothKinds();
    const before = await scanAllButEvents(service.doc, service.tableName);
    const sent = await send({ shopDomain, secret, body: { shop_domain: shopDomain }, topic: 'shop/update' });
    expect(sent.status).toBe(200);
    expect(await scanAllButEvents(service.doc, service.tableName)).toEqual(before);
    expect((await api().get(`/v1/reseller_stores/${reseller.id}`)).body.connection.state).toBe('connected');
  });

  it('answers 400 naming the header when no topic is sent', async () => {
    const { shopDomain, secret } = await shopWithBothKinds();
    const sent = await send({ shopDomain, secret, body: {} });
    expect(sent.status).toBe(400);
    expect(sent.body.error).toMatchObject({ code: 'validation_failed', param: 'X-Platform-Topic' });
  });
});
