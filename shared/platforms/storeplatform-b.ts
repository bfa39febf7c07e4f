/**
 * storeplatform_b: Shopify's Admin GraphQL API (PLATFORM-API.md), version `SHOPIFY_API_VERSION`.
 *
 * Shopify takes no idempotency key on `orderCreate` or `fulfillmentCreate`, so "never two" holds by
 * lookup: a mutation whose outcome is not a definite answer (a 5xx, a timeout, a lost connection)
 * is reported as `outcomeUnknown`, and the workers look the order or the fulfillment up before they
 * send it again (`takesIdempotencyKeys: false`, the `resend` option of `createFulfillment`).
 */
import { type JsonText, parseWithExactIntegers, type SupplierOrder } from '../domain/orders.js';
import {
  answeredBy,
  callPlatform,
  isRefusal,
  PlatformError,
  reasonFromBody,
  redact,
  SHOPIFY_API_VERSION,
  unexpectedAnswer,
} from './http.js';
import {
  type ChangedOrder,
  lookedUpOrderId,
  type OrderChanges,
  type PlatformAdapter,
  restOrderId,
  type ShopConnection,
  type Tracking,
} from './port.js';
import { lineSummaryOf } from './rest.js';
import { storePlatformBAfterSale } from './storeplatform-b-after-sale.js';
import { storePlatformBConnect } from './storeplatform-b-connect.js';
import {
  SHOPIFY_PAGE_SIZES as PAGE,
  SHOPIFY_DOCUMENTS,
  type ShopifyDocumentName,
} from './storeplatform-b-documents.js';

const PATH = `/admin/api/${SHOPIFY_API_VERSION}/graphql.json`;
const PLATFORM = 'storeplatform_b';
const refusal = (message: string) => answeredBy(PLATFORM, 422, message);
const notFound = (what: string) => answeredBy(PLATFORM, 404, what);

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `gid://shopify/<Type>/<n>` for a numeric id; a GID is kept as it is. */
export const shopifyGid = (type: 'Order' | 'Fulfillment', id: string) =>
  /^\d+$/.test(id) ? `gid://shopify/${type}/${id}` : id;

/** The number of a GID (`gid://shopify/Order/7002` → `7002`): what webhooks and the API's answers carry. */
export const numericId = (value: unknown): string | undefined => {
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string' || value === '') return undefined;
  return /^gid:\/\/[^/]+\/[^/]+\/(.+)$/.exec(value)?.[1] ?? value;
};

// ---------------------------------------------------------------- supplier order → OrderCreateOrderInput

/** A value kept from the reseller's payload, as the plain JSON value GraphQL variables need. */
const plain = (value: JsonText | unknown): unknown => {
  if (value !== null && typeof value === 'object' && 'text' in value && typeof value.text === 'string') {
    return parseWithExactIntegers(value.text);
  }
  return value;
};

/** A String field: a string as it is, a number or boolean as its text, anything else absent. */
const text = (value: unknown): string | undefined => {
  const v = plain(value);
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
};

/** REST `[{name, value}]` pairs (line `properties`, order `note_attributes`) as GraphQL's. */
const pairs = <K extends string>(value: unknown, nameKey: K): Array<Record<K | 'value', string>> | undefined => {
  const list = plain(value);
  if (!Array.isArray(list)) return undefined;
  return list.filter(isObject).flatMap((pair) => {
    const name = text(pair.name ?? pair.key);
    if (name === undefined) return [];
    // Shopify's values are strings: any other JSON value goes as its text, so nothing is lost.
    const value =
      pair.value === null || pair.value === undefined ? '' : (text(pair.value) ?? JSON.stringify(pair.value));
    return [{ [nameKey]: name, value } as Record<K | 'value', string>];
  });
};

/** The REST `shipping_address` (snake_case) as a `MailingAddressInput`. */
const mailingAddress = (value: unknown): Json | undefined => {
  const address = plain(value);
  if (!isObject(address)) return undefined;
  const field = (key: string) => text(address[key]);
  const [first, ...rest] = (field('name') ?? '').split(' ');
  const input: Json = {
    firstName: field('first_name') ?? (first || undefined),
    lastName: field('last_name') ?? (rest.join(' ') || undefined),
    company: field('company'),
    address1: field('address1'),
    address2: field('address2'),
    city: field('city'),
    provinceCode: field('province_code'),
    countryCode: field('country_code'),
    zip: field('zip'),
    phone: field('phone'),
  };
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
};

const money = (amount: string, currencyCode: string) => ({ shopMoney: { amount, currencyCode } });

/**
 * The supplier order as Shopify's `orderCreate` takes it. The reseller's `variant_id` names a variant
 * of the reseller's shop, not the supplier's, so it is not sent: the line is placed by title, SKU and
 * price, as a custom line item, and ships (`requiresShipping`).
 */
