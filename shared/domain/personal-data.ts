/**
 * Shoppers' personal data in a reseller order (CONTRACT.md §13): which members of the stored order
 * hold it, the order with them erased, and the strings they held (to scrub a platform's reason that
 * quoted one). The order is read and written back as text (`JsonText`): every other value keeps its
 * exact bytes, so the lines, prices and ids a redacted order still answers with stay what was signed.
 */
import { elementsOf, JsonText, kindOf, membersOf, parseDocument, stringifyExact, textOf } from './orders.js';

/**
 * The order's members that hold personal data: the shopper's contact details, names and addresses
 * (on their own and inside `customer`), what the shopper wrote (`note`, `note_attributes`), and what
 * the checkout recorded of the shopper's browser and card (`browser_ip`, `client_details`,
 * `payment_details`). Ids, lines, prices, taxes and shipping lines are not personal and stay.
 */
export const PERSONAL_ORDER_FIELDS = [
  'email',
  'contact_email',
  'phone',
  'customer',
  'billing_address',
  'shipping_address',
  'note',
  'note_attributes',
  'browser_ip',
  'client_details',
  'payment_details',
] as const;

/** A line item's members that hold personal data: where it ships (Shopify's REST `destination_location`). */
export const PERSONAL_LINE_FIELDS = ['destination_location'] as const;

const isSet = (text: string) => text !== 'null';

/**
 * The personal members the order holds with a value (names, never values), in the order of
 * PERSONAL_ORDER_FIELDS; a line's personal member is named `line_items.<field>`. Empty for text that
 * is not a JSON object.
 */
export const personalFieldsOf = (orderText: string): string[] => {
  const root = safeRoot(orderText);
  if (!root) return [];
  const members = membersOf(root);
  const fields: string[] = PERSONAL_ORDER_FIELDS.filter((field) => {
    const span = members.get(field);
    return span !== undefined && isSet(textOf(span));
  });
  const lines = members.get('line_items');
  if (lines && kindOf(lines) === 'array') {
    for (const field of PERSONAL_LINE_FIELDS) {
      const held = elementsOf(lines).some((line) => {
        if (kindOf(line) !== 'object') return false;
        const span = membersOf(line).get(field);
        return span !== undefined && isSet(textOf(span));
      });
      if (held) fields.push(`line_items.${field}`);
    }
  }
  return fields;
};

const safeRoot = (text: string) => {
  try {
    const root = parseDocument(text);
    return kindOf(root) === 'object' ? root : undefined;
  } catch {
    return undefined;
  }
};

/** An object's members as kept text, with `erased` members set to null. */
const withErased = (span: ReturnType<typeof parseDocument>, erased: readonly string[]) =>
  Object.fromEntries(
    [...membersOf(span)].map(([key, value]) => [key, erased.includes(key) ? null : new JsonText(textOf(value))]),
  );

/**
 * The order with every personal member (PERSONAL_ORDER_FIELDS, and each line's
 * PERSONAL_LINE_FIELDS) set to null, every other member kept exactly as sent. A member the order
 * does not have is not added. Text that is not a JSON object is returned unchanged.
 */
export const redactOrderText = (orderText: string): string => {
  const root = safeRoot(orderText);
  if (!root) return orderText;
  const top = Object.fromEntries(
    [...membersOf(root)].map(([key, value]): [string, unknown] => {
      if ((PERSONAL_ORDER_FIELDS as readonly string[]).includes(key)) return [key, null];
      if (key === 'line_items' && kindOf(value) === 'array')
        return [
          key,
          elementsOf(value).map((line) =>
            kindOf(line) === 'object' ? withErased(line, PERSONAL_LINE_FIELDS) : new JsonText(textOf(line)),
          ),
        ];
      return [key, new JsonText(textOf(value))];
    }),
  );
  return stringifyExact(top);
};

/** The shortest string worth scrubbing from a message: shorter ones (a country code, `"1"`) name no one. */
export const MIN_SCRUBBED_LENGTH = 4;

/**
 * Every string and number held by the order's personal members (and each line's), each at least
 * MIN_SCRUBBED_LENGTH characters, longest first: what a message quoting the order could have
 * copied. Walked without recursion (a member may nest to any depth).
 */
export const personalStringsOf = (orderText: string, extra: readonly string[] = []): string[] => {
  const found = new Set<string>();
  for (const text of [...personalTextsOf(orderText), ...extra]) collectStrings(text, found);
  return [...found].sort((a, b) => b.length - a.length);
};

/** The text of each personal member the order holds, its lines' included. */
const personalTextsOf = (orderText: string): string[] => {
  const root = safeRoot(orderText);
  if (!root) return [];
  const members = membersOf(root);
  const texts = PERSONAL_ORDER_FIELDS.flatMap((field) => {
    const span = members.get(field);
    return span ? [textOf(span)] : [];
  });
  const lines = members.get('line_items');
  if (!lines || kindOf(lines) !== 'array') return texts;
  for (const line of elementsOf(lines).filter((element) => kindOf(element) === 'object')) {
    const lineMembers = membersOf(line);
    for (const field of PERSONAL_LINE_FIELDS) {
      const span = lineMembers.get(field);
      if (span) texts.push(textOf(span));
    }
  }
  return texts;
};

/** Adds every string and number of a JSON text (long enough to name someone) to `found`, without recursion. */
const collectStrings = (text: string, found: Set<string>) => {
  const stack: unknown[] = [JSON.parse(text)];
  while (stack.length) {
    const value = stack.pop();
    if (typeof value === 'string' || typeof value === 'number') {
      const s = String(value);
      if (s.length >= MIN_SCRUBBED_LENGTH) found.add(s);
    } else if (Array.isArray(value)) stack.push(...value);
    else if (value && typeof value === 'object') stack.push(...Object.values(value));
  }
};

/** The text with every one of `strings` replaced by `[redacted]`. */
export const scrubText = (text: string, strings: readonly string[]): string => {
  let result = text;
  for (const s of strings) if (result.includes(s)) result = result.split(s).join('[redacted]');
  return result;
};
