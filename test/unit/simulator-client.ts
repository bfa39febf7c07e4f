import { type PlatformSimulator, startPlatformSimulator } from '../../lib/local/platform-simulator.js';
import { SHOPIFY_API_VERSION } from '../../shared/platforms/http.js';

/** The REST API version storeplatform_a's paths carry, and Shopify's (storeplatform_b). */
export const API = '/admin/api/2025-07';
export const SHOPIFY_API = `/admin/api/${SHOPIFY_API_VERSION}`;
/** The supplier shop the simulator's suites place orders on. */
export const SHOP = 'supplier.example.com';

export interface CallOptions {
  method?: string;
  /** The access token, in the header of the platform the path belongs to; null: none. */
  token?: string | null;
  key?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** A body sent as it is, unlike `body`, which is sent as JSON. */
  rawBody?: string;
}

/**
 * The platform simulator over real HTTP, for a suite that tests the simulator itself: started once,
 * reset before each test, stopped after the suite. `call` sends a request as a platform's client
 * would (the platform's token header, an `Idempotency-Key`); `rest`, `graphql` and `reseller` address
 * the supplier shop's REST API, Shopify's GraphQL API and the custom platform's endpoints; `simOrders`
 * reads the simulator's test controls; `graphqlData` is a GraphQL answer's data, held to have no errors.
 * An answer is `{ status, json }`, and its `headers` too when asked for.
 */
export const simulatorClient = <WithHeaders extends boolean = false>(options: { headers?: WithHeaders } = {}) => {
  let started: PlatformSimulator | undefined;
  beforeAll(async () => {
    started = await startPlatformSimulator({ port: 0, slowMs: 50 });
  });
  afterAll(async () => {
    await started?.stop();
  });
  beforeEach(() => started!.reset());

  const sim = () => started!;
  const call = async (
    path: string,
    { method, token = 'shpat_test', key, headers = {}, body, rawBody }: CallOptions = {},
  ) => {
    const tokenHeader = path.includes(SHOPIFY_API) ? 'X-Shopify-Access-Token' : 'X-Platform-Access-Token';
    const res = await fetch(`${sim().url}${path}`, {
      method: method ?? (body !== undefined || rawBody !== undefined ? 'POST' : 'GET'),
      headers: {
        'Content-Type': 'application/json',
        ...(token ? { [tokenHeader]: token } : {}),
        ...(key ? { 'Idempotency-Key': key } : {}),
        ...headers,
      },
      body: rawBody ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const text = await res.text();
    const answer = { status: res.status, json: text ? JSON.parse(text) : null };
    return (options.headers ? { ...answer, headers: res.headers } : answer) as WithHeaders extends true
      ? typeof answer & { headers: Headers }
      : typeof answer;
  };
  const rest = (path: string, options?: CallOptions) => call(`/${SHOP}${API}${path}`, options);
  const graphql = (query: string, variables: Record<string, unknown>, options: CallOptions = {}) =>
    call(`/${SHOP}${SHOPIFY_API}/graphql.json`, { ...options, body: { query, variables } });
  const reseller = (path: string, options: CallOptions = {}) =>
    call(`/${SHOP}/reseller${path}`, { token: null, ...options });
  const simOrders = async (shopDomain = SHOP) => (await call(`/_sim/orders?shopDomain=${shopDomain}`)).json.orders;
  /** A GraphQL answer's `data`; a document the schema refuses fails the test here, as it fails on Shopify. */
  const graphqlData = async (query: string, variables: Record<string, unknown>, options: CallOptions = {}) => {
    const answer = await graphql(query, variables, options);
    expect(answer.json.errors).toBeUndefined(); // a document the schema refuses fails here, as on Shopify
    return answer.json.data;
  };
  return { sim, call, rest, graphql, graphqlData, reseller, simOrders };
};

/**
 * An `OrderCreateOrderInput` of one mug line of `quantity`, as the storeplatform_b adapter sends it; `line`
 * adds to its line, `order` to the order.
 */
export const shopifyOrderInput = (
  sourceIdentifier: string,
  quantity: number,
  more: { line?: Record<string, unknown>; order?: Record<string, unknown> } = {},
) => ({
  order: {
    sourceIdentifier,
    currency: 'EUR',
    email: 'buyer@example.com',
    tags: ['reseller-order'],
    lineItems: [
      {
        title: 'Mug',
        sku: 'MUG-1',
        quantity,
        priceSet: { shopMoney: { amount: '9.50', currencyCode: 'EUR' } },
        ...more.line,
        requiresShipping: true,
      },
    ],
    ...more.order,
    shippingAddress: { city: 'Berlin', countryCode: 'DE' },
  },
  options: { sendReceipt: false, sendFulfillmentReceipt: false },
});
