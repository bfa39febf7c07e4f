/**
 * The simulator's Shopify after the sale (CONTRACT §15): the resolvers of the documents in
 * `shared/platforms/storeplatform-b-after-sale-documents.ts`, over the model of simulator-after-sale.ts, so
 * Shopify refuses (userErrors) what REST refuses (422): an edit below what shipped, a return of units not
 * fulfilled or already returned, cancelling a return once work was done on it.
 *
 * - Order fields: `refunds(first)`, `returns(first, after)`, `returnStatus`; line items' `currentQuantity`
 *   (`quantity` never goes down), `refundableQuantity`, `restockable` (false: the supplier's custom lines).
 * - Queries: `returnableFulfillments(orderId)`, `returnableFulfillment(id)`, `return(id)`, `refund(id)`.
 * - Mutations: `orderEditBegin` (a session per call: `CalculatedOrder/<n>`, its lines `CalculatedLineItem/<line
 *   id>`), `orderEditSetQuantity` (absolute, staged), `orderEditCommit` (applied all or none; the session ends),
 *   `returnCreate` (approved: `OPEN`), `returnCancel`.
 */
import { GraphQLError } from 'graphql';
import {
  cancelReturn,
  editQuantities,
  findReturn,
  fulfillmentLines,
  openReturn,
  refundsOf,
  returnsOf,
} from './simulator-after-sale.js';
import {
  asObject,
  currentOf,
  gid,
  idOf,
  type Json,
  list,
  remaining,
  type SimOrder,
  SimRefusalError,
  type SimShop,
  textOf,
} from './simulator-store.js';

const upper = (value: unknown) => String(value ?? '').toUpperCase();

/** What simulator-shopify.ts lends: its nested connection and its nodes of a line, a fulfillment, an order. */
export interface ShopifyNodes {
  connection: <T extends { id: unknown }>(nodes: T[], args: Json) => unknown;
  lineItemNode: (order: SimOrder, lineId: unknown) => Json;
  fulfillmentNode: (order: SimOrder, fulfillmentId: number) => Json;
  orderNode: (order: SimOrder) => Json;
}

type UserError = { field: string[] | null; message: string; code?: string };
const userError = (field: string[], message: string, code = 'INVALID'): UserError[] => [{ field, message, code }];

// ---------------------------------------------------------------- nodes

const money = (set: unknown) => {
  const shop = asObject(asObject(set).shop_money);
  const amount = { amount: textOf(shop.amount ?? '0.00'), currencyCode: String(shop.currency_code ?? 'USD') };
  return { shopMoney: amount, presentmentMoney: amount };
};

const returnNode = (nodes: ShopifyNodes, order: SimOrder, entry: Json) => ({
  id: gid('Return', entry.id),
  name: entry.name,
  status: upper(entry.status),
  createdAt: entry.created_at,
  closedAt: entry.closed_at ?? null,
  totalQuantity: list(entry.return_line_items).reduce((n, line) => n + Number(line.quantity), 0),
  order: nodes.orderNode(order),
  returnLineItems: (args: Json) =>
    nodes.connection(
      list(entry.return_line_items).map((line) => ({
        __typename: 'ReturnLineItem',
        id: gid('ReturnLineItem', line.id),
        quantity: line.quantity,
        returnReason: upper(line.return_reason || 'unknown'),
        returnReasonNote: String(line.return_reason_note ?? ''),
        customerNote: null,
        fulfillmentLineItem: {
          id: gid('FulfillmentLineItem', line.fulfillment_line_item_id),
          quantity: line.quantity,
          lineItem: nodes.lineItemNode(order, line.line_item_id),
        },
      })),
      args,
    ),
});

const refundNode = (nodes: ShopifyNodes, order: SimOrder, refund: Json) => ({
  id: gid('Refund', refund.id),
  legacyResourceId: String(refund.id),
  createdAt: refund.created_at,
  processedAt: refund.processed_at ?? refund.created_at,
  note: refund.note ?? null,
  return: refund.return ? { id: gid('Return', asObject(refund.return).id) } : null,
  order: nodes.orderNode(order),
  refundLineItems: (args: Json) =>
    nodes.connection(
      list(refund.refund_line_items).map((line) => ({
        id: gid('RefundLineItem', line.id),
        quantity: line.quantity,
        restockType: upper(line.restock_type),
        restocked: line.restock_type !== 'no_restock',
        lineItem: nodes.lineItemNode(order, line.line_item_id),
        subtotalSet: money(line.subtotal_set),
        totalTaxSet: money(line.total_tax_set),
      })),
      args,
    ),
  refundShippingLines: (args: Json) =>
    nodes.connection(
      list(refund.refund_shipping_lines).map((line) => ({
        id: gid('RefundShippingLine', line.id),
        subtotalAmountSet: money(line.subtotal_amount_set),
      })),
      args,
    ),
});

