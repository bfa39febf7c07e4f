/**
 * The simulator's storeplatform_b: Shopify's Admin GraphQL schema (shopify-schema.ts) executed by
 * graphql-js, with resolvers for the operations the service uses: orderCreate, the orders search
 * (by `source_identifier`, or changed since `updated_at` with a tag, sorted by UPDATED_AT, a page
 * at a time), order with its fulfillment orders, fulfillments and lines, fulfillment by id, fulfillmentCreate,
 * orderCancel, orderUpdate, fulfillmentTrackingInfoUpdate and fulfillmentCancel, and for staying connected
 * the order's displayFinancialStatus, risk and test, webhookSubscriptions, webhookSubscriptionCreate and
 * tagsAdd. A document or a
 * variable Shopify would reject is rejected here the same way (HTTP 200, `errors`); a field that
 * exists on Shopify but is not simulated answers an error that says so; a document whose requested cost
 * is over Shopify's 1,000 points is refused with MAX_COST_EXCEEDED (shopify-cost.ts), nothing run.
 * Nested connections (`lineItems`, `fulfillmentLineItems`, `fulfillmentOrders`) take `first` and `after`.
 * Orders are kept by simulator-store.ts in storeplatform_a's shape, so `GET /_sim/orders` shows every
 * shop alike.
 */
import {
  defaultFieldResolver,
  GraphQLError,
  type GraphQLFieldResolver,
  type GraphQLResolveInfo,
  graphql,
  OperationTypeNode,
  parse,
} from 'graphql';
import { maxCostExceededBody, requestedQueryCost, SHOPIFY_MAX_QUERY_COST } from './shopify-cost.js';
import { shopifyAdminSchema } from './shopify-schema.js';
import { orderFacts, type SimWebhook, subscribe, webhooksOf } from './simulator-connect.js';
import {
  afterSaleLineFields,
  afterSaleMutations,
  afterSaleOrderFields,
  afterSaleQueries,
  type ShopifyNodes,
} from './simulator-shopify-after-sale.js';
import {
  addTags,
  asObject,
  cancelFulfillment,
  cancelOrder,
  changePosition,
  comparePositions,
  decodeCursor,
  encodeCursor,
  findFulfillment,
  fulfil,
  gid,
  hasShipped,
  hasTag,
  idOf,
  isPosition,
  type Json,
  list,
  orderOrStub,
  placeOrder,
  remaining,
  type SimFulfillment,
  type SimLineItem,
  type SimOrder,
  SimRefusalError,
  type SimShop,
  textOf,
  updateOrder,
  updateTracking,
} from './simulator-store.js';

/** The operation's kind of write, for idempotency-free test tokens; null for a read (a query). */
export const shopifyOperation = (body: unknown): { write: boolean; field: string | null; name?: string } => {
  try {
    const document = parse(String(asObject(body).query ?? ''));
    const operation = document.definitions.find((d) => d.kind === 'OperationDefinition');
    if (operation?.kind !== 'OperationDefinition') return { write: false, field: null };
    const first = operation.selectionSet.selections[0];
    const field = first?.kind === 'Field' ? first.name.value : null;
    // The operation's name (`orderReturns`), what `GET /_sim/calls` shows as a call's `operation`.
    const name = operation.name?.value;
    return { write: operation.operation === OperationTypeNode.MUTATION, field, ...(name ? { name } : {}) };
  } catch {
    return { write: false, field: null };
  }
};

/**
 * What makes a `flaky` shop's first write fail once: the order's `sourceIdentifier` (PLATFORM-API.md),
 * the fulfillment orders a fulfillment ships, or any other mutation and its variables.
 */
export const shopifyFlakyKey = (body: unknown): string => {
  const variables = asObject(asObject(body).variables);
  const source = asObject(variables.order).sourceIdentifier;
  if (typeof source === 'string') return `order:${source}`;
  const { field } = shopifyOperation(body);
  if (field !== 'fulfillmentCreate') return `${field}:${JSON.stringify(variables)}`;
  const byOrder = list(asObject(variables.fulfillment).lineItemsByFulfillmentOrder);
  return `fulfillment:${byOrder.map((entry) => String(entry.fulfillmentOrderId)).join(',')}`;
};

/** Shopify's THROTTLED answer: HTTP 200, its cost restoring in about a second. */
export const THROTTLED_BODY = {
  errors: [
    {
      message: 'Throttled',
      extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' },
    },
  ],
  extensions: {
    cost: {
      requestedQueryCost: 20,
      actualQueryCost: null,
      throttleStatus: { maximumAvailable: 2000, currentlyAvailable: 0, restoreRate: 20 },
    },
  },
};

