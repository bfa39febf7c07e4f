/**
 * The simulator's storeplatform_b: Shopify's Admin GraphQL schema (shopify-schema.ts) executed by
 * graphql-js, with resolvers for the operations the service uses (orderCreate, the orders search,
 * order with its fulfillment orders and fulfillments, fulfillmentCreate). A document or a variable
 * Shopify would reject is rejected here the same way (HTTP 200, `errors`); a field that exists on
 * Shopify but is not simulated answers an error that says so. Orders are kept in storeplatform_a's
 * shape, so `GET /_sim/orders` shows every shop alike.
 */
import {
  defaultFieldResolver,
  GraphQLError,
  type GraphQLFieldResolver,
  graphql,
  OperationTypeNode,
  parse,
} from 'graphql';
import { shopifyAdminSchema } from './shopify-schema.js';

type Json = Record<string, unknown>;

export interface SimLineItem extends Json {
  id: number;
  quantity: number;
  fulfilled_quantity: number;
}

export interface SimOrder extends Json {
  id: number;
  created_at: string;
  fulfillments: Json[];
}

/** What the executor needs of the simulator's store for one shop. */
export interface ShopifyStore {
  order(id: number): SimOrder | undefined;
  orders(): SimOrder[];
  /** Stores a new order (REST shape); its lines get ids and fulfilled quantities. */
  createOrder(input: Json): SimOrder;
  /** The order a fulfillment names, a stub when the simulator has never seen it (PLATFORM-API.md). */
  orderOrStub(id: number): SimOrder;
  nextFulfillmentId(): number;
}

const asObject = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(asObject) : []);
const now = () => new Date().toISOString();
const gid = (type: string, id: number | string) => `gid://shopify/${type}/${id}`;
const idOf = (value: unknown, type: string): number | null => {
  const match = new RegExp(`^gid://shopify/${type}/(\\d+)$`).exec(String(value ?? ''));
  return match ? Number(match[1]) : null;
};

/** The operation's kind of write, for idempotency-free test tokens; null for a read (a query). */
export const shopifyOperation = (body: unknown): { write: boolean; field: string | null } => {
  try {
    const document = parse(String(asObject(body).query ?? ''));
    const operation = document.definitions.find((d) => d.kind === 'OperationDefinition');
    if (operation?.kind !== 'OperationDefinition') return { write: false, field: null };
    const first = operation.selectionSet.selections[0];
    const field = first?.kind === 'Field' ? first.name.value : null;
    return { write: operation.operation === OperationTypeNode.MUTATION, field };
  } catch {
    return { write: false, field: null };
  }
};

/**
 * What makes a `flaky` shop's first write fail once: the order's `sourceIdentifier` (PLATFORM-API.md),
 * or the fulfillment orders a fulfillment ships.
 */
export const shopifyFlakyKey = (body: unknown): string => {
  const variables = asObject(asObject(body).variables);
  const source = asObject(variables.order).sourceIdentifier;
  if (typeof source === 'string') return `order:${source}`;
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

const connection = <T>(nodes: T[], first: unknown) => {
  const page = typeof first === 'number' ? nodes.slice(0, first) : nodes;
  return {
    nodes: page,
    edges: page.map((node) => ({ node, cursor: String((node as { id?: unknown }).id) })),
    pageInfo: {
      hasNextPage: page.length < nodes.length,
      hasPreviousPage: false,
      startCursor: null,
      endCursor: page.length ? String((page[page.length - 1] as { id?: unknown }).id) : null,
    },
  };
};

const lines = (order: SimOrder) => (Array.isArray(order.line_items) ? order.line_items : []) as SimLineItem[];
const remaining = (line: SimLineItem) => Math.max(0, line.quantity - (line.fulfilled_quantity ?? 0));

/** A stub's fulfillment order has one line that takes any quantity: the stub knows none of the order's lines. */
const STUB_REMAINING = 1_000_000;

const lineItemNode = (line: SimLineItem) => ({
  id: gid('LineItem', line.id),
  title: line.title ?? '',
  name: line.title ?? '',
  sku: line.sku ?? null,
  variantTitle: line.variant_title ?? null,
  vendor: line.vendor ?? null,
  quantity: line.quantity,
  currentQuantity: line.quantity,
  unfulfilledQuantity: remaining(line),
  requiresShipping: true,
});

const fulfillmentOrderNodes = (order: SimOrder) => {
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
            args.first,
          ),
      },
    ];
  }
  const open = lines(order).some((line) => remaining(line) > 0);
  const status = order.cancelled_at ? 'CANCELLED' : open ? 'OPEN' : 'CLOSED';
  return [
    {
      id: gid('FulfillmentOrder', order.id),
      status,
      lineItems: (args: Json) =>
        connection(
          lines(order).map((line) => ({
            id: gid('FulfillmentOrderLineItem', line.id),
            remainingQuantity: remaining(line),
            totalQuantity: line.quantity,
            lineItem: lineItemNode(line),
          })),
          args.first,
        ),
    },
  ];
};