/** The after-sale fields of an `Order` node. */
export const afterSaleOrderFields = (nodes: ShopifyNodes, order: SimOrder) => ({
  refunds: (args: Json) => {
    const all = refundsOf(order).map((refund) => refundNode(nodes, order, refund));
    return typeof args.first === 'number' ? all.slice(0, args.first) : all;
  },
  returns: (args: Json) =>
    nodes.connection(
      returnsOf(order).map((entry) => returnNode(nodes, order, entry)),
      args,
    ),
  returnStatus: returnsOf(order).some((r) => r.status === 'open')
    ? 'IN_PROGRESS'
    : returnsOf(order).some((r) => r.status === 'closed')
      ? 'RETURNED'
      : 'NO_RETURN',
});

/** The after-sale fields of a `LineItem` node: what it holds now (`quantity` never goes down), what is refundable. */
export const afterSaleLineFields = (line: Parameters<typeof currentOf>[0]) => {
  const current = currentOf(line);
  return { currentQuantity: current, refundableQuantity: current, restockable: false };
};

/** An order's returnable fulfillments: what each fulfillment line item can still send back. */
const returnableNodes = (nodes: ShopifyNodes, order: SimOrder) => {
  const lines = fulfillmentLines(order);
  const open = (fulfillment: unknown) =>
    lines.filter((fli) => fli.fulfillment === fulfillment && fli.quantity > fli.returned);
  return order.fulfillments
    .filter((fulfillment) => open(fulfillment).length > 0)
    .map((fulfillment) => ({
      id: gid('ReturnableFulfillment', fulfillment.id),
      fulfillment: nodes.fulfillmentNode(order, fulfillment.id),
      returnableFulfillmentLineItems: (args: Json) =>
        nodes.connection(
          open(fulfillment).map((fli) => ({
            id: gid('FulfillmentLineItem', fli.id),
            quantity: fli.quantity - fli.returned,
            fulfillmentLineItem: {
              id: gid('FulfillmentLineItem', fli.id),
              quantity: fli.quantity,
              lineItem: nodes.lineItemNode(order, fli.lineItemId),
            },
          })),
          args,
        ),
    }));
};

// ---------------------------------------------------------------- edit sessions

interface EditSession {
  orderId: number;
  quantities: Map<string, number>;
}
const sessions = new WeakMap<SimShop, Map<number, EditSession>>();
let nextSession = 1;
const sessionsOf = (shop: SimShop) => {
  const map = sessions.get(shop) ?? new Map<number, EditSession>();
  sessions.set(shop, map);
  return map;
};

const calculatedOrderNode = (nodes: ShopifyNodes, order: SimOrder, id: number, session: EditSession) => ({
  id: gid('CalculatedOrder', id),
  committed: false,
  originalOrder: nodes.orderNode(order),
  lineItems: (args: Json) =>
    nodes.connection(
      order.line_items.map((line) => ({
        id: gid('CalculatedLineItem', line.id),
        quantity: session.quantities.get(textOf(line.id)) ?? currentOf(line),
        editableQuantity: remaining(line),
        editableQuantityBeforeChanges: remaining(line),
        restockable: false,
        title: String(line.title ?? ''),
        sku: line.sku ?? null,
      })),
      args,
    ),
});

const sessionFor = (shop: SimShop, id: unknown) => {
  const number = idOf(id, 'CalculatedOrder') ?? idOf(id, 'OrderEditSession');
  const session = number === null ? undefined : sessionsOf(shop).get(number);
  return session && number !== null ? { number, session, order: shop.orders.get(session.orderId) } : undefined;
};

// ---------------------------------------------------------------- resolvers

const refusalOf = (error: unknown, field: string[], code = 'INVALID'): UserError[] => {
  if (!(error instanceof SimRefusalError)) throw error;
  return userError(field, error.message, code);
};

export const afterSaleQueries = (shop: SimShop, nodes: ShopifyNodes) => ({
  returnableFulfillments: (args: Json) => {
    const id = idOf(args.orderId, 'Order');
    const order = id === null ? undefined : shop.orders.get(id);
    if (!order) throw new GraphQLError('Order does not exist');
    return nodes.connection(returnableNodes(nodes, order), args);
  },
  returnableFulfillment: (args: Json) => {
    const id = idOf(args.id, 'ReturnableFulfillment');
    for (const order of shop.orders.values()) {
      const found = returnableNodes(nodes, order).find((node) => node.id === gid('ReturnableFulfillment', id));
      if (found) return found;
    }
    return null;
  },
  return: (args: Json) => {
    const id = idOf(args.id, 'Return');
    const found = id === null ? undefined : findReturn(shop, id);
    return found ? returnNode(nodes, found.order, found.entry) : null;
  },
  refund: (args: Json) => {
    const id = idOf(args.id, 'Refund');
    for (const order of shop.orders.values()) {
      const refund = refundsOf(order).find((entry) => entry.id === id);
      if (refund) return refundNode(nodes, order, refund);
    }
    return null;
  },
});