/** A connection of nodes whose cursors are given; `first` nodes of them, after the cursor `after`. */
const connectionOf = <T>(
  all: T[],
  cursorOf: (node: T) => string,
  first: unknown,
  hasMore = false,
  after: unknown = undefined,
) => {
  let nodes = all;
  if (typeof after === 'string') {
    const at = all.findIndex((node) => cursorOf(node) === after);
    if (at < 0) throw new GraphQLError(`Invalid cursor: ${after}`);
    nodes = all.slice(at + 1);
  }
  const page = typeof first === 'number' ? nodes.slice(0, first) : nodes;
  const last = page.at(-1);
  return {
    nodes: page,
    edges: page.map((node) => ({ node, cursor: cursorOf(node) })),
    pageInfo: {
      hasNextPage: hasMore || page.length < nodes.length,
      hasPreviousPage: false,
      startCursor: page[0] === undefined ? null : cursorOf(page[0]),
      endCursor: last === undefined ? null : cursorOf(last),
    },
  };
};
/** A nested connection (`lineItems`, `fulfillmentOrders`…) by `first` and `after`; a node's cursor is its id. */
const connection = <T extends { id: unknown }>(nodes: T[], args: Json) => {
  if (typeof args.first !== 'number') throw new GraphQLError('you must provide one of first or last');
  if (args.first > 250) throw new GraphQLError('The first argument cannot exceed 250');
  return connectionOf(nodes, (node) => String(node.id), args.first, false, args.after);
};

/** A stub's fulfillment order has one line that takes any quantity: the stub knows none of the order's lines. */
const STUB_REMAINING = 1_000_000;

/** A shop's currency code as Shopify answers it (non-null): the order's, or USD for one placed without. */
const currencyCodeOf = (order: SimOrder) => (typeof order.currency === 'string' ? order.currency : 'USD');

/** REST `[{name, value}]` pairs (line `properties`, order `note_attributes`) as Shopify's `Attribute`s. */
const attributeNodes = (value: unknown) =>
  list(value).map((pair) => ({ key: textOf(pair.name ?? ''), value: pair.value === null ? null : textOf(pair.value) }));

const lineItemNode = (line: SimLineItem, currencyCode = 'USD') => ({
  id: gid('LineItem', line.id),
  originalUnitPriceSet: {
    shopMoney: { amount: textOf(line.price ?? '0.00'), currencyCode },
    presentmentMoney: { amount: textOf(line.price ?? '0.00'), currencyCode },
  },
  customAttributes: attributeNodes(line.properties),
  isGiftCard: line.gift_card === true,
  title: line.title ?? '',
  name: line.title ?? '',
  sku: line.sku ?? null,
  variantTitle: line.variant_title ?? null,
  vendor: line.vendor ?? null,
  quantity: line.quantity,
  ...afterSaleLineFields(line),
  unfulfilledQuantity: remaining(line),
  fulfillableQuantity: remaining(line),
  requiresShipping: true,
});

/** A line a stub's fulfillment names: the stub knows nothing of it but its id. */
const unknownLine = (id: unknown): SimLineItem => ({ id, quantity: 0, fulfilled_quantity: 0, title: '' });

const fulfillmentOrderNodes = (order: SimOrder): Array<{ id: string; status: string } & Json> => {
  if (order.stub) {
    return [
      {
        id: gid('FulfillmentOrder', order.id),
        status: 'OPEN',
        lineItems: (args: Json) =>
          connection(
            [
              {
                id: gid('FulfillmentOrderLineItem', `${order.id}0`),
                remainingQuantity: STUB_REMAINING,
                totalQuantity: STUB_REMAINING,
                lineItem: { id: gid('LineItem', `${order.id}0`) },
              },
            ],
            args,
          ),
      },
    ];
  }
  const open = order.line_items.some((line) => remaining(line) > 0);
  const status = order.cancelled_at ? 'CANCELLED' : open ? 'OPEN' : 'CLOSED';
  return [
    {
      id: gid('FulfillmentOrder', order.id),
      status,
      fulfillBy: typeof order.fulfill_by === 'string' ? order.fulfill_by : null,
      lineItems: (args: Json) =>
        connection(
          order.line_items.map((line) => ({
            id: gid('FulfillmentOrderLineItem', line.id),
            remainingQuantity: remaining(line),
            totalQuantity: line.quantity,
            lineItem: lineItemNode(line, currencyCodeOf(order)),
          })),
          args,
        ),
    },
  ];
};

const firstOf = <T>(items: T[], first: unknown) => (typeof first === 'number' ? items.slice(0, first) : items);

