import fc from 'fast-check';

/**
 * fast-check generators for the fuzz suite (fuzz.test.ts): webhook payloads that are valid JSON but
 * odd, API bodies, path ids and query strings. Payloads are generated as JSON *text*, because the
 * numbers worth trying (`1e400`, 21 digits, `-0.0`) cannot be held by a JavaScript number.
 */

/** Numbers as JSON text: huge, tiny, negative, exponents, more digits than a double holds. */
export const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc.constantFrom('1e400', '-1e400', '1E-400', '-0', '-0.0', '0.000000000000000000001', '9007199254740993', '1e20'),
  fc.tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: -500, max: 500 })).map(([m, e]) => `${m}e${e}`),
);

/** Keys with unicode, emoji, the empty key and prototype names. */
export const keyText = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.constantFrom('', '__proto__', 'constructor', 'toString', 'id', 'line_items', '\u0000', '🙂', 'ключ'),
);

/** Any JSON value as text, with odd numbers and keys, at a bounded depth. */
export const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberText,
    fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => JSON.stringify(s)),
    fc.constantFrom('true', 'false', 'null'),
    fc.array(tie('value'), { maxLength: 5 }).map((items) => `[${items.join(',')}]`),
    fc
      .array(fc.tuple(keyText, tie('value')), { maxLength: 5 })
      .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
})).value;

/** A deep nest of arrays or objects, up to 20,000 levels. */
export const deepText = fc
  .tuple(fc.integer({ min: 30, max: 20_000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
  );

/** Mostly what the contract allows, sometimes what it does not, each as JSON text. */
const quantityText = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 1_000_000 }).map(String) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('0', '-1', '1000001', '1e20', '9007199254740992', '2.5', '2.0', '1e2', '"2"', 'null'),
  },
  { weight: 1, arbitrary: numberText },
);
const priceText = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^\d{1,7}(\.\d{1,4})?$/).map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: fc.constantFrom('"-1.00"', '"1e3"', '" 1"', '""', '13.00', 'null', '"13,00"') },
  { weight: 1, arbitrary: numberText },
);
const vendorText = (tags: string[]) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...tags).map((t) => JSON.stringify(t)) },
    { weight: 2, arbitrary: fc.string({ maxLength: 8 }).map((s) => JSON.stringify(s)) },
    { weight: 1, arbitrary: fc.constantFrom('null', '7', '{}') },
  );

