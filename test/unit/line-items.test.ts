import { buildSupplierOrder, readResellerOrder, stringifyExact } from '../../shared/domain/orders.js';
import { itemsOfVendorTag, routeLineItems } from '../../shared/domain/routing.js';

/**
 * CONTRACT.md §10.1: the reseller's line items end to end. The payload is shaped as Shopify's
 * `orders/create` sends it: a line with an engraving in `properties`, a `variant_title`, the
 * order's `note` and `note_attributes`, and a gift card the reseller's own shop issues.
 */
const raw = `{"id":820982911946154508,"currency":"USD","note":"Leave at the back door",
"note_attributes":[{"name":"gift-wrap","value":"yes"}],
"line_items":[
 {"id":466157049,"variant_id":39072856,"title":"IPod Nano - 8gb","variant_title":"green","sku":"IPOD2008GREEN",
  "quantity":1,"price":"199.00","vendor":"Acme","gift_card":false,
  "properties":[{"name":"Engraving","value":"Happy Birthday"}]},
 {"id":518995019,"title":"Gift card","quantity":1,"price":"50.00","vendor":"Acme","gift_card":true,"properties":[]},
 {"id":"703073504","title":"Case","quantity":2,"price":"10.00","vendor":"Acme"},
 {"title":"No id","quantity":1,"price":"1.00","vendor":"Acme","variant_title":null}
]}`;

const read = (text: string) => {
  const reading = readResellerOrder(text);
  if (!reading.ok) throw new Error(reading.message);
  return reading.order;
};

/** The supplier order an adapter sends for every item of `order`, at the reseller's prices, as JSON. */
const sentFor = (order: ReturnType<typeof read>) =>
  JSON.parse(
    stringifyExact(
      buildSupplierOrder({
        resellerShopDomain: 'reseller.myshopify.com',
        syncJobId: 'sj_1',
        order,
        lineItems: order.lineItems,
        pricing: { type: 'percentage', value: 0 },
      }),
    ),
  );

describe('Line items: reading the reseller order', () => {
  it('keeps each line item id as its digits stand, a string id as sent, and null when absent', () => {
    // Act
    const order = read(raw);

    // Assess
    expect(order.lineItems.map((item) => item.id)).toEqual(['466157049', '518995019', '703073504', null]);
  });

  it('keeps an id past 2^53 with every digit', () => {
    // Act
    const order = read('{"id":1,"currency":"USD","line_items":[{"id":9007199254740993,"quantity":1,"price":"1"}]}');

    // Assess
    expect(order.lineItems[0].id).toBe('9007199254740993');
  });

  it('marks a line with "gift_card": true, and only that one', () => {
    // Act
    const order = read(raw);

    // Assess
    expect(order.lineItems.map((item) => item.giftCard)).toEqual([false, true, false, false]);
  });
});

describe('Line items: routing', () => {
  it('never routes a gift card to a supplier, even one whose tag its vendor matches', () => {
    // Arrange
    const order = read(raw);

    // Act
    const groups = routeLineItems(order.lineItems, new Map([['Acme', 'sst_a']]));

    // Assess
    expect(groups).toHaveLength(1);
    expect(groups[0].lineItems.map((item) => item.id)).toEqual(['466157049', '703073504', null]);
  });

  it('finds again, for the worker, exactly the items the webhook routed to the job', () => {
    // Arrange
    const order = read(raw);
    const [group] = routeLineItems(order.lineItems, new Map([['Acme', 'sst_a']]));

    // Act
    const items = itemsOfVendorTag(order.lineItems, group.vendorTag);

    // Assess
    expect(items).toEqual(group.lineItems);
    expect(itemsOfVendorTag(order.lineItems, null).some((item) => item.giftCard)).toBe(false);
  });
});

describe('Line items: the supplier order', () => {
  it('carries properties, variant_title, note and note_attributes exactly as sent', () => {
    // Arrange
    const order = read(raw);

    // Act
    const text = stringifyExact(
      buildSupplierOrder({
        resellerShopDomain: 'reseller.myshopify.com',
        syncJobId: 'sj_1',
        order,
        lineItems: itemsOfVendorTag(order.lineItems, 'Acme'),
        pricing: { type: 'percentage', value: 0 },
      }),
    );

    // Assess
    const sent = JSON.parse(text);
    expect(text).toContain('"properties":[{"name":"Engraving","value":"Happy Birthday"}]');
    expect(sent.note).toBe('Leave at the back door');
    // The reseller's own attributes as sent, then the reseller order's name (CONTRACT.md §12.5).
    expect(sent.note_attributes).toEqual([
      { name: 'gift-wrap', value: 'yes' },
      { name: 'reseller_order', value: '820982911946154508' },
    ]);
    expect(sent.line_items.map((line: { variant_title?: unknown }) => line.variant_title)).toEqual([
      'green',
      undefined,
      undefined,
    ]);
    expect(sent.line_items.map((line: { title: string }) => line.title)).toEqual(['IPod Nano - 8gb', 'Case', 'No id']);
  });

  it('sends no note, properties or variant_title the reseller order did not have; note_attributes names it', () => {
    // Arrange
    const order = read('{"id":1,"currency":"USD","line_items":[{"quantity":1,"price":"1.00","vendor":"Acme"}]}');

    // Act
    const sent = sentFor(order);

    // Assess
    expect(sent).not.toHaveProperty('note');
    expect(sent.note_attributes).toEqual([{ name: 'reseller_order', value: '1' }]);
    expect(sent.line_items[0]).not.toHaveProperty('properties');
    expect(sent.line_items[0]).not.toHaveProperty('variant_title');
  });
});

describe('Line items: values of another kind', () => {
  it('passes on no note, note_attributes, properties or variant_title that is not of the platform’s type', () => {
    // Arrange: a note 10,000 levels deep, an object for attributes, a number for a variant title.
    const deep = `${'['.repeat(10_000)}1${']'.repeat(10_000)}`;
    const order = read(
      `{"id":1,"currency":"USD","note":${deep},"note_attributes":{"a":1},` +
        '"line_items":[{"quantity":1,"price":"1.00","vendor":"Acme","variant_title":7,"properties":"x"}]}',
    );

    // Act
    const sent = sentFor(order);

    // Assess: of the attributes, only the reseller order's name (CONTRACT.md §12.5).
    expect(sent).not.toHaveProperty('note');
    expect(sent.note_attributes).toEqual([{ name: 'reseller_order', value: '1' }]);
    expect(sent.line_items[0]).not.toHaveProperty('variant_title');
    expect(sent.line_items[0]).not.toHaveProperty('properties');
  });
});