const fulfillmentNode = (order: SimOrder, fulfillment: SimFulfillment) => {
  const numbers = fulfillment.tracking_numbers.map((n) => (n === null ? null : textOf(n)));
  const urls = fulfillment.tracking_urls.map((u) => (u === null ? null : textOf(u)));
  const company = fulfillment.tracking_company ?? null;
  // Tracking without a number (a company or a URL alone) is still one entry, as Shopify shows it.
  const tracking = numbers.length
    ? numbers.map((number, index) => ({ company, number, url: urls[index] ?? null }))
    : company !== null || urls.length
      ? [{ company, number: null, url: urls[0] ?? null }]
      : [];
  const cancelled = fulfillment.status === 'cancelled';
  const lineItems = fulfillment.line_items.map((shipped, index) => ({
    id: gid('FulfillmentLineItem', fulfillment.id * 1000 + index),
    quantity: shipped.quantity,
    lineItem: lineItemNode(
      order.line_items.find((l) => textOf(l.id) === textOf(shipped.id)) ?? unknownLine(shipped.id),
      currencyCodeOf(order),
    ),
  }));
  return {
    id: gid('Fulfillment', fulfillment.id),
    legacyResourceId: String(fulfillment.id),
    name: `#${order.id}-F${order.fulfillments.indexOf(fulfillment) + 1}`,
    status: cancelled ? 'CANCELLED' : 'SUCCESS',
    // The carrier's progress as Shopify shows it (CONTRACT §16): the REST status in upper case.
    displayStatus: cancelled ? 'CANCELED' : (fulfillment.shipment_status?.toUpperCase() ?? 'FULFILLED'),
    inTransitAt: fulfillment.in_transit_at ?? null,
    createdAt: fulfillment.created_at,
    updatedAt: fulfillment.updated_at,
    requiresShipping: true,
    totalQuantity: fulfillment.line_items.reduce((n, line) => n + line.quantity, 0),
    trackingInfo: (args: Json) => firstOf(tracking, args.first),
    fulfillmentLineItems: (args: Json) => connection(lineItems, args),
  };
};

/** Shopify's `OrderCancelReason` of the REST `cancel_reason` (lower case), OTHER for any other. */
const CANCEL_REASONS = ['CUSTOMER', 'DECLINED', 'FRAUD', 'INVENTORY', 'OTHER', 'STAFF'];
const cancelReasonNode = (reason: unknown) =>
  reason === null || reason === undefined
    ? null
    : CANCEL_REASONS.includes(String(reason).toUpperCase())
      ? String(reason).toUpperCase()
      : 'OTHER';

const fulfillmentStatusNode = (order: SimOrder) => {
  const total = order.line_items.length;
  const open = order.line_items.filter((line) => remaining(line) > 0).length;
  const untouched = order.line_items.filter((line) => line.fulfilled_quantity === 0).length;
  if (total > 0 && open === 0) return 'FULFILLED';
  return untouched === total ? 'UNFULFILLED' : 'PARTIALLY_FULFILLED';
};

/** A mailing address's fields as REST names them and as GraphQL does (an input's `countryCode`). */
const ADDRESS_FIELDS = [
  ['first_name', 'firstName'],
  ['last_name', 'lastName'],
  ['company', 'company'],
  ['address1', 'address1'],
  ['address2', 'address2'],
  ['city', 'city'],
  ['province_code', 'provinceCode'],
  ['country_code', 'countryCode'],
  ['zip', 'zip'],
  ['phone', 'phone'],
] as const;
/** An address's fields under the other API's names (`from` REST or GraphQL), those it lacks null. */
const addressFields = (address: Json, from: 'rest' | 'graphql'): Json =>
  Object.fromEntries(
    ADDRESS_FIELDS.map(([rest, graphql]) =>
      from === 'rest' ? [graphql, address[rest] ?? null] : [rest, address[graphql] ?? null],
    ),
  );

const mailingAddressNode = (value: unknown) => {
  if (value === null || typeof value !== 'object') return null;
  const address = asObject(value);
  const name = [address.first_name, address.last_name].filter((part) => typeof part === 'string').join(' ');
  const { countryCode, ...fields } = addressFields(address, 'rest');
  return { ...fields, name: address.name ?? (name || null), countryCodeV2: countryCode };
};

/** The order's REST `shipping_lines` as Shopify's `ShippingLine`s (ids made from the order's). */
const shippingLineNodes = (order: SimOrder) =>
  list(order.shipping_lines).map((line, index) => {
    const amount = { amount: textOf(line.price ?? '0.00'), currencyCode: currencyCodeOf(order) };
    return {
      id: gid('ShippingLine', `${order.id}${index}`),
      title: line.title ?? '',
      originalPriceSet: { shopMoney: amount, presentmentMoney: amount },
    };
  });