export const orderCreateVariables = (order: SupplierOrder) => ({
  order: {
    sourceIdentifier: order.source_identifier,
    currency: order.currency,
    email: text(order.email),
    note: text(order.note),
    customAttributes: pairs(order.note_attributes, 'key'),
    tags: [order.tags],
    lineItems: order.line_items.map((line) => ({
      title: text(line.title) ?? '',
      variantTitle: text(line.variant_title),
      sku: text(line.sku),
      quantity: line.quantity,
      priceSet: money(line.price, order.currency),
      vendor: line.vendor,
      properties: pairs(line.properties, 'name'),
      requiresShipping: true,
    })),
    shippingLines: order.shipping_lines.map((line) => ({
      title: text(line.title) ?? '',
      priceSet: money(line.price, order.currency),
    })),
    shippingAddress: mailingAddress(order.shipping_address),
  },
  options: { sendReceipt: false, sendFulfillmentReceipt: false },
});

// ---------------------------------------------------------------- one call

/**
 * THROTTLED's wait: the cost asked for beyond what is available, over the restore rate (points a
 * second), in whole seconds, at least one.
 */
export const throttledWaitSeconds = (body: unknown): number => {
  const cost = isObject(body) && isObject(body.extensions) ? body.extensions.cost : undefined;
  const status = isObject(cost) ? cost.throttleStatus : undefined;
  const requested = isObject(cost) ? Number(cost.requestedQueryCost) : Number.NaN;
  const available = isObject(status) ? Number(status.currentlyAvailable) : Number.NaN;
  const rate = isObject(status) ? Number(status.restoreRate) : Number.NaN;
  if (![requested, available, rate].every(Number.isFinite) || rate <= 0) return 1;
  return Math.max(1, Math.ceil((requested - available) / rate));
};

/**
 * The calls a second a THROTTLED answer implies for this call: the restore rate (points a second)
 * over the call's requested cost; undefined when the answer does not say.
 */
export const throttledRatePerSecond = (body: unknown): number | undefined => {
  const cost = isObject(body) && isObject(body.extensions) ? body.extensions.cost : undefined;
  const status = isObject(cost) ? cost.throttleStatus : undefined;
  const requested = isObject(cost) ? Number(cost.requestedQueryCost) : Number.NaN;
  const rate = isObject(status) ? Number(status.restoreRate) : Number.NaN;
  return Number.isFinite(requested) && Number.isFinite(rate) && requested > 0 && rate > 0
    ? rate / requested
    : undefined;
};

const isThrottled = (entry: unknown) =>
  isObject(entry) && isObject(entry.extensions) && entry.extensions.code === 'THROTTLED';

const SHOP_UNAVAILABLE: Record<number, string> = {
  402: 'the shop is frozen (its plan is unpaid)',
  423: 'the shop is locked',
};

/**
 * Runs one document. HTTP 200 may still carry `errors`: THROTTLED is a 429 with the wait its cost
 * asks for; any other error means Shopify will not run the document (permanent). A mutation whose
 * answer is a 5xx or never came may have run: its outcome is unknown.
 */
async function run(shop: ShopConnection, name: ShopifyDocumentName, variables: Json): Promise<Json> {
  const secrets = [shop.accessToken, shop.webhookSecret];
  const mutation = SHOPIFY_DOCUMENTS[name].startsWith('mutation');
  let answer: Awaited<ReturnType<typeof callPlatform>>;
  try {
    answer = await callPlatform({
      platform: PLATFORM,
      shop,
      method: 'POST',
      path: PATH,
      headers: { 'X-Shopify-Access-Token': shop.accessToken },
      json: { query: SHOPIFY_DOCUMENTS[name], variables },
    });
  } catch (error) {
    if (!(error instanceof PlatformError)) throw error;
    const unavailable = SHOP_UNAVAILABLE[error.status];
    if (unavailable) {
      throw new PlatformError({
        platform: PLATFORM,
        status: error.status,
        retryable: false,
        message: `${error.message} (${unavailable})`,
      });
    }
    if (mutation && error.retryable && error.status !== 429 && !error.outcomeUnknown && error.status !== 0) {
      throw new PlatformError({ ...error, platform: PLATFORM, message: error.message, outcomeUnknown: true });
    }
    throw error;
  }
  const body = isObject(answer.body) ? answer.body : {};
  const errors = Array.isArray(body.errors) ? body.errors : [];
  if (errors.some(isThrottled)) {
    throw new PlatformError({
      platform: PLATFORM,
      status: 429,
      retryable: true,
      retryAfterSeconds: throttledWaitSeconds(body),
      ratePerSecond: throttledRatePerSecond(body),
      message: `${PLATFORM} answered THROTTLED: the query cost is over what the shop has available`,
    });
  }
  if (errors.length > 0) {
    const reason = reasonFromBody({ errors }) ?? 'GraphQL error';
    throw new PlatformError({
      platform: PLATFORM,
      status: answer.status,
      retryable: false,
      message: redact(`${PLATFORM} refused the request: ${reason}`, secrets),
    });
  }
  if (!isObject(body.data)) throw unexpectedAnswer(PLATFORM, answer.status, 'no data');
  return body.data;
}

