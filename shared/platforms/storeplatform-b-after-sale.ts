/**
 * storeplatform_b (Shopify) after the sale (CONTRACT §15, PLATFORM-API.md "Refunds and returns"), on the
 * adapter's own runner (`ShopifyRunner`, lent by storeplatform-b.ts), so every call is classified as the others
 * are (THROTTLED as a 429 with its wait, userErrors as a 422, a mutation's lost answer as an unknown outcome).
 *
 * - Edits: the lines read first (`supplierOrderLines`: `currentQuantity`, `unfulfilledQuantity`), only lines
 *   above their absolute target edited (`orderEditBegin`, `orderEditSetQuantity`, `orderEditCommit`): a commit
 *   whose answer was lost shows in `currentQuantity`, so sending the edit again removes nothing twice.
 * - Returns: `returnCreate` takes no key. The lines come from `returnableFulfillments`, the marker goes into
 *   every line's `returnReasonNote`, and `orderReturns` finds the return again by it (`findReturn`, and
 *   `createReturn`'s `resend`).
 * - The poll and the read after the sale: an order whose probes show a refund or a return has them read
 *   whole (`orderRefunds`, `orderReturns`) and carried in Shopify's REST webhook shapes.
 */
import { answeredBy, isRefusal, unexpectedAnswer } from './http.js';
import {
  type AfterSaleCalls,
  type PlatformReturn,
  type QuantityTarget,
  type ReturnRequest,
  restOrderId,
  type ShopConnection,
  type SupplierLineState,
} from './port.js';
import { isObject, objects } from './rest.js';
import { editTargets } from './rest-after-sale.js';
import { AFTER_SALE_PAGE_SIZES as PAGE } from './storeplatform-b-after-sale-documents.js';
import type { ShopifyRunner } from './storeplatform-b-connect.js';
import { SHOPIFY_PAGE_SIZES } from './storeplatform-b-documents.js';

const PLATFORM = 'storeplatform_b';
const refusal = (message: string) => answeredBy(PLATFORM, 422, message);
const notFound = (what: string) => answeredBy(PLATFORM, 404, what);
type Json = Record<string, unknown>;

const gidOf = (type: string, id: string) => (/^\d+$/.test(id) ? `gid://shopify/${type}/${id}` : id);
/** The number of a GID, as webhooks and REST shapes carry it. */
const numberOf = (value: unknown): string | undefined => {
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string' || value === '') return undefined;
  return /^gid:\/\/[^/]+\/[^/]+\/(.+)$/.exec(value)?.[1] ?? value;
};
const nodesOf = (connection: unknown): Json[] => objects(isObject(connection) ? connection.nodes : undefined);
const lower = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : null);
const count = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) ? value : 0);
const idOfObject = (value: unknown) => (isObject(value) ? value.id : undefined);

/** Shopify's deprecated `ReturnReason` enum (still accepted in 2026-10) of a reseller's lower-case reason. */
const RETURN_REASONS = new Set([
  'COLOR',
  'DEFECTIVE',
  'NOT_AS_DESCRIBED',
  'OTHER',
  'SIZE_TOO_LARGE',
  'SIZE_TOO_SMALL',
  'STYLE',
  'UNKNOWN',
  'UNWANTED',
  'WRONG_ITEM',
]);
export const returnReasonOf = (reason: string | null) => {
  if (reason === null || reason.trim() === '') return 'UNKNOWN';
  const value = reason.trim().toUpperCase();
  return RETURN_REASONS.has(value) ? value : 'OTHER';
};

/** A line node (`quantity`, `currentQuantity`, `unfulfilledQuantity`) as it stands. */
const lineStateOf = (node: Json): SupplierLineState => {
  const currentQuantity = count(node.currentQuantity);
  return {
    id: numberOf(node.id) ?? '',
    quantity: count(node.quantity),
    currentQuantity,
    fulfilledQuantity: Math.max(0, currentQuantity - count(node.unfulfilledQuantity)),
  };
};