const DISPLAY_FINANCIAL_STATUSES = new Set([
  'AUTHORIZED',
  'EXPIRED',
  'PAID',
  'PARTIALLY_PAID',
  'PARTIALLY_REFUNDED',
  'PENDING',
  'REFUNDED',
  'VOIDED',
]);

/** `displayFinancialStatus`, `risk` and `test` of the order's REST facts (PAID, NONE, false by default). */
const paymentAndRiskNode = (order: SimOrder) => {
  const facts = orderFacts(order);
  const status = facts.financial_status.toUpperCase();
  return {
    displayFinancialStatus: DISPLAY_FINANCIAL_STATUSES.has(status) ? status : null,
    risk: { recommendation: facts.risk_recommendation.toUpperCase(), assessments: [] },
    test: facts.test,
  };
};

const orderNode = (order: SimOrder) => ({
  id: gid('Order', order.id),
  legacyResourceId: String(order.id),
  name: `#${order.id}`,
  sourceIdentifier: order.source_identifier ?? null,
  email: order.email ?? null,
  note: order.note ?? null,
  currencyCode: currencyCodeOf(order),
  customAttributes: (Array.isArray(order.note_attributes) ? order.note_attributes : []).map((attribute) => ({
    key: asObject(attribute).name ?? '',
    value: asObject(attribute).value ?? null,
  })),
  shippingAddress: mailingAddressNode(order.shipping_address),
  tags: (Array.isArray(order.tags) ? order.tags.map(String) : String(order.tags ?? '').split(','))
    .map((tag) => tag.trim())
    .filter(Boolean),
  createdAt: order.created_at,
  updatedAt: order.updated_at,
  cancelledAt: order.cancelled_at ?? null,
  cancelReason: cancelReasonNode(order.cancel_reason),
  closed: Boolean(order.cancelled_at),
  displayFulfillmentStatus: fulfillmentStatusNode(order),
  ...paymentAndRiskNode(order),
  lineItems: (args: Json) =>
    connection(
      order.line_items.map((line) => lineItemNode(line, currencyCodeOf(order))),
      args,
    ),
  fulfillmentOrders: (args: Json) => connection(fulfillmentOrderNodes(order), args),
  shippingLines: (args: Json) => connection(shippingLineNodes(order), args),
  fulfillments: (args: Json) => firstOf(order.fulfillments, args.first).map((f) => fulfillmentNode(order, f)),
  ...afterSaleOrderFields(NODES, order),
});

/** The nodes simulator-shopify-after-sale.ts builds on (CONTRACT §15). */
const NODES: ShopifyNodes = {
  connection,
  lineItemNode: (order, lineId) =>
    lineItemNode(
      order.line_items.find((l) => textOf(l.id) === textOf(lineId)) ?? unknownLine(lineId),
      currencyCodeOf(order),
    ),
  fulfillmentNode: (order, fulfillmentId) => {
    const fulfillment = order.fulfillments.find((f) => f.id === fulfillmentId);
    if (!fulfillment) throw new GraphQLError(`Fulfillment ${fulfillmentId} does not exist`);
    return fulfillmentNode(order, fulfillment);
  },
  orderNode: (order) => orderNode(order),
};

// ---------------------------------------------------------------- the orders search

/** A quoted value of a search term (`name:'value'`, its `\'` and `\\` unescaped) or a bare one (`name:value`). */
const searchTerm = (search: unknown, name: string, operator = ''): string | null => {
  const text = String(search ?? '');
  const quoted = new RegExp(`(?:^|\\s)${name}:${operator}'((?:[^'\\\\]|\\\\.)*)'`).exec(text);
  if (quoted) return quoted[1].replace(/\\(.)/g, '$1');
  return new RegExp(`(?:^|\\s)${name}:${operator}([^'\\s]+)`).exec(text)?.[1] ?? null;
};

/** The earliest `updated_at` a search asks for: `updated_at:>='<ISO>'` (or `>`, a millisecond later). */
const searchedUpdatedSince = (search: unknown): number | null => {
  const atLeast = searchTerm(search, 'updated_at', '>=');
  const after = atLeast === null ? searchTerm(search, 'updated_at', '>') : null;
  const text = atLeast ?? after;
  if (text === null) return null;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new GraphQLError(`Invalid updated_at in the search: ${text}`);
  return after === null ? ms : ms + 1;
};

/**
 * `orders(first, after, sortKey, reverse, query)`: the search's `source_identifier`, `updated_at`
 * and `tag` terms (others are not simulated and ignored), sorted by UPDATED_AT or by id, a page at a
 * time; a cursor is the node's place in that order. Stubs are left out, as a platform's list never
 * shows an order it does not have.
 */