/** A mutation's payload; its `userErrors` are a refusal with Shopify's message (as a 422). */
async function mutate(shop: ShopConnection, name: ShopifyDocumentName, variables: Json): Promise<Json> {
  const data = await run(shop, name, variables);
  const payload = data[name];
  if (!isObject(payload)) throw unexpectedAnswer(PLATFORM, 200, `no ${name} result`);
  // orderCancel reports its refusals as `orderCancelUserErrors` (its `userErrors` is deprecated).
  const userErrors = [payload.userErrors, payload.orderCancelUserErrors].flatMap((list) =>
    Array.isArray(list) ? list : [],
  );
  if (userErrors.length > 0) {
    const reason = reasonFromBody({ errors: userErrors }) ?? 'user error';
    // A refusal is a 422; one that says the object does not exist (code NOT_FOUND) is a 404.
    const status = userErrors.some((entry) => isObject(entry) && entry.code === 'NOT_FOUND') ? 404 : 422;
    throw new PlatformError({
      platform: PLATFORM,
      status,
      retryable: false,
      message: redact(`${PLATFORM} answered ${status}: ${reason}`, [shop.accessToken, shop.webhookSecret]),
    });
  }
  return payload;
}

const nodesOf = (connection: unknown): Json[] =>
  isObject(connection) && Array.isArray(connection.nodes) ? connection.nodes.filter(isObject) : [];

const lineItemIdsOf = (lines: Json[]) => lines.flatMap((line) => numericId(line.id) ?? []);

// ---------------------------------------------------------------- pages of a connection

/** A page of a connection: its nodes and, when there is more, the cursor after them. */
const pageOf = (connection: unknown) => {
  const info = isObject(connection) && isObject(connection.pageInfo) ? connection.pageInfo : {};
  const endCursor = typeof info.endCursor === 'string' && info.endCursor !== '' ? info.endCursor : null;
  if (info.hasNextPage === true && endCursor === null)
    throw unexpectedAnswer(PLATFORM, 200, 'a next page without a cursor');
  return { nodes: nodesOf(connection), after: info.hasNextPage === true ? endCursor : null };
};

/**
 * Every node of a connection: the page already read, then each page after it, read by `next` (which
 * answers the same connection after the cursor). What keeps a document's cost under Shopify's limit
 * while an order of 250 lines is still read whole.
 */
async function allNodes(connection: unknown, next: (after: string) => Promise<unknown>): Promise<Json[]> {
  let page = pageOf(connection);
  const nodes = [...page.nodes];
  while (page.after !== null) {
    const after: string = page.after;
    page = pageOf(await next(after));
    if (page.after === after) throw unexpectedAnswer(PLATFORM, 200, 'the same page twice');
    nodes.push(...page.nodes);
  }
  return nodes;
}

/** An order's line items after a cursor (`orderLineItems`). */
async function orderLinesAfter(shop: ShopConnection, orderGid: unknown, after: string): Promise<unknown> {
  const data = await run(shop, 'orderLineItems', { id: orderGid, first: PAGE.lines, after });
  if (!isObject(data.order)) throw unexpectedAnswer(PLATFORM, 200, 'the order of a line items page is gone');
  return data.order.lineItems;
}

/** A fulfillment with its line items after a cursor, or its first page (`fulfillmentLineItems`). */
async function fulfillmentPage(shop: ShopConnection, fulfillmentGid: unknown, after?: string): Promise<Json> {
  const data = await run(shop, 'fulfillmentLineItems', { id: fulfillmentGid, first: PAGE.lines, after });
  if (!isObject(data.fulfillment)) throw unexpectedAnswer(PLATFORM, 200, 'a fulfillment of the order is gone');
  return data.fulfillment;
}

/** A fulfillment with every line item: those after its first page read by `fulfillmentLineItems`. */
async function wholeFulfillment(shop: ShopConnection, fulfillment: Json): Promise<Json> {
  const lines = await allNodes(
    fulfillment.fulfillmentLineItems,
    async (after) => (await fulfillmentPage(shop, fulfillment.id, after)).fulfillmentLineItems,
  );
  return { ...fulfillment, fulfillmentLineItems: { nodes: lines } };
}

/**
 * An order node of a page of "orders changed since" made whole: its line items beyond the page, and,
 * when the page held as many fulfillments as it asks for, every other one (their ids first: the list
 * has no cursor), each with all its line items; in the order Shopify lists them.
 */
