/**
 * custom after the sale (CONTRACT §15, PLATFORM-API.md "Refunds and returns"): the supplier's own endpoint takes
 * signed pushes, `POST {base}/reseller/orders/{id}/edits` (absolute quantities) and `…/returns`, with the
 * storeplatform_a bodies and an idempotency key. It has no read of an order or its returns and no cancel of a
 * return: those are `unsupported` (its webhooks and the poll tell the rest).
 */
import { unexpectedAnswer } from './http.js';
import type { AfterSaleCalls, ShopConnection } from './port.js';
import { isObject } from './rest.js';
import { editBody, lineStatesOf, platformReturnOf, returnBody } from './rest-after-sale.js';

const PLATFORM = 'custom';

/** What custom's signed push is (custom.ts lends it, so the two never sign differently). */
export type SignedPush = (
  shop: ShopConnection,
  path: string,
  value: unknown,
  idempotencyKey: string,
) => Promise<{ status: number; body: unknown }>;

const orderPath = (orderId: string) => `/reseller/orders/${encodeURIComponent(orderId)}`;

/** The answer's object under `key`, or the answer itself (a custom endpoint may answer it bare). */
const wrapped = (body: unknown, key: string) => (isObject(body) && isObject(body[key]) ? body[key] : body);

export const customAfterSale = (push: SignedPush): AfterSaleCalls => ({
  // No read first: the targets go as they are (absolute, so a retry removes nothing twice); the endpoint
  // refuses (422) units it has shipped.
  async editOrderQuantities(shop, orderId, lines, idempotencyKey) {
    const targets = lines.map((line) => ({ id: line.id, quantity: Math.max(0, line.quantity) }));
    const answer = await push(shop, `${orderPath(orderId)}/edits`, editBody(targets), idempotencyKey);
    const states = lineStatesOf(wrapped(answer.body, 'order'));
    if (!states) throw unexpectedAnswer(PLATFORM, answer.status, 'no order with its lines');
    return { edited: true, lines: states };
  },

  async createReturn(shop, orderId, request, idempotencyKey) {
    const answer = await push(shop, `${orderPath(orderId)}/returns`, returnBody(request), idempotencyKey);
    const made = platformReturnOf(wrapped(answer.body, 'return'));
    if (!made) throw unexpectedAnswer(PLATFORM, answer.status, 'no return with an id and a status');
    return made;
  },

  findReturn: async () => 'unsupported',
  cancelReturn: async () => 'unsupported',
  readOrderAfterSale: async () => 'unsupported',
});
