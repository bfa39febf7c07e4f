import { createHmac } from 'node:crypto';
import shopper from '../fixtures/shopper.json';

/** Sends a platform webhook the way the platform does: HMAC-SHA256 of the raw bytes, base64. */
export const sendWebhook = async (
  apiUrl: string,
  path: '/v1/orders/webhook' | '/v1/fulfillments/webhook' | '/v1/app/webhook',
  options: {
    shopDomain?: string;
    secret?: string;
    body: unknown;
    rawBody?: string;
    signature?: string;
    topic?: string;
    /** `shopify`: the headers as Shopify names them (`X-Shopify-Hmac-Sha256`, …), with a webhook id. */
    spelling?: 'platform' | 'shopify';
  },
) => {
  const raw = options.rawBody ?? JSON.stringify(options.body);
  const prefix = options.spelling === 'shopify' ? 'x-shopify' : 'x-platform';
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.shopDomain !== undefined) headers[`${prefix}-shop-domain`] = options.shopDomain;
  const signature =
    options.signature ??
    (options.secret !== undefined ? createHmac('sha256', options.secret).update(raw).digest('base64') : undefined);
  if (signature !== undefined) headers[`${prefix}-hmac-sha256`] = signature;
  if (options.topic) headers[`${prefix}-topic`] = options.topic;
  if (options.spelling === 'shopify') headers['x-shopify-webhook-id'] = crypto.randomUUID();
  const res = await fetch(`${apiUrl}${path}`, { method: 'POST', headers, body: raw });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

/** The reseller shop's `orders/create` webhook of `body`, signed with its `secret`: the service's answer. */
export const sendOrder = (apiUrl: string, shopDomain: string, secret: string, body: unknown) =>
  sendWebhook(apiUrl, '/v1/orders/webhook', { shopDomain, secret, body });

/** Sends every order of `payloads` from the reseller shop, `inFlight` at a time: the answers, as they came. */
export const sendOrders = async (
  apiUrl: string,
  shopDomain: string,
  secret: string,
  payloads: unknown[],
  inFlight: number,
) => {
  const receipts: Awaited<ReturnType<typeof sendWebhook>>[] = [];
  let next = 0;
  const sender = async () => {
    while (next < payloads.length) receipts.push(await sendOrder(apiUrl, shopDomain, secret, payloads[next++]));
  };
  await Promise.all(Array.from({ length: inFlight }, sender));
  return receipts;
};

/** Waits until `jobsOf` answers `count` jobs, every one ended (completed or dead), and answers them. */
export const allJobsEnd = (jobsOf: () => Promise<any[]>, count: number, timeoutMs: number) =>
  eventually(
    async () => {
      const all = await jobsOf();
      return all.length === count && all.every((j) => j.status === 'completed' || j.status === 'dead') && all;
    },
    timeoutMs,
    1000,
  );

/**
 * POSTs these exact bytes signed as the platform signs them (HMAC-SHA256 of the raw bytes, base64), and
 * gives back the response unread; `headers` add to the usual ones or replace them.
 */