async function wholeOrderNode(shop: ShopConnection, node: Json): Promise<Json> {
  const lines = await allNodes(node.lineItems, (after) => orderLinesAfter(shop, node.id, after));
  let fulfillments = Array.isArray(node.fulfillments) ? node.fulfillments.filter(isObject) : [];
  if (fulfillments.length >= PAGE.changedFulfillments) {
    const data = await run(shop, 'orderFulfillmentIds', { id: node.id, first: PAGE.fulfillmentIds });
    const listed = isObject(data.order) && Array.isArray(data.order.fulfillments) ? data.order.fulfillments : [];
    const read = new Map(fulfillments.map((fulfillment) => [fulfillment.id, fulfillment]));
    const all: Json[] = [];
    for (const entry of listed.filter(isObject)) {
      all.push(read.get(entry.id) ?? (await fulfillmentPage(shop, entry.id)));
      read.delete(entry.id);
    }
    fulfillments = [...all, ...read.values()];
  }
  const whole: Json[] = [];
  for (const fulfillment of fulfillments) whole.push(await wholeFulfillment(shop, fulfillment));
  return { ...node, lineItems: { nodes: lines }, fulfillments: whole };
}

// ---------------------------------------------------------------- fulfillments

interface FulfillmentOrderLine {
  fulfillmentOrderId: string;
  id: string;
  lineItemId: string | undefined;
  remainingQuantity: number;
}

/** Fulfillment orders that can still ship (Shopify refuses the others). */
const SHIPPABLE = new Set(['OPEN', 'IN_PROGRESS']);

/**
 * The order's fulfillment orders, each with every line (`orderFulfillmentOrders` a page at a time, lines
 * beyond a page by `fulfillmentOrderLineItems`), as `{fulfillmentOrders: {nodes}}`; undefined without the order.
 */
async function fulfillmentOrdersOf(shop: ShopConnection, orderGid: string): Promise<Json | undefined> {
  const all: Json[] = [];
  let after: string | null | undefined;
  do {
    const data = await run(shop, 'orderFulfillmentOrders', {
      id: orderGid,
      first: PAGE.fulfillmentOrders,
      after: after ?? undefined,
      lines: PAGE.fulfillmentOrderLines,
    });
    if (!isObject(data.order)) return undefined;
    const page = pageOf(data.order.fulfillmentOrders);
    for (const fulfillmentOrder of page.nodes) {
      const lines = await allNodes(fulfillmentOrder.lineItems, async (cursor) => {
        const more = await run(shop, 'fulfillmentOrderLineItems', {
          id: fulfillmentOrder.id,
          first: PAGE.lines,
          after: cursor,
        });
        if (!isObject(more.fulfillmentOrder)) throw unexpectedAnswer(PLATFORM, 200, 'a fulfillment order is gone');
        return more.fulfillmentOrder.lineItems;
      });
      all.push({ ...fulfillmentOrder, lineItems: { nodes: lines } });
    }
    if (page.after === after) throw unexpectedAnswer(PLATFORM, 200, 'the same page twice');
    after = page.after;
  } while (after !== null);
  return { fulfillmentOrders: { nodes: all } };
}

/** The lines of the order's shippable fulfillment orders with something left to ship. */
const shippableLines = (order: Json): FulfillmentOrderLine[] =>
  nodesOf(order.fulfillmentOrders)
    .filter((fo) => typeof fo.id === 'string' && SHIPPABLE.has(String(fo.status)))
    .flatMap((fo) =>
      nodesOf(fo.lineItems).map((line) => ({
        fulfillmentOrderId: String(fo.id),
        id: String(line.id),
        lineItemId: numericId(isObject(line.lineItem) ? line.lineItem.id : undefined),
        remainingQuantity: Number(line.remainingQuantity) || 0,
      })),
    )
    .filter((line) => line.remainingQuantity > 0);

/**
 * `lineItemsByFulfillmentOrder` for a parcel: the named order lines and quantities (never more than
 * remains), or, when none are named, everything that remains.
 */
export const lineItemsByFulfillmentOrder = (
  lines: FulfillmentOrderLine[],
  wanted?: Array<{ id: string; quantity: number }>,
) => {
  const left = new Map((wanted ?? []).map((line) => [line.id, line.quantity]));
  const chosen = lines.flatMap((line) => {
    if (!wanted) return [{ ...line, quantity: line.remainingQuantity }];
    const asked = line.lineItemId === undefined ? 0 : (left.get(line.lineItemId) ?? 0);
    const quantity = Math.min(asked, line.remainingQuantity);
    if (quantity <= 0) return [];
    left.set(line.lineItemId!, asked - quantity);
    return [{ ...line, quantity }];
  });
  const byOrder = new Map<string, Array<{ id: string; quantity: number }>>();
  for (const line of chosen) {
    byOrder.set(line.fulfillmentOrderId, [
      ...(byOrder.get(line.fulfillmentOrderId) ?? []),
      { id: line.id, quantity: line.quantity },
    ]);
  }
  return [...byOrder].map(([fulfillmentOrderId, fulfillmentOrderLineItems]) => ({
    fulfillmentOrderId,
    fulfillmentOrderLineItems,
  }));
};

