import { readFileSync } from 'node:fs';
import {
  PERSONAL_ORDER_FIELDS,
  personalFieldsOf,
  personalStringsOf,
  redactOrderText,
  scrubText,
} from '../../shared/domain/personal-data.js';

const fixture = JSON.parse(readFileSync(`${__dirname}/../fixtures/shopify/order_with_properties.json`, 'utf8')).order;
const PERSONAL = ['bob.norman@hostmail.com', 'Chestnut Street 92', 'Louisville', '555-625-1199', 'Norman', '40202'];

describe('personal data in a reseller order (CONTRACT.md §13)', () => {
  it('erases every personal member of Shopify’s own order to null and keeps everything else as sent', () => {
    const text = JSON.stringify(fixture);

    const redacted = redactOrderText(text);

    for (const value of PERSONAL) expect(redacted).not.toContain(value);
    const parsed = JSON.parse(redacted);
    for (const field of PERSONAL_ORDER_FIELDS) if (field in fixture) expect(parsed[field]).toBeNull();
    expect(parsed.line_items).toEqual(fixture.line_items);
    expect(parsed.shipping_lines).toEqual(fixture.shipping_lines);
    expect(parsed.total_price).toBe(fixture.total_price);
    expect(parsed.id).toBe(fixture.id);
    expect(Object.keys(parsed)).toEqual(Object.keys(fixture));
  });

  it('keeps the other members’ exact text (a number past 2^53, a deep value) and adds no member', () => {
    const text =
      '{"id":12345678901234567890123,"email":"a@b.example","line_items":[{"id":9007199254740993,"price":"1.0",' +
      '"destination_location":{"address1":"1 Road"}}],"x":[[[[1e400]]]]}';

    const redacted = redactOrderText(text);

    expect(redacted).toBe(
      '{"id":12345678901234567890123,"email":null,"line_items":[{"id":9007199254740993,"price":"1.0",' +
        '"destination_location":null}],"x":[[[[1e400]]]]}',
    );
    expect(redactOrderText(redacted)).toBe(redacted);
  });

  it('names the personal members an order holds with a value, never their values', () => {
    expect(personalFieldsOf(JSON.stringify(fixture))).toEqual([
      'email',
      'customer',
      'billing_address',
      'shipping_address',
      'note',
      'note_attributes',
      'client_details',
      'payment_details',
    ]);
    expect(personalFieldsOf(redactOrderText(JSON.stringify(fixture)))).toEqual([]);
    expect(personalFieldsOf('not json')).toEqual([]);
  });

  it('finds the strings a message could have quoted, and scrubs them', () => {
    const strings = personalStringsOf(JSON.stringify(fixture), ['{"address1":"9 Elm Road"}']);

    expect(strings).toEqual(expect.arrayContaining([...PERSONAL, '9 Elm Road']));
    expect(strings).not.toContain('US');
    const reason = 'Shopify refused: shipping_address.zip 40202 is not in Kentucky for Bob Norman';
    expect(scrubText(reason, strings)).toBe(
      'Shopify refused: shipping_address.zip [redacted] is not in [redacted] for [redacted]',
    );
  });

  it('walks a personal member nested far deeper than a recursive walk could', () => {
    const deep = `${'['.repeat(100_000)}"secret street"${']'.repeat(100_000)}`;
    expect(personalStringsOf(`{"shipping_address":${deep}}`)).toEqual(['secret street']);
    expect(redactOrderText(`{"shipping_address":${deep},"id":1}`)).toBe('{"shipping_address":null,"id":1}');
  });
});
