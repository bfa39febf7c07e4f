/**
 * The three platform adapters' calls for staying connected (PLATFORM-API.md, "Staying connected";
 * CONTRACT §11–§12), each against the real platform simulator over HTTP: the order read before it goes,
 * webhook subscriptions, token refresh, tags and the API version headers. What the shop holds afterwards
 * is read back through the simulator's `/_sim` controls; failures go through the one failure policy.
 */
import { adapterFor } from '../../shared/platforms/adapters.js';
import {
  apiVersionNotice,
  isRefreshRefused,
  PLATFORM_API_VERSIONS,
  PlatformError,
  SHOPIFY_API_VERSION,
} from '../../shared/platforms/http.js';
import {
  type ApiVersionNotice,
  classify,
  type OrderRead,
  type Platform,
  type ShopConnection,
  WEBHOOK_TOPICS,
} from '../../shared/platforms/port.js';
import { financialStatusOf, riskOf } from '../../shared/platforms/rest.js';
import { restTopic, shopifyTopic } from '../../shared/platforms/storeplatform-b-connect.js';
import { adaptersAgainstSimulator } from './adapter-simulator.js';

const SHOP = 'reseller.example.com';
const SECRET = 'whsec_connect_secret';
const HOSTED = ['storeplatform_a', 'storeplatform_b'] as const;
const ADDRESS = 'https://api.example.com/v1/orders/webhook';
const GRANT = { clientId: 'client_1', clientSecret: 'csecret_connect', refreshToken: 'shprt_first' };

const shopOn = (
  platform: Platform,
  accessToken = 'shpat_connect_ok',
  notices?: ApiVersionNotice[],
): ShopConnection => ({
  platform,
  shopDomain: SHOP,
  accessToken,
  webhookSecret: SECRET,
  ...(notices ? { onApiVersion: (notice: ApiVersionNotice) => notices.push(notice) } : {}),
});

const simulator = adaptersAgainstSimulator();