const ordersConnection = (shop: SimShop, args: Json) => {
  const first = args.first;
  if (typeof first !== 'number') throw new GraphQLError('you must provide one of first or last');
  if (first > 250) throw new GraphQLError('The first argument cannot exceed 250');
  const source = searchTerm(args.query, 'source_identifier');
  const since = searchedUpdatedSince(args.query);
  const tag = searchTerm(args.query, 'tag');
  const byUpdate = args.sortKey === 'UPDATED_AT';
  const position = (order: SimOrder): number[] => (byUpdate ? changePosition(order) : [order.id]);
  const compare = (a: number[], b: number[]) =>
    (args.reverse ? -1 : 1) * (byUpdate && isPosition(a) && isPosition(b) ? comparePositions(a, b) : a[0] - b[0]);
  let after: number[] | null = null;
  if (typeof args.after === 'string') {
    const decoded = decodeCursor(args.after);
    if (!Array.isArray(decoded) || decoded.length !== (byUpdate ? 2 : 1) || !decoded.every(Number.isFinite)) {
      throw new GraphQLError(`Invalid cursor for the orders connection: ${args.after}`);
    }
    after = decoded;
  }
  const orders = [...shop.orders.values()]
    .filter((order) => !order.stub && (source === null || order.source_identifier === source))
    .filter((order) => since === null || Date.parse(order.updated_at) >= since)
    .filter((order) => tag === null || hasTag(order, tag))
    .filter((order) => after === null || compare(position(order), after) > 0)
    .sort((a, b) => compare(position(a), position(b)));
  const page = orders.slice(0, first);
  const cursors = new Map(page.map((order) => [order.id, encodeCursor(position(order))]));
  return connectionOf(
    page.map(orderNode),
    (node) => cursors.get(idOf(node.id, 'Order') ?? 0) ?? '',
    first,
    orders.length > page.length,
  );
};

// ---------------------------------------------------------------- staying connected

/** `ORDERS_CREATE` ↔ `orders/create`, as the adapter spells them (the last `_` is the `/`). */
const restTopicOf = (topic: unknown) =>
  String(topic)
    .toLowerCase()
    .replace(/_([^_]*)$/, '/$1');
const shopifyTopicOf = (topic: string) => topic.replace('/', '_').toUpperCase();

const webhookNode = (webhook: SimWebhook) => ({
  id: gid('WebhookSubscription', webhook.id),
  legacyResourceId: String(webhook.id),
  topic: shopifyTopicOf(webhook.topic),
  uri: webhook.address,
  callbackUrl: webhook.address,
  format: 'JSON',
  createdAt: webhook.created_at,
  updatedAt: webhook.created_at,
});

const webhookSubscriptionCreate = (shop: SimShop, args: Json) => {
  const made = subscribe(shop, restTopicOf(args.topic), asObject(args.webhookSubscription).uri);
  if ('field' in made) {
    const field = made.field === 'address' ? ['webhookSubscription', 'uri'] : ['topic'];
    return { webhookSubscription: null, userErrors: [{ field, message: `Address ${made.message}` }] };
  }
  return { webhookSubscription: webhookNode(made.webhook), userErrors: NO_ERRORS };
};

/** `tagsAdd(id, tags)` on an order: adds, never removes; a tag already there changes nothing. */
const tagsAdd = (shop: SimShop, args: Json) => {
  const id = idOf(args.id, 'Order');
  const tags = Array.isArray(args.tags) ? args.tags.map(String) : [];
  const order = id === null ? undefined : addTags(shop, id, tags);
  if (!order) return { node: null, userErrors: [{ field: ['id'], message: 'Order does not exist' }] };
  return { node: { __typename: 'Order', ...orderNode(order) }, userErrors: NO_ERRORS };
};

// ---- supplier service levels (CONTRACT.md §16.1)

/** Every simulated Shopify shop keeps its books in Chicago. */
export const SIM_SHOP_TIME_ZONE = 'America/Chicago';
const shopNode = () => ({ id: gid('Shop', 1), ianaTimezone: SIM_SHOP_TIME_ZONE });

/** Every fulfillment order named gets the deadline; one not found refuses the whole call, as Shopify's code says. */
const fulfillmentOrdersSetFulfillmentDeadline = (shop: SimShop, args: Json) => {
  const ids = (Array.isArray(args.fulfillmentOrderIds) ? args.fulfillmentOrderIds : []).map((id) =>
    idOf(id, 'FulfillmentOrder'),
  );
  const orders = ids.map((id) => (id === null ? undefined : shop.orders.get(id)));
  if (!orders.length || orders.some((order) => !order || order.stub)) {
    const message = 'Fulfillment orders not found';
    return {
      success: false,
      userErrors: [{ field: ['fulfillmentOrderIds'], message, code: 'FULFILLMENT_ORDERS_NOT_FOUND' }],
    };
  }
  for (const order of orders) order!.fulfill_by = String(args.fulfillmentDeadline);
  return { success: true, userErrors: NO_ERRORS };
};

