/**
 * CONTRACT §15 in the REST shape storeplatform_a and custom share (PLATFORM-API.md, "Refunds and returns"):
 * a supplier order's lines as they stand after the sale, the absolute targets an edit sends, the body of a
 * return and a return read back. Pure functions: the adapters' after-sale modules make the calls.
 */
import { PlatformError } from './http.js';
import type { Platform, PlatformReturn, QuantityTarget, ReturnRequest, SupplierLineState } from './port.js';
import { idText, isObject, objects, restId } from './rest.js';

type Json = Record<string, unknown>;

const count = (value: unknown): number | undefined => {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value !== '' ? Number(value) : Number.NaN;
  return Number.isInteger(n) ? n : undefined;
};

/** Units of each line shipped in the order's fulfillments that are not cancelled. */
const shippedByLine = (order: Json): Map<string, number> => {
  const shipped = new Map<string, number>();
  for (const fulfillment of objects(order.fulfillments)) {
    if (fulfillment.status === 'cancelled' || fulfillment.status === 'canceled') continue;
    for (const line of objects(fulfillment.line_items)) {
      const id = idText(line.id);
      if (id !== undefined) shipped.set(id, (shipped.get(id) ?? 0) + (count(line.quantity) ?? 0));
    }
  }
  return shipped;
};

/**
 * Every line of a REST order as it stands: `quantity` as placed, `current_quantity` (the placed quantity when
 * the answer has none), and the units shipped (its fulfillments', or `fulfilled_quantity` when it lists none).
 * Undefined when the answer is not an order whose lines have ids and quantities.
 */
export const lineStatesOf = (order: unknown): SupplierLineState[] | undefined => {
  if (!isObject(order) || !Array.isArray(order.line_items)) return undefined;
  const shipped = Array.isArray(order.fulfillments) ? shippedByLine(order) : undefined;
  const states: SupplierLineState[] = [];
  for (const line of objects(order.line_items)) {
    const id = idText(line.id);
    const quantity = count(line.quantity);
    if (id === undefined || quantity === undefined) return undefined;
    const currentQuantity = count(line.current_quantity) ?? quantity;
    const fulfilledQuantity = shipped?.get(id) ?? count(line.fulfilled_quantity) ?? 0;
    states.push({ id, quantity, currentQuantity, fulfilledQuantity });
  }
  return states;
};

/**
 * What an edit sends: each target raised to what has shipped (those units cannot leave), kept only where the
 * line holds more than that (a line at or below its target is already done: a retry removes nothing twice).
 * A target naming no line of the order is a refusal of the caller's (422), as the platform would answer.
 */
export const editTargets = (platform: Platform, states: SupplierLineState[], targets: QuantityTarget[]) =>
  targets.flatMap((target) => {
    const line = states.find((state) => state.id === target.id);
    if (!line) {
      throw new PlatformError({
        platform,
        status: 422,
        retryable: false,
        message: `${platform} answered 422: line item ${target.id} is not on the order`,
      });
    }
    const quantity = Math.max(target.quantity, line.fulfilledQuantity, 0);
    return line.currentQuantity > quantity ? [{ id: target.id, quantity }] : [];
  });

/** The REST body of an edit: `{"line_items": [{"id", "quantity"}]}`, ids written exactly. */
export const editBody = (targets: QuantityTarget[]) => ({
  line_items: targets.map((target) => ({ id: restId(target.id), quantity: target.quantity })),
});

/** The REST body of a return: each line with its reason and the marker as its note. */
export const returnBody = (request: ReturnRequest) => ({
  return: {
    line_items: request.lines.map((line) => ({
      line_item_id: restId(line.lineItemId),
      quantity: line.quantity,
      reason: line.reason,
      note: request.marker,
    })),
  },
});

/** A REST return (`{"id", "status", "line_items": [...]}`) as `PlatformReturn`; undefined without id or status. */
export const platformReturnOf = (value: unknown): PlatformReturn | undefined => {
  if (!isObject(value)) return undefined;
  const id = idText(value.id);
  if (id === undefined || typeof value.status !== 'string') return undefined;
  const lines = objects(value.line_items ?? value.return_line_items).map((line) => ({
    lineItemId: idText(line.line_item_id) ?? '',
    fulfillmentLineItemId: idText(line.fulfillment_line_item_id) ?? null,
    quantity: count(line.quantity) ?? 0,
    reason: typeof (line.reason ?? line.return_reason) === 'string' ? String(line.reason ?? line.return_reason) : null,
  }));
  return { id, status: value.status.toLowerCase(), lines };
};

/** Statuses of a return that no longer stands: a lookup by marker passes over them. */
export const GONE_RETURN_STATUSES = new Set(['canceled', 'cancelled', 'declined']);

/** The return of a REST list (`{"returns": [...]}`) whose lines carry the marker and that still stands. */
export const returnWithMarker = (returns: unknown, marker: string): PlatformReturn | null => {
  const found = objects(returns).find(
    (entry) =>
      !GONE_RETURN_STATUSES.has(String(entry.status).toLowerCase()) &&
      objects(entry.line_items ?? entry.return_line_items).some((line) =>
        String(line.note ?? line.return_reason_note ?? '').includes(marker),
      ),
  );
  return found ? (platformReturnOf(found) ?? null) : null;
};