/** `FulfillmentTrackingInput`: the company (Unknown when the source sent none), every number and URL. */
export function trackingInfo(tracking: Tracking): { company: string; numbers: string[]; urls: string[] } {
  const numbers = tracking.numbers.length > 0 ? tracking.numbers : tracking.number ? [tracking.number] : [];
  const urls = tracking.urls.length > 0 ? tracking.urls : tracking.url ? [tracking.url] : [];
  return { company: tracking.company ?? 'Unknown', numbers: [...numbers], urls: [...urls] };
}

/**
 * A parcel an earlier attempt already made on the order: one not cancelled, whose tracking numbers
 * are the ones about to be sent. Without tracking numbers a parcel cannot be told apart: none is found.
 */
const alreadySent = (order: Json, tracking: { numbers: string[] }): string | undefined => {
  if (tracking.numbers.length === 0) return undefined;
  const wanted = [...tracking.numbers].sort().join('\n');
  const fulfillments = Array.isArray(order.fulfillments) ? order.fulfillments.filter(isObject) : [];
  const found = fulfillments.find((fulfillment) => {
    if (fulfillment.status === 'CANCELLED') return false;
    const info = Array.isArray(fulfillment.trackingInfo) ? fulfillment.trackingInfo.filter(isObject) : [];
    return (
      info
        .flatMap((entry) => text(entry.number) ?? [])
        .sort()
        .join('\n') === wanted
    );
  });
  return found ? numericId(found.id) : undefined;
};

// ---------------------------------------------------------------- after the order

/** Whether the order is cancelled (`cancelledAt` set); 404 when Shopify has no such order. */
async function isCancelled(shop: ShopConnection, orderGid: string): Promise<boolean> {
  const data = await run(shop, 'orderCancelled', { id: orderGid });
  if (!isObject(data.order)) throw notFound(`order ${restOrderId(orderGid)} not found`);
  return typeof data.order.cancelledAt === 'string' && data.order.cancelledAt !== '';
}

/** A fulfillment's status (`SUCCESS`, `CANCELLED`…); 404 when Shopify has no such fulfillment. */
async function fulfillmentStatusOf(shop: ShopConnection, fulfillmentGid: string): Promise<string> {
  const data = await run(shop, 'fulfillmentStatus', { id: fulfillmentGid });
  if (!isObject(data.fulfillment)) throw notFound(`fulfillment ${numericId(fulfillmentGid)} not found`);
  return String(data.fulfillment.status);
}

/** Shopify's `OrderCancelReason` of a REST `cancel_reason` (`customer`, `inventory`…); OTHER for any other. */
const CANCEL_REASONS = new Set(['CUSTOMER', 'DECLINED', 'FRAUD', 'INVENTORY', 'OTHER', 'STAFF']);
export const orderCancelReason = (reason: string) =>
  CANCEL_REASONS.has(reason.trim().toUpperCase()) ? reason.trim().toUpperCase() : 'OTHER';

/** How long a cancellation job is waited for, one read after each wait (about 4 s in all). */
export const CANCEL_WAITS_MS = [250, 500, 1000, 2000];
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * `orderCancel` answers a job: the order is cancelled once its `cancelledAt` is set. Waits for that;
 * a job done without it is a refusal (422); a job still running after the waits leaves the outcome
 * unknown (retryable: the next attempt finds the order cancelled first).
 */
async function cancellationDone(shop: ShopConnection, orderGid: string, jobId: string | undefined): Promise<void> {
  if (await isCancelled(shop, orderGid)) return;
  for (const wait of CANCEL_WAITS_MS) {
    await sleep(wait);
    const job = jobId === undefined ? undefined : (await run(shop, 'jobDone', { id: jobId })).job;
    if (await isCancelled(shop, orderGid)) return;
    if (isObject(job) && job.done === true) {
      throw refusal('the cancellation job ended without cancelling the order');
    }
  }
  throw unexpectedAnswer(PLATFORM, 200, 'a cancellation job that is not done yet');
}

/** `OrderInput` of the changes present (the REST `shipping_address` as a `MailingAddressInput`). */
export const orderUpdateInput = (orderGid: string, changes: OrderChanges): Json | null => {
  const input: Json = { id: orderGid };
  if (changes.shippingAddress !== undefined) input.shippingAddress = mailingAddress(changes.shippingAddress) ?? {};
  if (changes.email !== undefined) input.email = changes.email;
  if (changes.note !== undefined) input.note = changes.note;
  if (changes.noteAttributes !== undefined) input.customAttributes = pairs(changes.noteAttributes, 'key') ?? [];
  return Object.keys(input).length > 1 ? input : null;
};