async function sim(method: string, path: string, body?: unknown) {
  const res = await fetch(`${simulator().url}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: JSON.parse(await res.text()) };
}

/** A reseller's order placed on the shop without a webhook, its payment, risk and test as given. */
async function placeOrder(facts: Record<string, unknown> = {}, lines = 2): Promise<string> {
  const order = {
    currency: 'EUR',
    email: 'buyer@example.com',
    tags: 'vip',
    line_items: Array.from({ length: lines }, (_, i) => ({
      title: `Item ${i}`,
      sku: `SKU-${i}`,
      quantity: 1,
      price: '9.50',
      vendor: 'Acme',
    })),
    shipping_lines: [{ title: 'Standard', price: '4.90' }],
    shipping_address: { first_name: 'Ada', last_name: 'Lovelace', city: 'Berlin', country_code: 'DE' },
    ...facts,
  };
  const placed = await sim('POST', '/_sim/orders', { shopDomain: SHOP, order });
  expect(placed.status).toBe(201);
  return String(placed.json.order.id);
}

const found = (result: Awaited<ReturnType<ReturnType<typeof adapterFor>['readOrder']>>): OrderRead => {
  if (result.kind !== 'found') throw new Error(`expected the order, got ${result.kind}`);
  return result.order;
};

const failureOf = async (call: Promise<unknown>) => {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PlatformError);
  return { error: error as PlatformError, failure: classify(error, 'internal') };
};

const calls = async () => (await sim('GET', '/_sim/calls')).json.calls as Array<{ path: string; platform: string }>;
const issueTokens = (expiresInSeconds: number, accessToken = 'shpat_expiring') =>
  sim('POST', `/_sim/shops/${SHOP}/tokens`, { accessToken, expiresInSeconds, ...GRANT });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(HOSTED)('%s: staying connected against the simulator', (platform) => {
  const adapter = adapterFor(platform);

  describe('reading the order before it goes (CONTRACT §11)', () => {
    it('reads payment, risk and test in CONTRACT words, and the order as orders/create carries it', async () => {
      const id = await placeOrder({ financial_status: 'authorized', risk_recommendation: 'investigate', test: true });
      const order = found(await adapter.readOrder(shopOn(platform), id));
      expect(order).toMatchObject({ financialStatus: 'authorized', riskRecommendation: 'investigate', test: true });
      expect(order.cancelledAt).toBeNull();
      expect(Date.parse(order.updatedAt ?? '')).not.toBeNaN();
      expect(order.payload).toMatchObject({
        id,
        currency: 'EUR',
        email: 'buyer@example.com',
        financial_status: 'authorized',
        test: true,
        shipping_lines: [{ title: 'Standard', price: '4.90' }],
        shipping_address: { first_name: 'Ada', city: 'Berlin' },
      });
      const lines = order.payload.line_items as Array<Record<string, unknown>>;
      expect(lines.map((line) => [typeof line.id, line.sku, line.quantity])).toEqual([
        ['string', 'SKU-0', 1],
        ['string', 'SKU-1', 1],
      ]);
    });

    it('reads an order placed without them as paid, risk none, not a test', async () => {
      const order = found(await adapter.readOrder(shopOn(platform), await placeOrder()));
      expect(order).toMatchObject({ financialStatus: 'paid', riskRecommendation: 'none', test: false });
    });

    it('reads the order as the shop changed it: new payment, risk and address, updated_at moved', async () => {
      const id = await placeOrder({ financial_status: 'pending' });
      const before = found(await adapter.readOrder(shopOn(platform), id));
      const patched = await sim('PATCH', `/_sim/orders/${id}`, {
        shopDomain: SHOP,
        financial_status: 'paid',
        risk_recommendation: 'cancel',
        shipping_address: { first_name: 'Ada', last_name: 'Lovelace', city: 'Hamburg', country_code: 'DE' },
      });
      expect(patched.status).toBe(200);
      const after = found(await adapter.readOrder(shopOn(platform), id));
      expect(after).toMatchObject({ financialStatus: 'paid', riskRecommendation: 'cancel' });
      expect(after.payload.shipping_address).toMatchObject({ city: 'Hamburg' });
      expect(Date.parse(after.updatedAt ?? '')).toBeGreaterThan(Date.parse(before.updatedAt ?? ''));
    });

    it('shows a poll (orders changed since) the payment and test the shop changed', async () => {
      const id = await placeOrder({ financial_status: 'pending', test: true });
      const since = new Date(Date.now() - 60_000).toISOString();
      await sim('PATCH', `/_sim/orders/${id}`, { shopDomain: SHOP, financial_status: 'paid', test: false });
      const { orders } = await adapter.ordersChangedSince(shopOn(platform), since);
      expect(orders.map((order) => order.payload)).toEqual([
        expect.objectContaining({ id, financial_status: 'paid', test: false }),
      ]);
    });

    it('reads a cancelled order with its cancelledAt', async () => {
      const id = await placeOrder();
      await sim('POST', `/_sim/orders/${id}/cancel`, { shopDomain: SHOP });
      expect(found(await adapter.readOrder(shopOn(platform), id)).cancelledAt).toEqual(expect.any(String));
    });

    it('reads every line of an order longer than a page', async () => {
      const order = found(await adapter.readOrder(shopOn(platform), await placeOrder({}, 130)));
      expect(order.payload.line_items).toHaveLength(130);
    });

    it('says not_found for an order the shop does not have (404, order: null)', async () => {
      expect(await adapter.readOrder(shopOn(platform), '999999')).toEqual({ kind: 'not_found' });
    });

    it('answers 401 for an access token the shop issued once it has expired, a permanent failure', async () => {
      const id = await placeOrder();
      await issueTokens(0.2);
      expect((await adapter.readOrder(shopOn(platform, 'shpat_expiring'), id)).kind).toBe('found');
      await sleep(250);
      const { error, failure } = await failureOf(adapter.readOrder(shopOn(platform, 'shpat_expiring'), id));
      expect(error.status).toBe(401);
      expect(failure.kind).toBe('permanent');
    });
  });

  describe('webhook subscriptions (CONTRACT §12.1)', () => {
    it('lists none, creates every topic of the table, lists them with REST topics and the address', async () => {
      const shop = shopOn(platform);
      expect(await adapter.listWebhooks(shop)).toEqual([]);
      for (const topic of WEBHOOK_TOPICS) {
        expect(await adapter.createWebhook(shop, topic, ADDRESS)).toMatchObject({ topic, address: ADDRESS });
      }
      const listed = await adapter.listWebhooks(shop);
      if (listed === 'unmanaged') throw new Error('managed platform');
      expect(listed.map((webhook) => webhook.topic)).toEqual([...WEBHOOK_TOPICS]);
      const onSimulator = await sim('GET', `/_sim/webhooks?shopDomain=${SHOP}`);
      expect(onSimulator.json.webhooks.map((webhook: { topic: string }) => webhook.topic)).toEqual([...WEBHOOK_TOPICS]);
    });

    it('lists a subscription the platform dropped as missing, and creates it again', async () => {
      const shop = shopOn(platform);
      await adapter.createWebhook(shop, 'orders/create', ADDRESS);
      await adapter.createWebhook(shop, 'app/uninstalled', ADDRESS);
      const [dropped] = (await sim('GET', `/_sim/webhooks?shopDomain=${SHOP}`)).json.webhooks;
      expect((await sim('DELETE', `/_sim/webhooks/${dropped.id}`)).status).toBe(200);
      expect((await sim('DELETE', `/_sim/webhooks/${dropped.id}`)).status).toBe(404);
      expect(await adapter.listWebhooks(shop)).toEqual([expect.objectContaining({ topic: 'app/uninstalled' })]);
      await adapter.createWebhook(shop, 'orders/create', ADDRESS);
      expect(await adapter.listWebhooks(shop)).toHaveLength(2);
    });

    it('refuses an address the platform cannot reach: a 422, permanent', async () => {
      const { error, failure } = await failureOf(
        adapter.createWebhook(shopOn(platform), 'orders/create', 'https://hooks.example.invalid/webhook'),
      );
      expect(error.status).toBe(422);
      expect(failure).toMatchObject({ kind: 'permanent', reason: expect.stringContaining('cannot be reached') });
    });
  });

  describe('token refresh (CONTRACT §12.3)', () => {
    it('refreshes an expired token: the new one works, the shop counts one refresh', async () => {
      const id = await placeOrder();
      await issueTokens(0.2);
      await sleep(250);
      const refreshed = await adapter.refreshAccessToken(shopOn(platform, 'shpat_expiring'), GRANT);
      if (refreshed === 'unsupported') throw new Error('supported platform');
      expect(refreshed.refreshToken).not.toBe(GRANT.refreshToken);
      expect(Date.parse(refreshed.accessTokenExpiresAt ?? '')).toBeGreaterThan(Date.now());
      expect(refreshed.refreshTokenExpiresAt).toEqual(expect.any(String));
      expect((await adapter.readOrder(shopOn(platform, refreshed.accessToken), id)).kind).toBe('found');
      expect((await sim('GET', `/_sim/shops/${SHOP}/tokens`)).json).toMatchObject({ refreshes: 1 });
      expect((await calls()).map((call) => call.path)).toContain('/admin/oauth/access_token');
    });

    it('refuses a refresh token once its successor was used: invalid_grant, permanent, no secret told', async () => {
      await issueTokens(3600);
      const shop = shopOn(platform, 'shpat_expiring');
      const first = await adapter.refreshAccessToken(shop, GRANT);
      if (first === 'unsupported') throw new Error('supported platform');
      // Until its successor is used, the old refresh token still works (a refresh whose answer was lost).
      const again = await adapter.refreshAccessToken(shop, GRANT);
      if (again === 'unsupported') throw new Error('supported platform');
      await adapter.refreshAccessToken(shop, { ...GRANT, refreshToken: first.refreshToken });
      const { error, failure } = await failureOf(adapter.refreshAccessToken(shop, GRANT));
      expect(isRefreshRefused(error)).toBe(true);
      expect(error).toMatchObject({ status: 400, grantError: 'invalid_grant', retryable: false });
      expect(failure.kind).toBe('permanent');
      for (const secret of [GRANT.refreshToken, GRANT.clientSecret, first.refreshToken]) {
        expect(error.message).not.toContain(secret);
      }
      expect((await sim('GET', `/_sim/shops/${SHOP}/tokens`)).json).toMatchObject({ refreshes: 3 });
    });

    it('refuses every refresh of a revoked shop, and a wrong client secret', async () => {
      await issueTokens(3600);
      const shop = shopOn(platform, 'shpat_expiring');
      const wrongClient = await failureOf(adapter.refreshAccessToken(shop, { ...GRANT, clientSecret: 'nope' }));
      expect(wrongClient.error).toMatchObject({ status: 401, grantError: 'invalid_client' });
      expect((await sim('POST', `/_sim/shops/${SHOP}/revoke`, {})).status).toBe(200);
      const revoked = await failureOf(adapter.refreshAccessToken(shop, GRANT));
      expect(revoked.error).toMatchObject({ status: 400, grantError: 'invalid_grant' });
      expect((await sim('GET', `/_sim/shops/${SHOP}/tokens`)).json).toMatchObject({ refreshes: 0, revoked: true });
    });
  });

  describe('tags (CONTRACT §12.5)', () => {
    it('adds a tag once however often it is sent, keeping the tags already there', async () => {
      const id = await placeOrder();
      expect(await adapter.addOrderTags(shopOn(platform), id, ['routed-acme'])).toBe('tagged');
      await adapter.addOrderTags(shopOn(platform), id, ['routed-acme']);
      await adapter.addOrderTags(shopOn(platform), id, ['ROUTED-ACME', 'routed-globex']);
      const { orders } = (await sim('GET', `/_sim/orders?shopDomain=${SHOP}`)).json;
      expect(orders[0].tags).toBe('vip, routed-acme, routed-globex');
    });

    it('fails permanently for an order the shop does not have', async () => {
      const { failure } = await failureOf(adapter.addOrderTags(shopOn(platform), '999999', ['routed-acme']));
      expect(failure.kind).toBe('permanent');
    });
  });

  describe('the API version (CONTRACT §12.4)', () => {
    const requested = platform === 'storeplatform_b' ? SHOPIFY_API_VERSION : '2025-07';

    it('hands every answer its served version, errors included, not deprecated while it is the one asked', async () => {
      const notices: ApiVersionNotice[] = [];
      await adapter.listWebhooks(shopOn(platform, 'shpat_connect_ok', notices));
      await adapter.readOrder(shopOn(platform, 'shpat_connect_ok', notices), '999999');
      expect(notices.length).toBeGreaterThanOrEqual(2);
      for (const notice of notices) {
        expect(notice).toEqual({
          platform,
          shopDomain: SHOP,
          requested,
          served: requested,
          deprecatedReason: null,
          deprecated: false,
        });
      }
    });

    it('reports a deprecation reason and a version served other than the one asked', async () => {
      const notices: ApiVersionNotice[] = [];
      const reason = 'This field is deprecated: use orderCreate';
      await sim('POST', `/_sim/shops/${SHOP}/api`, { deprecatedReason: reason });
      await adapter.listWebhooks(shopOn(platform, 'shpat_connect_ok', notices));
      expect(notices.at(-1)).toMatchObject({ deprecatedReason: reason, served: requested, deprecated: true });
      await sim('POST', `/_sim/shops/${SHOP}/api`, { deprecatedReason: null, servedVersion: '2027-01' });
      await adapter.listWebhooks(shopOn(platform, 'shpat_connect_ok', notices));
      expect(notices.at(-1)).toMatchObject({ deprecatedReason: null, served: '2027-01', deprecated: true });
    });

    it('never fails a call because the observer threw', async () => {
      const throwing: ShopConnection = {
        ...shopOn(platform),
        onApiVersion: () => {
          throw new Error('metric down');
        },
      };
      expect(await adapter.listWebhooks(throwing)).toEqual([]);
    });
  });
});

describe('custom: none of these calls', () => {
  const adapter = adapterFor('custom');

  it('judges the order on its webhooks alone, leaves subscriptions unmanaged, refreshes and tags nothing', async () => {
    const notices: ApiVersionNotice[] = [];
    const shop = shopOn('custom', 'shpat_connect_ok', notices);
    expect(await adapter.readOrder(shop, '7001')).toEqual({ kind: 'unsupported' });
    expect(await adapter.listWebhooks(shop)).toBe('unmanaged');
    expect(await adapter.createWebhook(shop, 'orders/create', ADDRESS)).toBe('unmanaged');
    expect(await adapter.refreshAccessToken(shop, GRANT)).toBe('unsupported');
    expect(await adapter.addOrderTags(shop, '7001', ['routed-acme'])).toBe('unsupported');
    expect(await calls()).toEqual([]);
    expect(notices).toEqual([]);
  });
});

describe('the simulator controls of staying connected', () => {
  it('refuses a shop change it cannot make, and 404s an order it does not have', async () => {
    const id = await placeOrder();
    expect((await sim('PATCH', `/_sim/orders/${id}`, { shopDomain: SHOP, financial_status: 'free' })).status).toBe(400);
    expect((await sim('PATCH', `/_sim/orders/${id}`, { shopDomain: SHOP, test: 'yes' })).status).toBe(400);
    expect((await sim('PATCH', '/_sim/orders/999999', { shopDomain: SHOP, test: true })).status).toBe(404);
    const { json } = await sim('PATCH', `/_sim/orders/${id}`, { shopDomain: SHOP, email: 'new@example.com' });
    expect(json.order).toMatchObject({ email: 'new@example.com', financial_status: 'paid', test: false });
  });

  it('logs every platform call, the controls aside, and names the version on every Shopify answer', async () => {
    await adapterFor('storeplatform_b').listWebhooks(shopOn('storeplatform_b'));
    await adapterFor('storeplatform_a').createWebhook(shopOn('storeplatform_a'), 'orders/create', ADDRESS);
    expect((await calls()).map((call) => [call.platform, call.path])).toEqual([
      ['storeplatform_b', `/admin/api/${SHOPIFY_API_VERSION}/graphql.json`],
      ['storeplatform_a', '/admin/api/2025-07/webhooks.json'],
    ]);
    const res = await fetch(`${simulator().url}/${SHOP}/admin/api/${SHOPIFY_API_VERSION}/graphql.json`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Shopify-Access-Token': 'shpat_connect_ok' },
      body: JSON.stringify({ query: '{ webhookSubscriptions(first: 1) { nodes { id } } }' }),
    });
    expect(res.headers.get('x-shopify-api-version')).toBe(SHOPIFY_API_VERSION);
    expect(res.headers.get('x-shopify-api-deprecated-reason')).toBeNull();
  });

  it('refuses a token refresh with the wrong grant type, and refreshes nothing for a shop without tokens', async () => {
    const url = `${simulator().url}/${SHOP}/admin/oauth/access_token`;
    const post = (body: unknown) =>
      fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post({ grant_type: 'password' })).status).toBe(400);
    const refused = await post({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'a', client_secret: 'b' });
    expect(await refused.json()).toMatchObject({ error: 'invalid_grant' });
  });
});

describe("the platforms' words in CONTRACT's", () => {
  it("lower-cases Shopify's payment and risk, an unknown risk reading none", () => {
    expect(['PAID', 'PARTIALLY_REFUNDED', 'pending', '', null].map(financialStatusOf)).toEqual([
      'paid',
      'partially_refunded',
      'pending',
      null,
      null,
    ]);
    expect(['ACCEPT', 'INVESTIGATE', 'cancel', 'PENDING', undefined].map(riskOf)).toEqual([
      'accept',
      'investigate',
      'cancel',
      'none',
      'none',
    ]);
  });

  it("spells every topic of the table as Shopify's enum and back", () => {
    expect(WEBHOOK_TOPICS.map(shopifyTopic)).toEqual([
      'ORDERS_CREATE',
      'ORDERS_UPDATED',
      'ORDERS_CANCELLED',
      'FULFILLMENTS_CREATE',
      'FULFILLMENTS_UPDATE',
      'FULFILLMENT_EVENTS_CREATE',
      'APP_UNINSTALLED',
      'REFUNDS_CREATE',
      'RETURNS_APPROVE',
      'RETURNS_CANCEL',
      'RETURNS_CLOSE',
    ]);
    expect(WEBHOOK_TOPICS.map(shopifyTopic).map(restTopic)).toEqual([...WEBHOOK_TOPICS]);
    expect(restTopic('ORDER_TRANSACTIONS_CREATE')).toBe('order_transactions/create');
  });

  it('names one version per platform, and reports only answers that say something of it', () => {
    expect(PLATFORM_API_VERSIONS).toEqual({
      storeplatform_a: '2025-07',
      storeplatform_b: SHOPIFY_API_VERSION,
      custom: null,
    });
    const headers = (entries: Record<string, string>) => new Headers(entries);
    const path = `/admin/api/${SHOPIFY_API_VERSION}/graphql.json`;
    expect(apiVersionNotice('storeplatform_b', SHOP, path, headers({}))).toBeNull();
    expect(
      apiVersionNotice('storeplatform_b', SHOP, '/admin/oauth/access_token', headers({ 'X-Shopify-API-Version': 'x' })),
    ).toMatchObject({ requested: null, served: 'x', deprecated: false });
    expect(
      apiVersionNotice('storeplatform_b', SHOP, path, headers({ 'X-Shopify-API-Version': SHOPIFY_API_VERSION })),
    ).toMatchObject({ deprecated: false });
    expect(
      apiVersionNotice('storeplatform_b', SHOP, path, headers({ 'X-Shopify-API-Version': '2027-01' })),
    ).toMatchObject({ requested: SHOPIFY_API_VERSION, served: '2027-01', deprecated: true });
  });
});