const fulfillmentNode = (fulfillment: Json) => ({
  id: gid('Fulfillment', String(fulfillment.id)),
  status: fulfillment.status === 'cancelled' ? 'CANCELLED' : 'SUCCESS',
  createdAt: fulfillment.created_at,
  updatedAt: fulfillment.updated_at ?? fulfillment.created_at,
  trackingInfo: () =>
    (fulfillment.tracking_numbers as string[] | undefined)?.map((number, index) => ({
      company: fulfillment.tracking_company ?? null,
      number,
      url: (fulfillment.tracking_urls as string[] | undefined)?.[index] ?? null,
    })) ?? [],
});

const orderNode = (order: SimOrder) => ({
  id: gid('Order', order.id),
  name: `#${order.id}`,
  sourceIdentifier: order.source_identifier ?? null,
  email: order.email ?? null,
  note: order.note ?? null,
  tags: String(order.tags ?? '')
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean),
  createdAt: order.created_at,
  updatedAt: order.updated_at ?? order.created_at,
  cancelledAt: order.cancelled_at ?? null,
  lineItems: (args: Json) => connection(lines(order).map(lineItemNode), args.first),
  fulfillmentOrders: (args: Json) => connection(fulfillmentOrderNodes(order), args.first),
  fulfillments: (args: Json) =>
    order.fulfillments.slice(0, typeof args.first === 'number' ? args.first : undefined).map(fulfillmentNode),
});

/** `source_identifier:'<id>'` of a search string, its `\'` and `\\` unescaped. */
const searchedSourceIdentifier = (search: unknown): string | null => {
  const match = /source_identifier:'((?:[^'\\]|\\.)*)'/.exec(String(search ?? ''));
  return match ? match[1].replace(/\\(.)/g, '$1') : null;
};

/** `OrderCreateOrderInput` as the REST order the simulator keeps. */
const restOrder = (input: Json): Json => {
  const address = asObject(input.shippingAddress);
  const money = (set: unknown) => asObject(asObject(set).shopMoney).amount ?? null;
  return {
    source_identifier: input.sourceIdentifier ?? null,
    currency: input.currency ?? null,
    email: input.email ?? null,
    note: input.note ?? null,
    note_attributes: list(input.customAttributes).map((a) => ({ name: a.key, value: a.value })),
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
    shipping_address: input.shippingAddress
      ? {
          first_name: address.firstName ?? null,
          last_name: address.lastName ?? null,
          company: address.company ?? null,
          address1: address.address1 ?? null,
          address2: address.address2 ?? null,
          city: address.city ?? null,
          province_code: address.provinceCode ?? null,
          country_code: address.countryCode ?? null,
          zip: address.zip ?? null,
          phone: address.phone ?? null,
        }
      : null,
  };
};

type UserError = { field: string[] | null; message: string };

const orderCreate = (store: ShopifyStore, args: Json) => {
  const input = asObject(args.order);
  if (list(input.lineItems).length === 0) {
    return { order: null, userErrors: [{ field: ['order', 'lineItems'], message: "Line items can't be blank" }] };
  }
  return { order: orderNode(store.createOrder(restOrder(input))), userErrors: [] as UserError[] };
};