/** A `Return` node as `PlatformReturn`: its GID, its status lower-cased (`canceled`), its lines. */
export const platformReturnOfNode = (node: Json, lines: Json[] = nodesOf(node.returnLineItems)): PlatformReturn => ({
  id: String(node.id),
  status: lower(node.status) ?? '',
  lines: lines.map((line) => {
    const fli = isObject(line.fulfillmentLineItem) ? line.fulfillmentLineItem : {};
    return {
      lineItemId: numberOf(idOfObject(fli.lineItem)) ?? '',
      fulfillmentLineItemId: numberOf(fli.id) ?? null,
      quantity: count(line.quantity),
      reason: lower(line.returnReason),
    };
  }),
});

/** A `Return` node in the poll's REST shape (`ReturnPayload`). */
export const restReturnOfNode = (orderId: string, node: Json, lines: Json[]): Json => ({
  id: numberOf(node.id) ?? null,
  admin_graphql_api_id: node.id ?? null,
  order_id: orderId,
  name: node.name ?? null,
  status: lower(node.status),
  created_at: node.createdAt ?? null,
  closed_at: node.closedAt ?? null,
  return_line_items: lines.map((line) => {
    const fli = isObject(line.fulfillmentLineItem) ? line.fulfillmentLineItem : {};
    return {
      id: numberOf(line.id) ?? null,
      line_item_id: numberOf(idOfObject(fli.lineItem)) ?? null,
      fulfillment_line_item_id: numberOf(fli.id) ?? null,
      quantity: line.quantity,
      return_reason: lower(line.returnReason),
      return_reason_note: line.returnReasonNote ?? null,
    };
  }),
});

const moneySet = (bag: unknown) => {
  const shop = isObject(bag) && isObject(bag.shopMoney) ? bag.shopMoney : {};
  return { shop_money: { amount: shop.amount ?? null, currency_code: shop.currencyCode ?? null } };
};

/** A `Refund` node as `refunds/create` carries it (`RefundPayload`); it moves no money on a supplier order. */
export const restRefundOfNode = (orderId: string, node: Json, lines: Json[]): Json => ({
  id: numberOf(node.id) ?? null,
  admin_graphql_api_id: node.id ?? null,
  order_id: orderId,
  created_at: node.createdAt ?? null,
  note: node.note ?? null,
  return: isObject(node.return) ? { id: numberOf(node.return.id), admin_graphql_api_id: node.return.id } : null,
  refund_line_items: lines.map((line) => ({
    id: numberOf(line.id) ?? null,
    line_item_id: numberOf(idOfObject(line.lineItem)) ?? null,
    quantity: line.quantity,
    restock_type: lower(line.restockType),
    subtotal_set: moneySet(line.subtotalSet),
  })),
  refund_shipping_lines: nodesOf(node.refundShippingLines).map((line) => ({
    subtotal_amount_set: moneySet(line.subtotalAmountSet),
  })),
  order_adjustments: [],
  transactions: [],
});

/** The statuses of a return that no longer stands: a lookup by marker passes over them. */
const GONE = new Set(['CANCELED', 'DECLINED']);

/** Every line of the order as it stands; 404 without the order, 422 once it is cancelled. */
async function lineStates(runner: ShopifyRunner, shop: ShopConnection, orderGid: string): Promise<SupplierLineState[]> {
  const read = async (after?: string) => {
    const data = await runner.run(shop, 'supplierOrderLines', { id: orderGid, first: PAGE.orderLines, after });
    if (!isObject(data.order)) throw notFound(`order ${restOrderId(orderGid)} not found`);
    return data.order;
  };
  const order = await read();
  if (typeof order.cancelledAt === 'string') throw refusal('the order is cancelled');
  const lines = await runner.allNodes(order.lineItems, async (after) => (await read(after)).lineItems);
  return lines.map(lineStateOf);
}