/**
 * An order the simulator has never seen: a stub when the document ships on it (its fulfillment orders or
 * fulfillments, PLATFORM-API.md's stub rule), null otherwise, as Shopify answers an order it does not have.
 */
const unknownOrder = (shop: SimShop, id: number, info: GraphQLResolveInfo) => {
  const asked = info.fieldNodes[0]?.selectionSet?.selections ?? [];
  const names = asked.flatMap((s) => (s.kind === 'Field' ? [s.name.value] : []));
  // A read after the sale (CONTRACT §15: it asks for the order's returns) ships nothing.
  const ships =
    names.some((name) => ['fulfillmentOrders', 'fulfillments'].includes(name)) && !names.includes('returns');
  return ships ? orderNode(orderOrStub(shop, id)) : null;
};

// ---------------------------------------------------------------- mutations

type UserError = { field: string[] | null; message: string };
const NO_ERRORS: readonly UserError[] = [];

/** `OrderCreateOrderInput`'s `shippingAddress` (a `MailingAddressInput`) as a REST `shipping_address`. */
const restAddress = (value: unknown): Json | null => {
  if (value === null || value === undefined) return null;
  return addressFields(asObject(value), 'graphql');
};
const restAttributes = (value: unknown) => list(value).map((a) => ({ name: a.key, value: a.value }));

/** `OrderCreateOrderInput` as the REST order the simulator keeps. */
const restOrder = (input: Json): Json => {
  const money = (set: unknown) => asObject(asObject(set).shopMoney).amount ?? null;
  return {
    source_identifier: input.sourceIdentifier ?? null,
    currency: input.currency ?? null,
    email: input.email ?? null,
    note: input.note ?? null,
    note_attributes: restAttributes(input.customAttributes),
    tags: (Array.isArray(input.tags) ? input.tags : []).join(', '),
    line_items: list(input.lineItems).map((line) => ({
      title: line.title ?? null,
      variant_title: line.variantTitle ?? null,
      sku: line.sku ?? null,
      quantity: line.quantity,
      price: money(line.priceSet),
      vendor: line.vendor ?? null,
      properties: list(line.properties).map((p) => ({ name: p.name, value: p.value })),
      requires_shipping: line.requiresShipping ?? false,
    })),
    shipping_lines: list(input.shippingLines).map((line) => ({ title: line.title, price: money(line.priceSet) })),
    shipping_address: restAddress(input.shippingAddress),
  };
};

const orderCreate = (shop: SimShop, args: Json) => {
  const input = asObject(args.order);
  if (list(input.lineItems).length === 0) {
    return { order: null, userErrors: [{ field: ['order', 'lineItems'], message: "Line items can't be blank" }] };
  }
  return { order: orderNode(placeOrder(shop, restOrder(input))), userErrors: NO_ERRORS };
};

/** Shopify's `FulfillmentTrackingInput` as the REST fields the simulator keeps (those present). */
const restTracking = (tracking: Json): Json => ({
  ...('company' in tracking ? { tracking_company: tracking.company } : {}),
  ...('numbers' in tracking || 'number' in tracking
    ? { tracking_numbers: Array.isArray(tracking.numbers) ? tracking.numbers : [tracking.number].filter(Boolean) }
    : {}),
  ...('urls' in tracking || 'url' in tracking
    ? { tracking_urls: Array.isArray(tracking.urls) ? tracking.urls : [tracking.url].filter(Boolean) }
    : {}),
});

/** Ships fulfillment order lines: each one's quantity at most what remains (a stub takes any). */
const fulfillmentCreate = (shop: SimShop, args: Json) => {
  const input = asObject(args.fulfillment);
  const refused = (message: string) => ({ fulfillment: null, userErrors: [{ field: ['fulfillment'], message }] });
  const byOrder = list(input.lineItemsByFulfillmentOrder);
  const orderIds = [...new Set(byOrder.map((entry) => idOf(entry.fulfillmentOrderId, 'FulfillmentOrder')))];
  if (orderIds.length !== 1 || orderIds[0] === null) return refused('Invalid fulfillment order id');
  const order = shop.orders.get(orderIds[0]);
  if (!order) return refused('Fulfillment order does not exist');
  if (order.cancelled_at) return refused('Fulfillment order is cancelled');

  const lineItems: Json[] = [];
  for (const entry of byOrder) {
    for (const item of list(entry.fulfillmentOrderLineItems)) {
      if (order.stub) continue; // the stub's one line stands for lines it does not know
      const line = order.line_items.find((l) => gid('FulfillmentOrderLineItem', l.id) === String(item.id));
      if (!line) return refused(`Fulfillment order line item ${String(item.id)} does not exist`);
      lineItems.push({ id: line.id, quantity: item.quantity });
    }
  }
  const tracking = restTracking(asObject(input.trackingInfo));
  try {
    const fulfillment = fulfil(shop, order.id, {
      tracking_company: null,
      ...tracking,
      line_items: lineItems,
      notify_customer: input.notifyCustomer ?? false,
    });
    return { fulfillment: fulfillmentNode(order, fulfillment), userErrors: NO_ERRORS };
  } catch (error) {
    if (error instanceof SimRefusalError) return refused(error.message);
    throw error;
  }
};