const objectText = (members: [string, string][]) =>
  `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;

/** Extra members for any object: odd keys with odd values, sometimes nested deep. */
const extras = fc.array(
  fc.tuple(keyText, fc.oneof({ weight: 5, arbitrary: jsonText }, { weight: 1, arbitrary: deepText })),
  {
    maxLength: 3,
  },
);

const lineItemText = (tags: string[]) =>
  fc
    .record({
      quantity: quantityText,
      price: priceText,
      vendor: vendorText(tags),
      variant_id: numberText,
      title: fc.oneof(
        fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => JSON.stringify(s)),
        jsonText,
      ),
      extra: extras,
    })
    .map(({ extra, ...fields }) => objectText([...Object.entries(fields), ...extra]));

/** The order id: as a number (any number of digits) or a string; unique through the caller's counter. */
const idText = (unique: number) =>
  fc.oneof(
    fc.bigInt({ min: 0n, max: 10n ** 30n }).map((n) => String(n * 10n ** 7n + 10n ** 6n + BigInt(unique))),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).map((s) => JSON.stringify(`${s}-${unique}`)),
  );

/** An `orders/create` body: valid but odd, with the service's own rules sometimes broken. */
export const orderText = (tags: string[], unique: () => number) =>
  orderWithId(
    tags,
    fc.constant(null).chain(() => idText(unique())),
  );

/** An order body with the id `id` gives, and any other members first in `before`. */
const orderWithId = (tags: string[], id: fc.Arbitrary<string>, before: Record<string, fc.Arbitrary<string>> = {}) =>
  fc
    .record({
      id,
      ...before,
      currency: fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom('"USD"', '"HUF"', '"JPY"', '"IQD"', '"KWD"', '"CLF"') },
        { weight: 1, arbitrary: fc.constantFrom('"ZZZ"', '"usd"', '"US"', '840', 'null') },
      ),
      email: jsonText,
      line_items: fc.array(lineItemText(tags), { maxLength: 12 }).map((items) => `[${items.join(',')}]`),
      shipping_lines: fc.oneof(
        fc.constant('null'),
        fc
          .array(fc.record({ title: jsonText, price: priceText }), { maxLength: 3 })
          .map((lines) => `[${lines.map((l) => objectText(Object.entries(l))).join(',')}]`),
      ),
      shipping_address: fc.oneof(jsonText, deepText),
      extra: extras,
    })
    .map(({ extra, ...fields }) => objectText([...Object.entries(fields), ...extra]));

/** API bodies: objects that resemble a store, with fields of every type, or any JSON at all. */
export const storeBody = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.record(
    {
      name: fc.oneof(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.jsonValue({ maxDepth: 1 })),
      platform: fc.oneof(fc.constantFrom('storeplatform_a', 'storeplatform_b', 'custom'), fc.string()),
      shopDomain: fc.oneof(fc.domain(), fc.string({ unit: 'grapheme' }), fc.constant('x.myshopify.com')),
      accessToken: fc.oneof(fc.string({ unit: 'grapheme', maxLength: 3000 }), fc.jsonValue({ maxDepth: 1 })),
      webhookSecret: fc.string({ unit: 'grapheme', maxLength: 50 }),
      vendorTag: fc.string({ unit: 'grapheme', maxLength: 300 }),
      pricingMode: fc.constantFrom('percentage', 'field_rules', 'other'),
      pricingConfig: fc.oneof(
        fc.record({ type: fc.constant('percentage'), value: fc.double() }),
        fc.record({ type: fc.constant('field_rules'), productCost: fc.double(), shippingCost: fc.double() }),
        fc.jsonValue({ maxDepth: 2 }),
      ),
    },
    { requiredKeys: [] },
  ),
);

/** Path segments: ids of every shape, unicode, escapes, very long ones. */
export const pathId = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).map(encodeURIComponent),
  fc.stringMatching(/^(rst|sst|sj|aud|key)_[0-9a-z]{0,30}$/),
  fc.integer({ min: 1, max: 4_000 }).map((n) => 'a'.repeat(n)),
  fc.constantFrom('%00', '%ZZ', '%2F', '..', '%F0%9F%99%82', 'sj_%00%00'),
);

/** Query strings: known and unknown parameters with odd values. */
export const queryString = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom('limit', 'starting_after', 'status', 'reseller_store_id', 'action', 'resource_id'),
        fc.string({ maxLength: 10 }),
      ),
      fc.oneof(fc.string({ unit: 'grapheme', maxLength: 30 }), pathId, fc.integer().map(String)),
    ),
    { maxLength: 4 },
  )
  .map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'));

/** A timestamp as a platform sends it, or not: ISO 8601 (with offsets), other text, numbers, null. */
const timeText = fc.oneof(
  { weight: 4, arbitrary: fc.date({ noInvalidDate: true }).map((d) => JSON.stringify(d.toISOString())) },
  { weight: 1, arbitrary: fc.constantFrom('"2026-11-25T10:00:00+05:30"', '"yesterday"', '""', '0', 'null', '"9999"') },
  { weight: 1, arbitrary: jsonText },
);

/**
 * An `orders/cancelled` body of one of `ids` (orders the service knows) or of another: the reason and
 * the time valid or odd.
 */
export const cancellationText = (ids: string[]) =>
  fc
    .record({
      id: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...ids) }, { weight: 1, arbitrary: numberText }),
      cancel_reason: fc.oneof(fc.constantFrom('"customer"', '"fraud"', 'null'), jsonText),
      cancelled_at: timeText,
      extra: extras,
    })
    .map(({ extra, ...fields }) => objectText([...Object.entries(fields), ...extra]));

/** An `orders/updated` body: an odd order (as orderText) of a known id, with an odd `updated_at`. */
export const editText = (tags: string[], ids: string[]) =>
  orderWithId(tags, fc.constantFrom(...ids), { updated_at: timeText });

/** A `fulfillments/create` or `/update` body: ids, status, tracking and lines valid or odd. */
export const fulfillmentText = (orderIds: string[]) =>
  fc
    .record({
      id: fc.oneof(fc.integer({ min: 1, max: 50 }).map(String), numberText, jsonText),
      order_id: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...orderIds) }, { weight: 1, arbitrary: numberText }),
      status: fc.oneof(fc.constantFrom('"success"', '"cancelled"', '"error"', '"pending"', 'null'), jsonText),
      tracking_company: jsonText,
      tracking_number: fc.oneof(
        fc.string({ maxLength: 30 }).map((s) => JSON.stringify(s)),
        jsonText,
      ),
      tracking_numbers: jsonText,
      tracking_urls: jsonText,
      updated_at: timeText,
      line_items: fc.oneof(
        fc
          .array(
            fc
              .record({ id: fc.oneof(fc.integer({ min: 1, max: 5 }).map(String), numberText), quantity: quantityText })
              .map((line) => objectText(Object.entries(line))),
            { maxLength: 4 },
          )
          .map((lines) => `[${lines.join(',')}]`),
        jsonText,
      ),
      extra: extras,
    })
    .map(({ extra, ...fields }) => objectText([...Object.entries(fields), ...extra]));