/** The search of "orders changed since": `updated_at:>='<ISO>'`, and `tag:'<tag>'` when given. */
export const changedSinceSearch = (since: string, tag?: string) =>
  `updated_at:>=${quoted(since)}${tag === undefined ? '' : ` tag:${quoted(tag)}`}`;

/** The variables of a page of "orders changed since": the search, the cursor and the page sizes. */
export const changedSinceVariables = (since: string, options: { tag?: string; cursor?: string } = {}) => ({
  first: PAGE.changedOrders,
  after: options.cursor,
  query: changedSinceSearch(since, options.tag),
  lines: PAGE.changedOrderLines,
  fulfillments: PAGE.changedFulfillments,
  fulfillmentLines: PAGE.changedFulfillmentLines,
});

// ---------------------------------------------------------------- an Order node as the REST webhooks carry it

const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const attributes = (value: unknown) =>
  (Array.isArray(value) ? value.filter(isObject) : []).map((pair) => ({
    name: stringOrNull(pair.key) ?? '',
    value: stringOrNull(pair.value) ?? '',
  }));

const restAddress = (value: unknown): Json | null => {
  if (!isObject(value)) return null;
  return {
    first_name: stringOrNull(value.firstName),
    last_name: stringOrNull(value.lastName),
    name: stringOrNull(value.name),
    company: stringOrNull(value.company),
    address1: stringOrNull(value.address1),
    address2: stringOrNull(value.address2),
    city: stringOrNull(value.city),
    province: stringOrNull(value.province),
    province_code: stringOrNull(value.provinceCode),
    country: stringOrNull(value.country),
    country_code: stringOrNull(value.countryCodeV2),
    zip: stringOrNull(value.zip),
    phone: stringOrNull(value.phone),
  };
};

const restLine = (line: Json): Json => {
  const price = isObject(line.originalUnitPriceSet) ? line.originalUnitPriceSet.shopMoney : undefined;
  return {
    id: numericId(line.id) ?? null,
    quantity: line.quantity,
    current_quantity: line.currentQuantity ?? line.quantity,
    vendor: stringOrNull(line.vendor),
    price: isObject(price) ? (text(price.amount) ?? null) : null,
    sku: stringOrNull(line.sku),
    title: stringOrNull(line.title),
    variant_title: stringOrNull(line.variantTitle),
    properties: attributes(line.customAttributes),
    gift_card: line.isGiftCard === true,
    requires_shipping: line.requiresShipping !== false,
  };
};

const restFulfillmentOf = (orderId: string, fulfillment: Json): Json => {
  const info = Array.isArray(fulfillment.trackingInfo) ? fulfillment.trackingInfo.filter(isObject) : [];
  const numbers = info.flatMap((entry) => stringOrNull(entry.number) ?? []);
  const urls = info.flatMap((entry) => stringOrNull(entry.url) ?? []);
  return {
    id: numericId(fulfillment.id) ?? null,
    order_id: orderId,
    status: typeof fulfillment.status === 'string' ? fulfillment.status.toLowerCase() : null,
    tracking_company: info.map((entry) => stringOrNull(entry.company)).find((company) => company !== null) ?? null,
    tracking_number: numbers[0] ?? null,
    tracking_numbers: numbers,
    tracking_url: urls[0] ?? null,
    tracking_urls: urls,
    line_items: nodesOf(fulfillment.fulfillmentLineItems).map((line) => ({
      id: numericId(isObject(line.lineItem) ? line.lineItem.id : undefined) ?? null,
      quantity: line.quantity,
    })),
    created_at: stringOrNull(fulfillment.createdAt),
    updated_at: stringOrNull(fulfillment.updatedAt),
    // The carrier's progress (CONTRACT.md §16.2): the display status as the REST `shipment_status`
    // (one the service does not know is read as none), and when it went into transit.
    shipment_status: typeof fulfillment.displayStatus === 'string' ? fulfillment.displayStatus.toLowerCase() : null,
    in_transit_at: stringOrNull(fulfillment.inTransitAt),
  };
};

/**
 * `financial_status` (lower-cased `displayFinancialStatus`) and `test`, as Shopify's order webhooks carry
 * them, when the node has them: what lets a poll see an order paid since (CONTRACT §11).
 */
const paymentAndTestOf = (node: Json): Json => ({
  ...(typeof node.displayFinancialStatus === 'string'
    ? { financial_status: node.displayFinancialStatus.toLowerCase() }
    : {}),
  ...(typeof node.test === 'boolean' ? { test: node.test } : {}),
});