/** A refusal of the store as userErrors, naming the argument it concerns. */
const refusal = (error: unknown, field: string[]) => {
  if (!(error instanceof SimRefusalError)) throw error;
  return [{ field, message: error.message }];
};

/**
 * `orderCancel` is asynchronous on Shopify: it answers a job, and the order is cancelled when its
 * `cancelledAt` is set. Here the order is cancelled at once and the job answered not yet done, so a
 * client that reads `cancelledAt` (PLATFORM-API.md) sees what it would see there.
 */
const orderCancel = (shop: SimShop, args: Json) => {
  const failed = (field: string[], message: string, code: string) => ({
    job: null,
    jobResult: null,
    orderCancelUserErrors: [{ field, message, code }],
    userErrors: [{ field, message }],
  });
  const id = idOf(args.orderId, 'Order');
  const order = id === null ? undefined : shop.orders.get(id);
  if (!order || order.stub) return failed(['orderId'], 'Order does not exist', 'NOT_FOUND');
  if (!order.cancelled_at && hasShipped(order)) {
    return failed(['orderId'], 'Cannot cancel an order with fulfillments: cancel them first', 'INVALID');
  }
  cancelOrder(shop, order.id, String(args.reason).toLowerCase());
  return {
    job: { id: gid('Job', crypto.randomUUID()), done: false, query: null },
    jobResult: null,
    orderCancelUserErrors: [],
    userErrors: [],
  };
};

/** `orderUpdate(input: OrderInput)`: the shipping address, email, note and custom attributes present. */
const orderUpdate = (shop: SimShop, args: Json) => {
  const input = asObject(args.input);
  const id = idOf(input.id, 'Order');
  const order = id === null ? undefined : shop.orders.get(id);
  if (!order || order.stub) return { order: null, userErrors: [{ field: ['id'], message: 'Order does not exist' }] };
  const changes: Json = {
    ...('shippingAddress' in input ? { shipping_address: restAddress(input.shippingAddress) } : {}),
    ...('email' in input ? { email: input.email } : {}),
    ...('note' in input ? { note: input.note } : {}),
    ...('customAttributes' in input ? { note_attributes: restAttributes(input.customAttributes) } : {}),
  };
  try {
    updateOrder(shop, order.id, changes);
    return { order: orderNode(order), userErrors: NO_ERRORS };
  } catch (error) {
    return { order: null, userErrors: refusal(error, ['id']) };
  }
};

const fulfillmentTrackingInfoUpdate = (shop: SimShop, args: Json) => {
  const id = idOf(args.fulfillmentId, 'Fulfillment');
  const found = id === null ? undefined : findFulfillment(shop, id);
  if (!found)
    return { fulfillment: null, userErrors: [{ field: ['fulfillmentId'], message: 'Fulfillment not found' }] };
  const input = restTracking(asObject(args.trackingInfoInput));
  if (args.notifyCustomer !== undefined) input.notify_customer = args.notifyCustomer;
  try {
    updateTracking(shop, found.fulfillment.id, input);
    return { fulfillment: fulfillmentNode(found.order, found.fulfillment), userErrors: NO_ERRORS };
  } catch (error) {
    return { fulfillment: null, userErrors: refusal(error, ['fulfillmentId']) };
  }
};

const fulfillmentCancel = (shop: SimShop, args: Json) => {
  const id = idOf(args.id, 'Fulfillment');
  const found = id === null ? undefined : findFulfillment(shop, id);
  if (!found) return { fulfillment: null, userErrors: [{ field: ['id'], message: 'Fulfillment not found' }] };
  cancelFulfillment(shop, found.fulfillment.id);
  return { fulfillment: fulfillmentNode(found.order, found.fulfillment), userErrors: NO_ERRORS };
};