/** Begin, set each line's absolute quantity, commit; answers the lines as the commit left them. */
async function applyEdit(runner: ShopifyRunner, shop: ShopConnection, orderGid: string, changes: QuantityTarget[]) {
  const begun = await runner.mutate(shop, 'orderEditBegin', { id: orderGid, lines: PAGE.editLines });
  const calculated = isObject(begun.calculatedOrder) ? begun.calculatedOrder : undefined;
  if (!calculated) throw unexpectedAnswer(PLATFORM, 200, 'no calculated order');
  const calculatedLines = nodesOf(calculated.lineItems);
  for (const change of changes) {
    // A CalculatedLineItem carries its LineItem's number (the platform notes on refunds and returns, §2.1).
    const line = calculatedLines.find((node) => numberOf(node.id) === change.id);
    if (!line) throw refusal(`line item ${change.id} cannot be edited`);
    const variables = { id: calculated.id, lineItemId: line.id, quantity: change.quantity, restock: false };
    await runner.mutate(shop, 'orderEditSetQuantity', variables);
  }
  const staffNote = 'reseller refunded units before shipping';
  const committed = await runner.mutate(shop, 'orderEditCommit', {
    id: calculated.id,
    staffNote,
    lines: PAGE.editLines,
  });
  const order = isObject(committed.order) ? committed.order : undefined;
  if (!order) throw unexpectedAnswer(PLATFORM, 200, 'no order after the edit');
  return nodesOf(order.lineItems).map(lineStateOf);
}

async function editOnce(runner: ShopifyRunner, shop: ShopConnection, orderId: string, targets: QuantityTarget[]) {
  const orderGid = gidOf('Order', restOrderId(orderId));
  const states = await lineStates(runner, shop, orderGid);
  const changes = editTargets(PLATFORM, states, targets);
  if (changes.length === 0) return { edited: false, lines: states };
  return { edited: true, lines: await applyEdit(runner, shop, orderGid, changes) };
}

/** A return with every line: those beyond the page read by `returnLineItems`. */
async function wholeReturn(runner: ShopifyRunner, shop: ShopConnection, node: Json): Promise<Json[]> {
  return runner.allNodes(node.returnLineItems, async (after) => {
    const data = await runner.run(shop, 'returnLineItems', { id: node.id, first: PAGE.returnLines, after });
    if (!isObject(data.return)) throw unexpectedAnswer(PLATFORM, 200, 'a return of the order is gone');
    return data.return.returnLineItems;
  });
}

/** Every return of the order, each with every line; null without the order. */
async function returnsOf(
  runner: ShopifyRunner,
  shop: ShopConnection,
  orderGid: string,
): Promise<Array<{ node: Json; lines: Json[] }> | null> {
  const read = async (after?: string) => {
    const variables = { id: orderGid, first: PAGE.returns, after, lines: PAGE.returnLines };
    const data = await runner.run(shop, 'orderReturns', variables);
    return isObject(data.order) ? data.order : null;
  };
  const order = await read();
  if (!order) return null;
  const nodes = await runner.allNodes(order.returns, async (after) => (await read(after))?.returns);
  const whole: Array<{ node: Json; lines: Json[] }> = [];
  for (const node of nodes) whole.push({ node, lines: await wholeReturn(runner, shop, node) });
  return whole;
}

/** Every refund of the order (as many as the list gives), each with every line. */
async function refundsOf(
  runner: ShopifyRunner,
  shop: ShopConnection,
  orderGid: string,
): Promise<Array<{ node: Json; lines: Json[] }>> {
  const data = await runner.run(shop, 'orderRefunds', { id: orderGid, refunds: PAGE.refunds, lines: PAGE.refundLines });
  const refunds = isObject(data.order) ? objects(data.order.refunds) : [];
  const whole: Array<{ node: Json; lines: Json[] }> = [];
  for (const node of refunds) {
    const lines = await runner.allNodes(node.refundLineItems, async (after) => {
      const more = await runner.run(shop, 'refundLineItems', { id: node.id, first: PAGE.refundLines, after });
      if (!isObject(more.refund)) throw unexpectedAnswer(PLATFORM, 200, 'a refund of the order is gone');
      return more.refund.refundLineItems;
    });
    whole.push({ node, lines });
  }
  return whole;
}