/** Ships fulfillment order lines: each one's quantity at most what remains (a stub takes any). */
const fulfillmentCreate = (store: ShopifyStore, args: Json) => {
  const input = asObject(args.fulfillment);
  const refused = (message: string) => ({ fulfillment: null, userErrors: [{ field: ['fulfillment'], message }] });
  const byOrder = list(input.lineItemsByFulfillmentOrder);
  const orderIds = [...new Set(byOrder.map((entry) => idOf(entry.fulfillmentOrderId, 'FulfillmentOrder')))];
  if (orderIds.length !== 1 || orderIds[0] === null) return refused('Invalid fulfillment order id');
  const order = store.order(orderIds[0]);
  if (!order) return refused('Fulfillment order does not exist');
  if (order.cancelled_at) return refused('Fulfillment order is cancelled');

  const shipped: Array<{ line: SimLineItem | null; quantity: number }> = [];
  for (const entry of byOrder) {
    const asked = list(entry.fulfillmentOrderLineItems);
    const chosen = asked.length
      ? asked.map((item) => ({ id: String(item.id), quantity: Number(item.quantity) }))
      : order.stub
        ? []
        : lines(order).map((line) => ({ id: gid('FulfillmentOrderLineItem', line.id), quantity: remaining(line) }));
    for (const item of chosen) {
      if (order.stub) {
        shipped.push({ line: null, quantity: item.quantity });
        continue;
      }
      const line = lines(order).find((l) => gid('FulfillmentOrderLineItem', l.id) === item.id);
      if (!line) return refused(`Fulfillment order line item ${item.id} does not exist`);
      if (!(item.quantity > 0) || item.quantity > remaining(line)) {
        return refused(`Quantity ${item.quantity} is more than the ${remaining(line)} left to fulfill`);
      }
      shipped.push({ line, quantity: item.quantity });
    }
  }
  if (!order.stub && shipped.every((s) => s.quantity === 0)) return refused('Nothing left to fulfill');
  for (const { line, quantity } of shipped)
    if (line) line.fulfilled_quantity = (line.fulfilled_quantity ?? 0) + quantity;

  const tracking = asObject(input.trackingInfo);
  const numbers = (Array.isArray(tracking.numbers) ? tracking.numbers : tracking.number ? [tracking.number] : []).map(
    String,
  );
  const urls = (Array.isArray(tracking.urls) ? tracking.urls : tracking.url ? [tracking.url] : []).map(String);
  const fulfillment: Json = {
    id: store.nextFulfillmentId(),
    order_id: order.id,
    status: 'success',
    tracking_company: tracking.company ?? null,
    tracking_number: numbers[0] ?? null,
    tracking_numbers: numbers,
    tracking_url: urls[0] ?? null,
    tracking_urls: urls,
    line_items: shipped.flatMap(({ line, quantity }) => (line ? [{ id: line.id, quantity }] : [])),
    notify_customer: input.notifyCustomer ?? false,
    created_at: now(),
  };
  order.fulfillments.push(fulfillment);
  return { fulfillment: fulfillmentNode(fulfillment), userErrors: [] as UserError[] };
};

/** Answers one GraphQL request for one shop, as Shopify would: always HTTP 200, `data` and/or `errors`. */
export const executeShopify = async (store: ShopifyStore, body: unknown): Promise<unknown> => {
  const request = asObject(body);
  if (typeof request.query !== 'string') return { errors: [{ message: 'Parameter Missing or Invalid: query' }] };
  const schema = shopifyAdminSchema();
  const roots: Record<string, (args: Json) => unknown> = {
    orders: (args) => {
      const source = searchedSourceIdentifier(args.query);
      const orders = store.orders().filter((o) => !o.stub && (source === null || o.source_identifier === source));
      return connection(orders.map(orderNode), args.first);
    },
    order: (args) => {
      const id = idOf(args.id, 'Order');
      return id === null ? null : orderNode(store.orderOrStub(id));
    },
    orderCreate: (args) => orderCreate(store, args),
    fulfillmentCreate: (args) => fulfillmentCreate(store, args),
  };
  const fieldResolver: GraphQLFieldResolver<unknown, unknown, Json> = (source, args, context, info) => {
    if (info.parentType !== schema.getQueryType() && info.parentType !== schema.getMutationType()) {
      return defaultFieldResolver(source, args, context, info);
    }
    const resolve = roots[info.fieldName];
    if (!resolve) throw new GraphQLError(`${info.fieldName} is not supported by the platform simulator`);
    return resolve(args);
  };
  const result = await graphql({
    schema,
    source: request.query,
    variableValues: asObject(request.variables),
    operationName: typeof request.operationName === 'string' ? request.operationName : undefined,
    fieldResolver,
  });
  return JSON.parse(JSON.stringify(result));
};