/** An `Order` node of `ordersChangedSince` in storeplatform_a's webhook shape; undefined without id or updatedAt. */
export const changedOrderOfNode = (node: Json): ChangedOrder | undefined => {
  const id = numericId(node.id);
  const updatedAt = stringOrNull(node.updatedAt);
  if (id === undefined || updatedAt === null || Number.isNaN(Date.parse(updatedAt))) return undefined;
  const cancelReason = stringOrNull(node.cancelReason);
  const payload: Json = {
    id,
    name: stringOrNull(node.name),
    source_identifier: stringOrNull(node.sourceIdentifier),
    email: stringOrNull(node.email),
    note: stringOrNull(node.note),
    note_attributes: attributes(node.customAttributes),
    currency: stringOrNull(node.currencyCode),
    tags: Array.isArray(node.tags) ? node.tags.map(String).join(', ') : '',
    shipping_address: restAddress(node.shippingAddress),
    line_items: nodesOf(node.lineItems).map(restLine),
    created_at: stringOrNull(node.createdAt),
    updated_at: updatedAt,
    cancelled_at: stringOrNull(node.cancelledAt),
    cancel_reason: cancelReason === null ? null : cancelReason.toLowerCase(),
    ...paymentAndTestOf(node),
  };
  const fulfillments = Array.isArray(node.fulfillments) ? node.fulfillments.filter(isObject) : [];
  return {
    payload,
    fulfillments: fulfillments.map((f) => restFulfillmentOf(id, f)),
    // CONTRACT §15: what `withAfterSale` (storeplatform-b-after-sale.ts) read of the order, in REST shapes.
    refunds: Array.isArray(node.restRefunds) ? node.restRefunds.filter(isObject) : [],
    returns: Array.isArray(node.restReturns) ? node.restReturns.filter(isObject) : [],
    updatedAt,
  };
};

/** CONTRACT §15's calls, and the refunds and returns a changed order carries (storeplatform-b-after-sale.ts). */
const afterSale = storePlatformBAfterSale({ run, mutate, wholeOrderNode, allNodes, changedOrderOfNode });
/** The fulfillment orders a deadline is set on (platform-notes/supplier-sla-platform.md §1.2). */
const DEADLINE_STATUSES = new Set(['OPEN', 'SCHEDULED', 'ON_HOLD', 'IN_PROGRESS']);

