/** storeplatform_b: the GraphQL Admin API (PLATFORM-API.md). */
import { PlatformError, reasonFromBody, redact } from './errors.js';
import { callPlatform, unexpectedAnswer } from './http.js';
import { lookedUpOrderId, orderGid, type PlatformAdapter, type ShopConnection, type Tracking } from './port.js';

const PATH = '/admin/api/2025-07/graphql.json';
const PLATFORM = 'storeplatform_b';

export const ORDER_CREATE = `mutation orderCreate($order: OrderInput!, $idempotencyKey: String!) {
  orderCreate(order: $order, idempotencyKey: $idempotencyKey) {
    order { id }
    userErrors { field message }
  }
}`;

export const FULFILLMENT_CREATE = `mutation fulfillmentCreate(
  $orderId: ID!, $trackingInfo: TrackingInput, $notifyCustomer: Boolean, $idempotencyKey: String!
) {
  fulfillmentCreate(
    orderId: $orderId, trackingInfo: $trackingInfo, notifyCustomer: $notifyCustomer, idempotencyKey: $idempotencyKey
  ) {
    fulfillment { id status }
    userErrors { field message }
  }
}`;

export function trackingInfo(tracking: Tracking): { company: string; number: string | null; url: string | null } {
  return {
    company: tracking.company ?? 'Unknown',
    number: tracking.number ?? tracking.numbers[0] ?? null,
    url: tracking.url ?? tracking.urls[0] ?? null,
  };
}

interface MutationPayload {
  userErrors?: Array<Record<string, unknown>> | null;
  [field: string]: unknown;
}

/** The orders query of a lookup (PLATFORM-API.md, "Lookups"); the search string goes in as a variable. */
export const ORDERS_BY_SOURCE = `query orders($query: String!) {
  orders(first: 1, query: $query) { nodes { id } }
}`;

/** The search string of a lookup: the identifier quoted, its quotes and backslashes escaped. */
export const sourceIdentifierSearch = (sourceIdentifier: string) =>
  `source_identifier:'${sourceIdentifier.replace(/[\\']/g, (c) => `\\${c}`)}'`;

/** Runs one operation; `errors` arrive with HTTP 200 and become PlatformErrors (429 when throttled). */
async function request(
  shop: ShopConnection,
  idempotencyKey: string | null,
  query: string,
  variables: Record<string, unknown>,
) {
  const answer = await callPlatform({
    platform: PLATFORM,
    shop,
    method: 'POST',
    path: PATH,
    headers: {
      'X-Platform-Access-Token': shop.accessToken,
      ...(idempotencyKey === null ? {} : { 'Idempotency-Key': idempotencyKey }),
    },
    json: { query, variables },
  });
  const secrets = [shop.accessToken, shop.webhookSecret];
  const body = (answer.body ?? {}) as { data?: Record<string, unknown> | null; errors?: unknown };

  if (Array.isArray(body.errors) && body.errors.length > 0) {
    const reason = reasonFromBody({ errors: body.errors }) ?? 'GraphQL error';
    const throttled = body.errors.some(
      (entry) =>
        /throttl/i.test(String((entry as { message?: unknown })?.message ?? '')) ||
        (entry as { extensions?: { code?: unknown } })?.extensions?.code === 'THROTTLED',
    );
    throw new PlatformError({
      platform: PLATFORM,
      status: throttled ? 429 : 422,
      retryable: throttled,
      message: redact(`${PLATFORM} answered ${throttled ? 429 : 422}: ${reason}`, secrets),
    });
  }
  return { status: answer.status, data: body.data ?? {} };
}

/** Runs one mutation and returns its payload; `userErrors` arrive with HTTP 200 too: PlatformErrors. */
async function mutate(
  shop: ShopConnection,
  idempotencyKey: string,
  query: string,
  variables: Record<string, unknown>,
  field: string,
): Promise<{ status: number; payload: MutationPayload }> {
  const secrets = [shop.accessToken, shop.webhookSecret];
  const answer = await request(shop, idempotencyKey, query, variables);
  const payload = answer.data[field] as MutationPayload | undefined;
  if (!payload || typeof payload !== 'object') throw unexpectedAnswer(PLATFORM, answer.status, `no ${field} result`);
  if (Array.isArray(payload.userErrors) && payload.userErrors.length > 0) {
    throw new PlatformError({
      platform: PLATFORM,
      status: 422,
      retryable: false,
      message: redact(
        `${PLATFORM} answered 422: ${reasonFromBody({ errors: payload.userErrors }) ?? 'user error'}`,
        secrets,
      ),
    });
  }
  return { status: answer.status, payload };
}

function idOf(value: unknown): string | undefined {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}

export const storePlatformBAdapter: PlatformAdapter = {
  async createOrder(shop, order, idempotencyKey) {
    // OrderInput carries the same fields as the REST order body.
    const { status, payload } = await mutate(
      shop,
      idempotencyKey,
      ORDER_CREATE,
      { order, idempotencyKey },
      'orderCreate',
    );
    const orderId = idOf((payload.order as { id?: unknown } | null | undefined)?.id);
    if (orderId === undefined) throw unexpectedAnswer(PLATFORM, status, 'no order id');
    return { orderId, status };
  },

  async findOrder(shop, sourceIdentifier) {
    const answer = await request(shop, null, ORDERS_BY_SOURCE, { query: sourceIdentifierSearch(sourceIdentifier) });
    const nodes = (answer.data.orders as { nodes?: unknown } | null | undefined)?.nodes;
    // GraphQL nodes carry only the id asked for: the search itself is trusted to match.
    const orderId = lookedUpOrderId(nodes, sourceIdentifier);
    if (orderId === undefined) throw unexpectedAnswer(PLATFORM, answer.status, 'no orders result');
    return orderId === null ? null : { orderId };
  },

  async createFulfillment(shop, orderId, tracking, idempotencyKey) {
    const variables = {
      orderId: orderGid(orderId),
      trackingInfo: trackingInfo(tracking),
      notifyCustomer: true,
      idempotencyKey,
    };
    const { status, payload } = await mutate(shop, idempotencyKey, FULFILLMENT_CREATE, variables, 'fulfillmentCreate');
    const fulfillmentId = idOf((payload.fulfillment as { id?: unknown } | null | undefined)?.id);
    if (fulfillmentId === undefined) throw unexpectedAnswer(PLATFORM, status, 'no fulfillment id');
    return { fulfillmentId };
  },
};