const orderEditBegin = (shop: SimShop, nodes: ShopifyNodes, args: Json) => {
  const id = idOf(args.id, 'Order');
  const order = id === null ? undefined : shop.orders.get(id);
  const refused = (message: string) => ({
    calculatedOrder: null,
    orderEditSession: null,
    userErrors: userError(['id'], message),
  });
  if (!order || order.stub) return refused('Order does not exist');
  if (order.cancelled_at) return refused('The order is cancelled and cannot be edited');
  const number = nextSession++;
  const session: EditSession = { orderId: order.id, quantities: new Map() };
  sessionsOf(shop).set(number, session);
  return {
    calculatedOrder: calculatedOrderNode(nodes, order, number, session),
    orderEditSession: { id: gid('OrderEditSession', number) },
    userErrors: [],
  };
};

const orderEditSetQuantity = (shop: SimShop, nodes: ShopifyNodes, args: Json) => {
  const found = sessionFor(shop, args.id);
  const refused = (field: string, message: string) => ({
    calculatedLineItem: null,
    calculatedOrder: null,
    orderEditSession: null,
    userErrors: userError([field], message),
  });
  if (!found?.order) return refused('id', 'The order edit does not exist');
  const lineId = idOf(args.lineItemId, 'CalculatedLineItem');
  const line = found.order.line_items.find((l) => textOf(l.id) === String(lineId));
  if (!line) return refused('lineItemId', 'The line item does not exist');
  const quantity = Number(args.quantity);
  if (quantity < line.fulfilled_quantity || quantity > Number(textOf(line.quantity))) {
    return refused('quantity', `You can only edit unfulfilled line items: ${line.fulfilled_quantity} are fulfilled`);
  }
  found.session.quantities.set(textOf(line.id), quantity);
  const calculated = calculatedOrderNode(nodes, found.order, found.number, found.session);
  return {
    calculatedLineItem: {
      id: gid('CalculatedLineItem', line.id),
      quantity,
      editableQuantity: remaining(line),
    },
    calculatedOrder: calculated,
    orderEditSession: { id: gid('OrderEditSession', found.number) },
    userErrors: [],
  };
};

const orderEditCommit = (shop: SimShop, nodes: ShopifyNodes, args: Json) => {
  const found = sessionFor(shop, args.id);
  if (!found?.order) return { order: null, userErrors: userError(['id'], 'The order edit does not exist') };
  sessionsOf(shop).delete(found.number);
  const lines = [...found.session.quantities].map(([id, quantity]) => ({ id: Number(id), quantity }));
  try {
    if (lines.length > 0) editQuantities(shop, found.order.id, lines);
    return { order: nodes.orderNode(found.order), successMessages: [], userErrors: [] };
  } catch (error) {
    return { order: null, userErrors: refusalOf(error, ['id']) };
  }
};

const returnCreate = (shop: SimShop, nodes: ShopifyNodes, args: Json) => {
  const input = asObject(args.returnInput);
  const id = idOf(input.orderId, 'Order');
  const order = id === null ? undefined : shop.orders.get(id);
  if (!order)
    return { return: null, userErrors: userError(['returnInput', 'orderId'], 'Order does not exist', 'NOT_FOUND') };
  try {
    const made = openReturn(
      shop,
      order.id,
      list(input.returnLineItems).map((line) => ({
        fulfillment_line_item_id: idOf(line.fulfillmentLineItemId, 'FulfillmentLineItem') ?? -1,
        quantity: line.quantity,
        return_reason: typeof line.returnReason === 'string' ? line.returnReason.toLowerCase() : 'unknown',
        return_reason_note: line.returnReasonNote ?? '',
      })),
    );
    return { return: made ? returnNode(nodes, order, made) : null, userErrors: [] };
  } catch (error) {
    return { return: null, userErrors: refusalOf(error, ['returnInput', 'returnLineItems']) };
  }
};

const returnCancelMutation = (shop: SimShop, nodes: ShopifyNodes, args: Json) => {
  const id = idOf(args.id, 'Return');
  const found = id === null ? undefined : findReturn(shop, id);
  if (!found || id === null)
    return { return: null, userErrors: userError(['id'], 'Return does not exist', 'NOT_FOUND') };
  try {
    cancelReturn(shop, id);
    return { return: returnNode(nodes, found.order, found.entry), userErrors: [] };
  } catch (error) {
    return { return: null, userErrors: refusalOf(error, ['id'], 'INVALID_STATE') };
  }
};

export const afterSaleMutations = (shop: SimShop, nodes: ShopifyNodes) => ({
  orderEditBegin: (args: Json) => orderEditBegin(shop, nodes, args),
  orderEditSetQuantity: (args: Json) => orderEditSetQuantity(shop, nodes, args),
  orderEditCommit: (args: Json) => orderEditCommit(shop, nodes, args),
  returnCreate: (args: Json) => returnCreate(shop, nodes, args),
  returnCancel: (args: Json) => returnCancelMutation(shop, nodes, args),
});

/** The kinds of the after-sale mutations, for idempotency-free test tokens (`flaky`, `lost`). */
export const AFTER_SALE_SHOPIFY_KINDS = {
  orderEditBegin: 'order_edit',
  orderEditSetQuantity: 'order_edit',
  orderEditCommit: 'order_edit',
  returnCreate: 'return_create',
  returnCancel: 'return_cancel',
} as const;
