import * as v from 'valibot';
import { MAX_ORDER_ID_LENGTH, MAX_PRICE_LENGTH, MAX_QUANTITY } from '../domain/orders.js';

/**
 * The documented shape of `orders/create` (CONTRACT.md §5) for the OpenAPI document: the fields the
 * service reads and their rules; every other field is kept and passed on. The webhook itself reads
 * the raw text with shared/domain/orders.ts, which applies these rules to exact values (a
 * valibot schema sees numbers after `JSON.parse` has rounded them); the limits are shared constants.
 */
const Money = v.pipe(
  v.string(),
  v.regex(/^\d+(\.\d+)?$/),
  v.maxLength(MAX_PRICE_LENGTH),
  v.description('a non-negative decimal string'),
);

/** A field the service does not check: it reaches the supplier exactly as sent. */
const passedOn = v.optional(v.pipe(v.unknown(), v.description('passed on to the supplier exactly as sent')));

export const OrderPayload = v.looseObject({
  id: v.union([
    v.pipe(v.number(), v.integer(), v.minValue(0), v.description('any number of digits, kept exactly')),
    v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_ORDER_ID_LENGTH)),
  ]),
  currency: v.pipe(v.string(), v.regex(/^[A-Z]{3}$/), v.description('an ISO 4217 code')),
  email: passedOn,
  line_items: v.array(
    v.looseObject({
      quantity: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_QUANTITY)),
      price: Money,
      vendor: v.optional(v.nullable(v.string())),
      title: passedOn,
      sku: passedOn,
      variant_id: passedOn,
    }),
  ),
  shipping_lines: v.optional(v.nullable(v.array(v.looseObject({ title: passedOn, price: Money })))),
  shipping_address: passedOn,
});