export const postSigned = (
  apiUrl: string,
  path: string,
  raw: string,
  options: { shopDomain: string; secret: string; spelling?: 'platform' | 'shopify'; headers?: Record<string, string> },
) => {
  const prefix = options.spelling === 'shopify' ? 'x-shopify' : 'x-platform';
  return fetch(`${apiUrl}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [`${prefix}-shop-domain`]: options.shopDomain,
      [`${prefix}-hmac-sha256`]: createHmac('sha256', options.secret).update(raw).digest('base64'),
      ...options.headers,
    },
    body: raw,
  });
};

/** The webhook subscriptions a connected store of `kind` must hold, as `<topic> <address>`, sorted. */
export const subscriptionsExpected = (kind: 'reseller' | 'source', url: string) =>
  (kind === 'reseller'
    ? [
        `app/uninstalled ${url}/v1/app/webhook`,
        `orders/cancelled ${url}/v1/orders/webhook`,
        `orders/create ${url}/v1/orders/webhook`,
        `orders/updated ${url}/v1/orders/webhook`,
        `refunds/create ${url}/v1/orders/webhook`,
        `returns/approve ${url}/v1/orders/webhook`,
        `returns/cancel ${url}/v1/orders/webhook`,
      ]
    : [
        `app/uninstalled ${url}/v1/app/webhook`,
        `fulfillments/create ${url}/v1/fulfillments/webhook`,
        `fulfillments/update ${url}/v1/fulfillments/webhook`,
        `fulfillment_events/create ${url}/v1/fulfillments/webhook`,
        `orders/cancelled ${url}/v1/orders/webhook`,
        `refunds/create ${url}/v1/orders/webhook`,
        `returns/cancel ${url}/v1/orders/webhook`,
        `returns/close ${url}/v1/orders/webhook`,
      ]
  ).sort();

let orderSequence = 5_550_000;
/** An order with these lines, its shopper the one of test/fixtures/shopper.json (whose data no log may hold). */
export const orderPayload = (
  lineItems: { vendor: string; price: string; quantity?: number; sku?: string }[],
  overrides: Record<string, unknown> = {},
) => ({
  id: ++orderSequence,
  name: `#${orderSequence}`,
  email: shopper.email,
  currency: 'USD',
  line_items: lineItems.map((item, i) => ({
    id: i + 1,
    variant_id: 100 + i,
    sku: item.sku ?? `SKU-${i + 1}`,
    title: `Item ${i + 1}`,
    quantity: item.quantity ?? 1,
    price: item.price,
    vendor: item.vendor,
  })),
  shipping_lines: [{ title: 'Standard', price: '5.00' }],
  shipping_address: { ...shopper.shipping_address },
  ...overrides,
});

let fulfillmentSequence = 9_100_000;
/**
 * A source store's `fulfillments/create` (or `fulfillments/update`) payload for its order `orderId`:
 * a fresh fulfillment id, and UPS tracking numbered after it.
 */
export const fulfillmentPayload = (orderId: string | number, overrides: Record<string, unknown> = {}) => {
  const n = ++fulfillmentSequence;
  return {
    id: n,
    order_id: orderId,
    status: 'success',
    tracking_company: 'UPS',
    tracking_number: `1Z${n}`,
    tracking_numbers: [`1Z${n}`],
    tracking_url: `https://ups.example/1Z${n}`,
    tracking_urls: [`https://ups.example/1Z${n}`],
    ...overrides,
  };
};

/** Polls until `check` returns a value, or fails after `timeoutMs`. */
export const eventually = async <T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 20_000,
  everyMs = 100,
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
};

/** The simulator's record of the orders a shop received, and of every call it answered. */
export const simulator = (baseUrl: string) => ({
  orders: async (shopDomain: string) =>
    ((await (await fetch(`${baseUrl}/_sim/orders?shopDomain=${shopDomain}`)).json()) as any).orders as any[],
  /**
   * The calls that did an order's work: every call but those that keep a store's webhook
   * subscriptions (CONTRACT.md §12.1), which a store's creation and each poll make on the side, and
   * those that tag a placed order on the reseller's shop (§12.5), which follow its job on their own.
   */
  calls: async () =>
    (((await (await fetch(`${baseUrl}/_sim/calls`)).json()) as any).calls as any[]).filter(
      (c) => !c.subscription && !c.tag,
    ),
  /** The calls that tagged an order (CONTRACT.md §12.5). */
  tagCalls: async () =>
    (((await (await fetch(`${baseUrl}/_sim/calls`)).json()) as any).calls as any[]).filter((c) => c.tag),
  /** Every call the simulator answered, the subscriptions' included. */
  allCalls: async () => ((await (await fetch(`${baseUrl}/_sim/calls`)).json()) as any).calls as any[],
  /** A call to the simulator's own API (`/_sim/…`) with a JSON body: its status, and its answer parsed. */
  control: async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  },
  /** Places an order on a shop without any webhook (POST /_sim/orders): the reseller's own order, say. */
  placeOrder: async (shopDomain: string, order: unknown) => {
    const res = await fetch(`${baseUrl}/_sim/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ shopDomain, order }),
    });
    if (res.status !== 201) throw new Error(`the simulator refused the order: ${res.status} ${await res.text()}`);
    return ((await res.json()) as any).order;
  },
});

/** Waits until the sync job has `status`, and answers it. */
export const jobReaches = (
  api: { get(path: string): Promise<{ body: any }> },
  id: string,
  status: string,
  timeoutMs?: number,
) =>
  eventually(async () => {
    const job = (await api.get(`/v1/sync_jobs/${id}`)).body;
    return job.status === status && job;
  }, timeoutMs);