/**
 * An order node of the poll or the read with its refunds and returns in REST shapes (`restRefunds`,
 * `restReturns`), read only when its probes (`refunds(first: 1)`, `returns(first: 1)`) show any.
 */
async function withAfterSale(runner: ShopifyRunner, shop: ShopConnection, node: Json): Promise<Json> {
  const orderId = numberOf(node.id) ?? '';
  const hasRefunds = Array.isArray(node.refunds) && node.refunds.length > 0;
  const hasReturns = nodesOf(node.returns).length > 0;
  const refunds = hasRefunds ? await refundsOf(runner, shop, String(node.id)) : [];
  const returns = hasReturns ? ((await returnsOf(runner, shop, String(node.id))) ?? []) : [];
  return {
    ...node,
    restRefunds: refunds.map(({ node: refund, lines }) => restRefundOfNode(orderId, refund, lines)),
    restReturns: returns.map(({ node: entry, lines }) => restReturnOfNode(orderId, entry, lines)),
  };
}

/** The returnable fulfillment line items of the order: `{id, lineItemId, quantity}` (what can still go back). */
async function returnableLines(runner: ShopifyRunner, shop: ShopConnection, orderGid: string) {
  const read = (after?: string) =>
    runner.run(shop, 'returnableFulfillments', {
      orderId: orderGid,
      first: PAGE.returnableFulfillments,
      after,
      lines: PAGE.returnableLines,
    });
  const first = await read();
  const fulfillments = await runner.allNodes(
    first.returnableFulfillments,
    async (after) => (await read(after)).returnableFulfillments,
  );
  const lines: Json[] = [];
  for (const fulfillment of fulfillments) {
    lines.push(
      ...(await runner.allNodes(fulfillment.returnableFulfillmentLineItems, async (after) => {
        const variables = { id: fulfillment.id, first: PAGE.returnableLines, after };
        const more = await runner.run(shop, 'returnableFulfillmentLines', variables);
        if (!isObject(more.returnableFulfillment)) throw unexpectedAnswer(PLATFORM, 200, 'a fulfillment is gone');
        return more.returnableFulfillment.returnableFulfillmentLineItems;
      })),
    );
  }
  return lines.map((line) => {
    const fli = isObject(line.fulfillmentLineItem) ? line.fulfillmentLineItem : {};
    return { id: String(fli.id), lineItemId: numberOf(idOfObject(fli.lineItem)), quantity: count(line.quantity) };
  });
}

/** `returnLineItems` of a request: each line's units taken from its fulfillment line items in turn. */
async function returnLineInputs(runner: ShopifyRunner, shop: ShopConnection, orderGid: string, request: ReturnRequest) {
  const returnable = await returnableLines(runner, shop, orderGid);
  return request.lines.flatMap((line) => {
    let left = line.quantity;
    const inputs = returnable
      .filter((fli) => fli.lineItemId === line.lineItemId && fli.quantity > 0)
      .flatMap((fli) => {
        const quantity = Math.min(left, fli.quantity);
        if (quantity <= 0) return [];
        left -= quantity;
        fli.quantity -= quantity;
        const returnReason = returnReasonOf(line.reason);
        return [{ fulfillmentLineItemId: fli.id, quantity, returnReason, returnReasonNote: request.marker }];
      });
    if (left > 0) throw refusal(`${left} of line item ${line.lineItemId} are not fulfilled or already returned`);
    return inputs;
  });
}

/** `findReturn`: the order's return whose lines carry the marker, not canceled or declined. */
async function findReturn(runner: ShopifyRunner, shop: ShopConnection, orderId: string, marker: string) {
  const returns = await returnsOf(runner, shop, gidOf('Order', restOrderId(orderId)));
  if (returns === null) throw notFound(`order ${restOrderId(orderId)} not found`);
  const found = returns.find(
    ({ node, lines }) =>
      !GONE.has(String(node.status)) && lines.some((line) => String(line.returnReasonNote ?? '').includes(marker)),
  );
  return found ? platformReturnOfNode(found.node, found.lines) : null;
}