/** A mutation refused as a `fail422` shop refuses it: its payload's errors, its object null. */
const refusedPayload = (message: string) => {
  const userErrors = [{ field: ['base'], message }];
  return {
    order: null,
    fulfillment: null,
    job: null,
    jobResult: null,
    // CONTRACT §15's payloads
    return: null,
    calculatedOrder: null,
    calculatedLineItem: null,
    orderEditSession: null,
    orderCancelUserErrors: [{ ...userErrors[0], code: 'INVALID' }],
    userErrors,
  };
};

/** The root fields the simulator answers for one shop: Shopify's names, the store's model behind them. */
const resolversOf = (
  shop: SimShop,
): {
  queries: Record<string, (args: Json, info: GraphQLResolveInfo) => unknown>;
  mutations: Record<string, (args: Json) => unknown>;
} => ({
  queries: {
    orders: (args) => ordersConnection(shop, args),
    order: (args, info) => {
      const id = idOf(args.id, 'Order');
      const known = id === null ? undefined : shop.orders.get(id);
      return known ? orderNode(known) : id === null ? null : unknownOrder(shop, id, info);
    },
    webhookSubscriptions: (args) => connection(webhooksOf(shop).map(webhookNode), args),
    shop: () => shopNode(),
    // One fulfillment order per order here, named by the order's number.
    fulfillmentOrder: (args) => {
      const id = idOf(args.id, 'FulfillmentOrder');
      const order = id === null ? undefined : shop.orders.get(id);
      return order ? (fulfillmentOrderNodes(order)[0] ?? null) : null;
    },
    // Jobs are done at once here: a client that asks after its job finds it done.
    job: (args) => ({ id: args.id, done: true, query: null }),
    fulfillment: (args) => {
      const id = idOf(args.id, 'Fulfillment');
      const found = id === null ? undefined : findFulfillment(shop, id);
      return found ? fulfillmentNode(found.order, found.fulfillment) : null;
    },
    ...afterSaleQueries(shop, NODES),
  },
  mutations: {
    orderCreate: (args) => orderCreate(shop, args),
    fulfillmentCreate: (args) => fulfillmentCreate(shop, args),
    orderCancel: (args) => orderCancel(shop, args),
    orderUpdate: (args) => orderUpdate(shop, args),
    fulfillmentTrackingInfoUpdate: (args) => fulfillmentTrackingInfoUpdate(shop, args),
    fulfillmentCancel: (args) => fulfillmentCancel(shop, args),
    webhookSubscriptionCreate: (args) => webhookSubscriptionCreate(shop, args),
    tagsAdd: (args) => tagsAdd(shop, args),
    ...afterSaleMutations(shop, NODES),
    fulfillmentOrdersSetFulfillmentDeadline: (args) => fulfillmentOrdersSetFulfillmentDeadline(shop, args),
  },
});

export interface ShopifyOptions {
  /** Refuse every mutation with this message (a `fail422` token); queries still answer. */
  refuseWrites?: string;
}

/** Answers one GraphQL request for one shop, as Shopify would: always HTTP 200, `data` and/or `errors`. */
export const executeShopify = async (shop: SimShop, body: unknown, options: ShopifyOptions = {}): Promise<unknown> => {
  const request = asObject(body);
  if (typeof request.query !== 'string') return { errors: [{ message: 'Parameter Missing or Invalid: query' }] };
  const schema = shopifyAdminSchema();
  const operationName = typeof request.operationName === 'string' ? request.operationName : undefined;
  // Shopify costs a document before it runs it, and refuses one over its single-query limit.
  let cost = 0;
  try {
    cost = requestedQueryCost(schema, request.query, asObject(request.variables), operationName);
  } catch {
    // not a document it can cost (a syntax error…): graphql-js answers what is wrong with it
  }
  if (cost > SHOPIFY_MAX_QUERY_COST) return maxCostExceededBody(cost);
  const { queries, mutations } = resolversOf(shop);
  const fieldResolver: GraphQLFieldResolver<unknown, unknown, Json> = (source, args, context, info) => {
    const mutation = info.parentType === schema.getMutationType();
    if (info.parentType !== schema.getQueryType() && !mutation) {
      return defaultFieldResolver(source, args, context, info);
    }
    const resolve = (mutation ? mutations : queries)[info.fieldName];
    if (!resolve) throw new GraphQLError(`${info.fieldName} is not supported by the platform simulator`);
    return mutation && options.refuseWrites !== undefined ? refusedPayload(options.refuseWrites) : resolve(args, info);
  };
  const result = await graphql({
    schema,
    source: request.query,
    variableValues: asObject(request.variables),
    operationName,
    fieldResolver,
  });
  return JSON.parse(JSON.stringify(result));
};
