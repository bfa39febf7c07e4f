/**
 * storeplatform_a after the sale (CONTRACT §15, PLATFORM-API.md "Refunds and returns"), on the REST Admin
 * API: `POST orders/{id}/edits.json` (absolute quantities), `POST orders/{id}/returns.json`,
 * `GET orders/{id}/returns.json`, `POST returns/{id}/cancel.json`, and the order read whole. Every write takes
 * the idempotency key; 429s carry their `Retry-After` as every call's do (http.ts).
 */
import { callPlatform, PlatformError, STOREPLATFORM_A_API_VERSION, unexpectedAnswer } from './http.js';
import {
  type AfterSaleCalls,
  type ChangedOrder,
  type OrderEditResult,
  restOrderId,
  type ShopConnection,
  sameReturnId,
} from './port.js';
import { changedOrderOf, isObject } from './rest.js';
import {
  editBody,
  editTargets,
  lineStatesOf,
  platformReturnOf,
  returnBody,
  returnWithMarker,
} from './rest-after-sale.js';

const PLATFORM = 'storeplatform_a';
const API = `/admin/api/${STOREPLATFORM_A_API_VERSION}`;

const orderPath = (orderId: string) => `${API}/orders/${encodeURIComponent(restOrderId(orderId))}`;
const token = (shop: ShopConnection) => ({ 'X-Platform-Access-Token': shop.accessToken });
/** A POST of `json` to `path` under an idempotency key (a repeat with the key answers as the first did). */
const postKeyed = (shop: ShopConnection, path: string, key: string, json: unknown) =>
  callPlatform({
    platform: PLATFORM,
    shop,
    method: 'POST',
    path,
    headers: { ...token(shop), 'Idempotency-Key': key },
    json,
  });

/** `GET orders/{id}.json`: the order as it stands; null for a 404. */
async function orderOf(shop: ShopConnection, orderId: string): Promise<Record<string, unknown> | null> {
  try {
    const path = `${orderPath(orderId)}.json`;
    const answer = await callPlatform({ platform: PLATFORM, shop, method: 'GET', path, headers: token(shop) });
    const order = isObject(answer.body) ? answer.body.order : undefined;
    if (!isObject(order)) throw unexpectedAnswer(PLATFORM, answer.status, 'no order');
    return order;
  } catch (error) {
    if (error instanceof PlatformError && error.status === 404) return null;
    throw error;
  }
}

const notFound = (orderId: string) =>
  new PlatformError({
    platform: PLATFORM,
    status: 404,
    retryable: false,
    message: `${PLATFORM} answered 404: order ${restOrderId(orderId)} not found`,
  });

const refused = (error: unknown) => error instanceof PlatformError && error.status === 422;

/** One try of an edit: read, the targets still to reach, the edit (none when every line is there). */
async function editOnce(
  shop: ShopConnection,
  orderId: string,
  targets: Parameters<AfterSaleCalls['editOrderQuantities']>[2],
  key: string,
): Promise<OrderEditResult> {
  const order = await orderOf(shop, orderId);
  if (!order) throw notFound(orderId);
  const states = lineStatesOf(order);
  if (!states) throw unexpectedAnswer(PLATFORM, 200, 'an order without lines');
  const changes = editTargets(PLATFORM, states, targets);
  if (changes.length === 0) return { edited: false, lines: states };
  const path = `${orderPath(orderId)}/edits.json`;
  const answer = await postKeyed(shop, path, key, editBody(changes));
  const after = lineStatesOf(isObject(answer.body) ? answer.body.order : undefined);
  if (!after) throw unexpectedAnswer(PLATFORM, answer.status, 'no order with its lines');
  return { edited: true, lines: after };
}

export const storePlatformAAfterSale: AfterSaleCalls = {
  async editOrderQuantities(shop, orderId, lines, idempotencyKey) {
    try {
      return await editOnce(shop, orderId, lines, idempotencyKey);
    } catch (error) {
      // Refused: the supplier shipped between the read and the edit. Read again: what shipped now stays.
      if (!refused(error)) throw error;
      return editOnce(shop, orderId, lines, `${idempotencyKey}:after-refusal`);
    }
  },

  async createReturn(shop, orderId, request, idempotencyKey) {
    const path = `${orderPath(orderId)}/returns.json`;
    const answer = await postKeyed(shop, path, idempotencyKey, returnBody(request));
    const made = platformReturnOf(isObject(answer.body) ? answer.body.return : undefined);
    if (!made) throw unexpectedAnswer(PLATFORM, answer.status, 'no return with an id and a status');
    return made;
  },

  async findReturn(shop, orderId, marker) {
    const path = `${orderPath(orderId)}/returns.json`;
    const answer = await callPlatform({ platform: PLATFORM, shop, method: 'GET', path, headers: token(shop) });
    const returns = isObject(answer.body) ? answer.body.returns : undefined;
    if (!Array.isArray(returns)) throw unexpectedAnswer(PLATFORM, answer.status, 'no list of returns');
    return returnWithMarker(returns, marker);
  },

  async cancelReturn(shop, _orderId, returnId, idempotencyKey) {
    const id = /^\d+$/.test(returnId) ? returnId : (/\/(\d+)$/.exec(returnId)?.[1] ?? returnId);
    const path = `${API}/returns/${encodeURIComponent(id)}/cancel.json`;
    const answer = await postKeyed(shop, path, idempotencyKey, {});
    const cancelled = platformReturnOf(isObject(answer.body) ? answer.body.return : undefined);
    if (!cancelled || !sameReturnId(cancelled.id, returnId)) {
      throw unexpectedAnswer(PLATFORM, answer.status, 'no return with its id and status');
    }
    return cancelled;
  },

  async readOrderAfterSale(shop, orderId): Promise<ChangedOrder | null> {
    const order = await orderOf(shop, orderId);
    if (!order) return null;
    const changed = changedOrderOf(order);
    if (!changed) throw unexpectedAnswer(PLATFORM, 200, 'an order without an id or updated_at');
    return changed;
  },
};