/** `createReturn`: looked for first when an earlier attempt may have made it (no key on Shopify). */
async function createReturn(
  runner: ShopifyRunner,
  shop: ShopConnection,
  orderId: string,
  request: ReturnRequest,
  resend: boolean,
): Promise<PlatformReturn> {
  if (resend) {
    const found = await findReturn(runner, shop, orderId, request.marker);
    if (found) return found;
  }
  const orderGid = gidOf('Order', restOrderId(orderId));
  const returnLineItems = await returnLineInputs(runner, shop, orderGid, request);
  const variables = {
    returnInput: { orderId: orderGid, returnLineItems },
    lines: Math.max(1, returnLineItems.length),
  };
  const payload = await runner.mutate(shop, 'returnCreate', variables);
  if (!isObject(payload.return)) throw unexpectedAnswer(PLATFORM, 200, 'no return');
  return platformReturnOfNode(payload.return);
}

/** `cancelReturn`: one already canceled is success, also when an attempt in between cancelled it. */
async function cancelReturn(runner: ShopifyRunner, shop: ShopConnection, returnId: string): Promise<PlatformReturn> {
  const id = gidOf('Return', returnId);
  const read = async () => {
    const data = await runner.run(shop, 'returnLineItems', { id, first: PAGE.returnLines });
    if (!isObject(data.return)) throw notFound(`return ${numberOf(id)} not found`);
    return platformReturnOfNode(data.return);
  };
  const before = await read();
  if (before.status === 'canceled') return before;
  try {
    const payload = await runner.mutate(shop, 'returnCancel', { id });
    return { ...before, status: lower(isObject(payload.return) ? payload.return.status : null) ?? 'canceled' };
  } catch (error) {
    const now = isRefusal(error) ? await read() : undefined;
    if (now?.status === 'canceled') return now;
    throw error;
  }
}

/** `readOrderAfterSale`: the order as the poll carries it, its refunds and returns read whole; null without it. */
async function readOrderAfterSale(runner: ShopifyRunner, shop: ShopConnection, orderId: string) {
  const data = await runner.run(shop, 'orderAfterSale', {
    id: gidOf('Order', restOrderId(orderId)),
    lines: SHOPIFY_PAGE_SIZES.changedOrderLines,
    fulfillments: SHOPIFY_PAGE_SIZES.changedFulfillments,
    fulfillmentLines: SHOPIFY_PAGE_SIZES.changedFulfillmentLines,
  });
  if (data.order === null || data.order === undefined) return null;
  if (!isObject(data.order)) throw unexpectedAnswer(PLATFORM, 200, 'an order that is not an object');
  const node = await withAfterSale(runner, shop, await runner.wholeOrderNode(shop, data.order));
  const changed = runner.changedOrderOfNode(node);
  if (!changed) throw unexpectedAnswer(PLATFORM, 200, 'an order without an id or updatedAt');
  return changed;
}

/** The calls of CONTRACT §15 on Shopify, and what the poll adds to an order node (`withAfterSale`). */
export const storePlatformBAfterSale = (runner: ShopifyRunner) => {
  const calls: AfterSaleCalls = {
    async editOrderQuantities(shop, orderId, lines) {
      try {
        return await editOnce(runner, shop, orderId, lines);
      } catch (error) {
        // Refused: the supplier shipped between the read and the edit. Read again: what shipped now stays.
        if (!isRefusal(error)) throw error;
        return editOnce(runner, shop, orderId, lines);
      }
    },
    createReturn: (shop, orderId, request, _key, options) =>
      createReturn(runner, shop, orderId, request, options?.resend === true),
    findReturn: (shop, orderId, marker) => findReturn(runner, shop, orderId, marker),
    cancelReturn: (shop, _orderId, returnId) => cancelReturn(runner, shop, returnId),
    readOrderAfterSale: (shop, orderId) => readOrderAfterSale(runner, shop, orderId),
  };
  return { calls, withAfterSale: (shop: ShopConnection, node: Json) => withAfterSale(runner, shop, node) };
};