export const storePlatformBAdapter: PlatformAdapter = {
  takesIdempotencyKeys: false,
  ...storePlatformBConnect({ run, mutate, wholeOrderNode, allNodes, changedOrderOfNode }),
  ...afterSale.calls,

  async createOrder(shop, order) {
    const payload = await mutate(shop, 'orderCreate', orderCreateVariables(order));
    const created = isObject(payload.order) ? payload.order : undefined;
    const orderId = numericId(created?.id);
    if (!created || orderId === undefined) throw unexpectedAnswer(PLATFORM, 200, 'no order id');
    return { orderId, status: 200, lineItemIds: lineItemIdsOf(nodesOf(created.lineItems)) };
  },

  async findOrder(shop, sourceIdentifier) {
    const data = await run(shop, 'ordersBySourceIdentifier', {
      query: sourceIdentifierSearch(sourceIdentifier),
      lines: PAGE.lookupLines,
    });
    if (!isObject(data.orders)) throw unexpectedAnswer(PLATFORM, 200, 'no orders result');
    const nodes = nodesOf(data.orders);
    const orders = nodes.map((node) => ({
      id: numericId(node.id),
      ...(typeof node.sourceIdentifier === 'string' ? { source_identifier: node.sourceIdentifier } : {}),
    }));
    const orderId = lookedUpOrderId(orders, sourceIdentifier);
    if (orderId === undefined) throw unexpectedAnswer(PLATFORM, 200, 'an order without an id');
    if (orderId === null) return null;
    const found = nodes[orders.findIndex((entry) => entry.id === orderId)];
    if (!found) return { orderId, lineItemIds: [] };
    const lineNodes = await allNodes(found.lineItems, (after) => orderLinesAfter(shop, found.id, after));
    const lines = lineNodes.flatMap((line) => lineSummaryOf(line) ?? []);
    const answered = lines.length === lineNodes.length && lines.length > 0;
    return { orderId, lineItemIds: lineItemIdsOf(lineNodes), ...(answered ? { lines } : {}) };
  },

  async createFulfillment(shop, orderId, tracking, _idempotencyKey, options) {
    const id = shopifyGid('Order', restOrderId(orderId));
    const info = trackingInfo(tracking);
    if (options?.resend) {
      const data = await run(shop, 'orderFulfillmentTracking', { id, first: PAGE.trackedFulfillments });
      if (!isObject(data.order)) throw notFound(`order ${restOrderId(orderId)} not found`);
      const existing = alreadySent(data.order, info);
      if (existing !== undefined) return { fulfillmentId: existing };
    }
    const fulfillmentOrders = await fulfillmentOrdersOf(shop, id);
    if (!fulfillmentOrders) throw notFound(`order ${restOrderId(orderId)} not found`);
    const byFulfillmentOrder = lineItemsByFulfillmentOrder(shippableLines(fulfillmentOrders), options?.lineItems);
    if (byFulfillmentOrder.length === 0) {
      throw refusal('nothing of the order is left to fulfill');
    }
    const payload = await mutate(shop, 'fulfillmentCreate', {
      fulfillment: { lineItemsByFulfillmentOrder: byFulfillmentOrder, trackingInfo: info, notifyCustomer: true },
    });
    const fulfillmentId = numericId(isObject(payload.fulfillment) ? payload.fulfillment.id : undefined);
    if (fulfillmentId === undefined) throw unexpectedAnswer(PLATFORM, 200, 'no fulfillment id');
    return { fulfillmentId };
  },

  // No idempotency keys on Shopify: setting tracking twice sets it once; cancellations look first.
  async updateFulfillmentTracking(shop, fulfillmentId, tracking) {
    await mutate(shop, 'fulfillmentTrackingInfoUpdate', {
      fulfillmentId: shopifyGid('Fulfillment', fulfillmentId),
      trackingInfoInput: trackingInfo(tracking),
    });
  },

  async cancelFulfillment(shop, fulfillmentId) {
    const id = shopifyGid('Fulfillment', fulfillmentId);
    if ((await fulfillmentStatusOf(shop, id)) === 'CANCELLED') return;
    try {
      await mutate(shop, 'fulfillmentCancel', { id });
    } catch (error) {
      // Refused because an attempt in between cancelled it: that is the outcome wanted.
      if (isRefusal(error) && (await fulfillmentStatusOf(shop, id)) === 'CANCELLED') return;
      throw error;
    }
  },

  async cancelOrder(shop, orderId, reason) {
    const id = shopifyGid('Order', restOrderId(orderId));
    if (await isCancelled(shop, id)) return;
    let payload: Json;
    try {
      payload = await mutate(shop, 'orderCancel', { orderId: id, reason: orderCancelReason(reason) });
    } catch (error) {
      if (isRefusal(error) && (await isCancelled(shop, id))) return;
      throw error;
    }
    const jobId = isObject(payload.job) && typeof payload.job.id === 'string' ? payload.job.id : undefined;
    await cancellationDone(shop, id, jobId);
  },

  async updateOrder(shop, orderId, changes) {
    const input = orderUpdateInput(shopifyGid('Order', restOrderId(orderId)), changes);
    if (input === null) return; // nothing to change
    await mutate(shop, 'orderUpdate', { input });
  },

  // ---- supplier service levels (CONTRACT.md §16.1)
  async shopTimeZone(shop) {
    const data = await run(shop, 'shopTimezone', {});
    return isObject(data.shop) && typeof data.shop.ianaTimezone === 'string' ? data.shop.ianaTimezone : null;
  },

  async setFulfillmentDeadline(shop, orderId, deadline) {
    const fulfillmentOrders = await fulfillmentOrdersOf(shop, shopifyGid('Order', restOrderId(orderId)));
    if (!fulfillmentOrders) throw notFound(`order ${restOrderId(orderId)} not found`);
    // Closed and cancelled fulfillment orders may be refused: only those still to ship get the deadline.
    const ids = nodesOf(fulfillmentOrders.fulfillmentOrders)
      .filter((fo) => typeof fo.id === 'string' && DEADLINE_STATUSES.has(String(fo.status)))
      .map((fo) => String(fo.id));
    if (!ids.length) return 'none';
    await mutate(shop, 'fulfillmentOrdersSetFulfillmentDeadline', {
      fulfillmentOrderIds: ids,
      fulfillmentDeadline: deadline,
    });
    return 'set';
  },

  async ordersChangedSince(shop, since, options = {}) {
    const data = await run(shop, 'ordersChangedSince', changedSinceVariables(since, options));
    if (!isObject(data.orders)) throw unexpectedAnswer(PLATFORM, 200, 'no orders result');
    const orders: ChangedOrder[] = [];
    for (const node of nodesOf(data.orders)) {
      const changed = changedOrderOfNode(await afterSale.withAfterSale(shop, await wholeOrderNode(shop, node)));
      if (!changed) throw unexpectedAnswer(PLATFORM, 200, 'an order without an id or updatedAt');
      orders.push(changed);
    }
    const pageInfo = isObject(data.orders.pageInfo) ? data.orders.pageInfo : {};
    const next = pageInfo.hasNextPage === true ? stringOrNull(pageInfo.endCursor) : null;
    return { orders, nextCursor: next };
  },
};

/** A value of a search term, quoted: its quotes and backslashes escaped. */
const quoted = (value: string) => `'${value.replace(/[\\']/g, (c) => `\\${c}`)}'`;

/** The search string of a lookup: the identifier quoted, its quotes and backslashes escaped. */
export const sourceIdentifierSearch = (sourceIdentifier: string) => `source_identifier:${quoted(sourceIdentifier)}`;
