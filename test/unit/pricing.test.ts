import {
  currencyExponent,
  decimalPlaces,
  formatMinorUnits,
  InvalidAmountError,
  type PricingConfig,
  supplierShippingPrice,
  supplierUnitPrice,
  toMinorUnits,
  UnknownCurrencyError,
} from '../../shared/domain/money.js';
import { buildSupplierOrder, readResellerOrder, stringifyExact } from '../../shared/domain/orders.js';

const percentage = (value: number): PricingConfig => ({ type: 'percentage', value });
const fieldRules = (productCost: number, shippingCost: number): PricingConfig => ({
  type: 'field_rules',
  productCost,
  shippingCost,
});

describe('Money: currency exponents', () => {
  it.each([
    ['USD', 2],
    ['EUR', 2],
    ['JPY', 0],
    ['KRW', 0],
    ['BHD', 3],
    ['KWD', 3],
    ['HUF', 2],
    ['IDR', 2],
    ['PKR', 2],
    ['COP', 2],
    ['IQD', 3],
    ['CLF', 4],
  ])('uses %s with %i decimals', (currency, exponent) => {
    // Act
    const result = currencyExponent(currency);

    // Assess
    expect(result).toBe(exponent);
  });

  it.each(['US', '', 'usd', 'XYZ'])('refuses %j: a code outside ISO 4217 is never given a guessed exponent', (code) => {
    expect(() => currencyExponent(code)).toThrow(UnknownCurrencyError);
  });

  it('refuses the codes ISO 4217 gives no minor unit (gold, SDR, testing), naming them', () => {
    expect(() => currencyExponent('XAU')).toThrow(/XAU.*no minor unit/);
    expect(() => currencyExponent('XTS')).toThrow(UnknownCurrencyError);
  });

  it('formats minor units with exactly the exponent decimals', () => {
    expect(formatMinorUnits(5n, 2)).toBe('0.05');
    expect(formatMinorUnits(1000n, 0)).toBe('1000');
    expect(formatMinorUnits(769n, 3)).toBe('0.769');
    expect(formatMinorUnits(-3n, 2)).toBe('0.00');
  });

  it('parses amounts exactly, without floating point, at any size', () => {
    expect(toMinorUnits('123456789012345678.99', 2)).toBe(12345678901234567899n);
    expect(toMinorUnits('0.5', 2)).toBe(50n);
    expect(toMinorUnits('13', 2)).toBe(1300n);
  });
});

describe('Pricing: percentage mode', () => {
  it('removes a 30% markup from a unit price (CONTRACT §7: 13.00 → 10.00)', () => {
    // Act
    const result = supplierUnitPrice('13.00', 'USD', percentage(30));

    // Assess
    expect(result).toBe('10.00');
  });

  it('leaves shipping unchanged, re-formatted to the currency exponent', () => {
    expect(supplierShippingPrice('5.00', 'USD', percentage(30))).toBe('5.00');
    expect(supplierShippingPrice('5', 'USD', percentage(30))).toBe('5.00');
    expect(supplierShippingPrice('0.5', 'USD', percentage(30))).toBe('0.50');
  });

  it('rounds to the nearest minor unit (1.00 at 30% is 0.769… → 0.77)', () => {
    expect(supplierUnitPrice('1.00', 'USD', percentage(30))).toBe('0.77');
    expect(supplierUnitPrice('0.10', 'USD', percentage(30))).toBe('0.08');
  });

  it('rounds a result of exactly half a minor unit away from zero', () => {
    // Prepare: at 100% the supplier price is half the reseller price, so odd cents land on .5
    const config = percentage(100);

    // Act + Assess
    expect(supplierUnitPrice('0.05', 'USD', config)).toBe('0.03'); // 2.5 cents (half-even would give 0.02)
    expect(supplierUnitPrice('0.01', 'USD', config)).toBe('0.01'); // 0.5 cents (half-even would give 0.00)
    expect(supplierUnitPrice('0.03', 'USD', config)).toBe('0.02'); // 1.5 cents
    expect(supplierUnitPrice('0.04', 'USD', percentage(60))).toBe('0.03'); // 4 × 100 / 160 = 2.5 cents
  });

  it('handles a fractional percentage exactly (12.5% → × 8/9)', () => {
    expect(supplierUnitPrice('9.00', 'USD', percentage(12.5))).toBe('8.00');
    expect(supplierUnitPrice('1.00', 'USD', percentage(12.5))).toBe('0.89');
    expect(supplierUnitPrice('11.25', 'USD', percentage(12.5))).toBe('10.00');
  });

  it('handles the bounds of value: 0 keeps the price, 1000 divides by 11', () => {
    expect(supplierUnitPrice('13.00', 'USD', percentage(0))).toBe('13.00');
    expect(supplierUnitPrice('11.00', 'USD', percentage(1000))).toBe('1.00');
  });

  it('takes a tiny fractional value as written rather than as its float approximation', () => {
    expect(supplierUnitPrice('100.00', 'USD', percentage(0.0000001))).toBe('100.00');
    expect(supplierUnitPrice('1.10', 'USD', percentage(10.000000000000002))).toBe('1.00');
  });

  it('works in a zero-decimal currency (JPY 1300 at 30% → 1000)', () => {
    expect(supplierUnitPrice('1300', 'JPY', percentage(30))).toBe('1000');
    expect(supplierUnitPrice('1000', 'JPY', percentage(30))).toBe('769'); // 769.23
    expect(supplierUnitPrice('5', 'JPY', percentage(100))).toBe('3'); // 2.5 rounds away from zero
    expect(supplierShippingPrice('500', 'JPY', percentage(30))).toBe('500');
  });

  it('works in a three-decimal currency (KWD)', () => {
    expect(supplierUnitPrice('13.000', 'KWD', percentage(30))).toBe('10.000');
    expect(supplierUnitPrice('1.000', 'KWD', percentage(30))).toBe('0.769');
    expect(supplierUnitPrice('1', 'BHD', percentage(30))).toBe('0.769');
    expect(supplierShippingPrice('5', 'KWD', percentage(30))).toBe('5.000');
  });
});

describe('Pricing: field_rules mode', () => {
  it('subtracts productCost from a unit price and shippingCost from a shipping line (CONTRACT §7)', () => {
    // Prepare
    const config = fieldRules(3, 2);

    // Act
    const unit = supplierUnitPrice('13.00', 'USD', config);
    const shipping = supplierShippingPrice('5.00', 'USD', config);

    // Assess
    expect(unit).toBe('10.00');
    expect(shipping).toBe('3.00');
  });

  it('floors a unit price below productCost at zero', () => {
    expect(supplierUnitPrice('2.50', 'USD', fieldRules(3, 2))).toBe('0.00');
    expect(supplierUnitPrice('3.00', 'USD', fieldRules(3, 2))).toBe('0.00');
  });

  it('floors a shipping line below shippingCost at zero', () => {
    expect(supplierShippingPrice('1.00', 'USD', fieldRules(3, 2))).toBe('0.00');
    expect(supplierShippingPrice('0', 'JPY', fieldRules(3, 200))).toBe('0');
  });

  it('converts a fractional cost exactly, rounding half away from zero (2.675 is not 2.67499…)', () => {
    expect(supplierUnitPrice('13.00', 'USD', fieldRules(2.675, 0))).toBe('10.32');
    expect(supplierUnitPrice('13.00', 'USD', fieldRules(0.1, 0))).toBe('12.90');
    expect(supplierShippingPrice('5.00', 'USD', fieldRules(0, 1.005))).toBe('3.99');
  });

  it('works in zero- and three-decimal currencies', () => {
    expect(supplierUnitPrice('1300', 'JPY', fieldRules(300, 0))).toBe('1000');
    expect(supplierUnitPrice('1300', 'JPY', fieldRules(299.5, 0))).toBe('1000'); // cost 299.5 → 300 yen
    expect(supplierUnitPrice('13.000', 'KWD', fieldRules(1.2345, 0))).toBe('11.765'); // cost → 1.235
    expect(supplierShippingPrice('5', 'KWD', fieldRules(0, 2))).toBe('3.000');
  });

  it('keeps exactness on very large amounts', () => {
    expect(supplierUnitPrice('123456789012345678.99', 'USD', fieldRules(3, 0))).toBe('123456789012345675.99');
  });
});

describe('Pricing: prices with more decimals than the currency has', () => {
  it('parses them exactly and rounds half away from zero to minor units', () => {
    expect(supplierShippingPrice('10.005', 'USD', percentage(30))).toBe('10.01');
    expect(supplierShippingPrice('10.004999', 'USD', percentage(30))).toBe('10.00');
    expect(supplierUnitPrice('13.005', 'USD', fieldRules(3, 0))).toBe('10.01');
    expect(supplierUnitPrice('13.004', 'USD', fieldRules(3, 0))).toBe('10.00');
    expect(supplierUnitPrice('1300.00', 'JPY', percentage(30))).toBe('1000');
    expect(supplierUnitPrice('1300.5', 'JPY', fieldRules(0, 0))).toBe('1301');
    expect(supplierUnitPrice('13.0005', 'KWD', percentage(0))).toBe('13.001');
  });

  it('rounds a percentage result once, from the exact price', () => {
    // 0.065 / 1.3 = 0.05 and 0.0195 / 1.3 = 0.015 (1.5 cents) exactly
    expect(supplierUnitPrice('0.065', 'USD', percentage(30))).toBe('0.05');
    expect(supplierUnitPrice('0.0195', 'USD', percentage(30))).toBe('0.02');
  });
});

describe('Pricing: malformed input', () => {
  it.each([
    '-1.00',
    '-0',
    'NaN',
    'Infinity',
    '1e3',
    '1E3',
    '',
    ' 1.00',
    '1.00 ',
    '1.2.3',
    'abc',
    '+1',
    '1.',
    '.5',
    '1,00',
    '0x10',
  ])('rejects the amount %p with InvalidAmountError (validation_failed)', (amount) => {
    // Act
    const act = () => supplierUnitPrice(amount, 'USD', percentage(30));

    // Assess
    expect(act).toThrow(InvalidAmountError);
    expect(act).toThrow(expect.objectContaining({ code: 'validation_failed' }));
  });

  it('rejects a shipping amount that is malformed', () => {
    expect(() => supplierShippingPrice('-5.00', 'USD', fieldRules(0, 2))).toThrow(InvalidAmountError);
    expect(() => supplierShippingPrice('5e0', 'USD', percentage(30))).toThrow(InvalidAmountError);
  });

  it('rejects a non-string amount', () => {
    expect(() => supplierUnitPrice(13 as unknown as string, 'USD', percentage(30))).toThrow(InvalidAmountError);
  });

  it('rejects a negative, NaN or infinite pricing number', () => {
    expect(() => supplierUnitPrice('13.00', 'USD', percentage(-10))).toThrow(InvalidAmountError);
    expect(() => supplierUnitPrice('13.00', 'USD', percentage(Number.NaN))).toThrow(InvalidAmountError);
    expect(() => supplierUnitPrice('13.00', 'USD', fieldRules(Number.POSITIVE_INFINITY, 0))).toThrow(
      InvalidAmountError,
    );
    expect(() => supplierShippingPrice('5.00', 'USD', fieldRules(0, -1))).toThrow(InvalidAmountError);
  });

  it('names the faulty input in the error param', () => {
    expect(() => supplierUnitPrice('13.00', 'USD', fieldRules(-1, 0))).toThrow(
      expect.objectContaining({ param: 'pricingConfig.productCost', code: 'validation_failed' }),
    );
  });
});

describe('Supplier order: buildSupplierOrder', () => {
  const raw = JSON.stringify({
    id: 5551234,
    name: '#1042',
    currency: 'USD',
    email: 'a@example.com',
    line_items: [
      { id: 1, variant_id: 11, sku: 'MUG-1', title: 'Mug', quantity: 2, price: '13.00', vendor: 'Acme' },
      { id: 2, variant_id: 12, sku: 'TEE-1', title: 'Tee', quantity: 1, price: '20.00', vendor: 'Other' },
    ],
    shipping_lines: [{ title: 'Standard', price: '5.00' }],
    shipping_address: { name: 'A B', address1: '1 Main St', city: 'X', zip: '1', country_code: 'US' },
  });
  const read = (text: string) => {
    const reading = readResellerOrder(text);
    if (!reading.ok) throw new Error(reading.message);
    return reading.order;
  };
  const order = read(raw);
  /** What a platform adapter sends: the supplier order's JSON, kept values verbatim. */
  const sent = (value: unknown) => JSON.parse(stringifyExact(value));

  it('builds the supplier order for the routed items with supplier prices (percentage)', () => {
    // Act
    const result = buildSupplierOrder({
      resellerShopDomain: 'reseller.myshopify.com',
      syncJobId: 'sj_1',
      order,
      lineItems: [order.lineItems[0]],
      pricing: percentage(30),
    });

    // Assess
    expect(sent(result)).toEqual({
      source_identifier: 'reseller.myshopify.com:5551234:sj_1',
      currency: 'USD',
      email: 'a@example.com',
      line_items: [{ title: 'Mug', sku: 'MUG-1', variant_id: 11, quantity: 2, price: '10.00', vendor: 'Acme' }],
      shipping_lines: [{ title: 'Standard', price: '5.00' }],
      shipping_address: { name: 'A B', address1: '1 Main St', city: 'X', zip: '1', country_code: 'US' },
      // The reseller order's name, set in the create itself (CONTRACT.md §12.5).
      note_attributes: [{ name: 'reseller_order', value: '#1042' }],
      tags: 'reseller-order',
    });
  });

  it('converts shipping lines with field_rules', () => {
    // Act
    const result = buildSupplierOrder({
      resellerShopDomain: 'reseller.myshopify.com',
      syncJobId: 'sj_1',
      order,
      lineItems: order.lineItems,
      pricing: fieldRules(3, 2),
    });

    // Assess
    expect(result.line_items.map((item) => item.price)).toEqual(['10.00', '17.00']);
    expect(sent(result.shipping_lines)).toEqual([{ title: 'Standard', price: '3.00' }]);
  });

  it('fills missing optional fields sensibly', () => {
    // Prepare
    const bare = read('{"id":"abc","currency":"JPY","line_items":[{"quantity":1,"price":"1300","vendor":"Acme"}]}');

    // Act
    const result = buildSupplierOrder({
      resellerShopDomain: 'r.myshopify.com',
      syncJobId: 'sj_1',
      order: bare,
      lineItems: bare.lineItems,
      pricing: percentage(30),
    });

    // Assess
    expect(sent(result)).toEqual({
      source_identifier: 'r.myshopify.com:abc:sj_1',
      currency: 'JPY',
      email: null,
      line_items: [{ title: '', sku: null, variant_id: null, quantity: 1, price: '1000', vendor: 'Acme' }],
      shipping_lines: [],
      shipping_address: null,
      // An order with no name is named by its id.
      note_attributes: [{ name: 'reseller_order', value: 'abc' }],
      tags: 'reseller-order',
    });
  });

  it('writes back every value it does not compute exactly as it came: digits, depth, empty keys', () => {
    // Prepare
    let deep = '"bottom"';
    for (let i = 0; i < 40; i++) deep = `{"level${i}":${deep},"":1e400}`;
    const text =
      '{"id":9007199254740993,"currency":"USD","email":{"x":18446744073709551617},' +
      '"line_items":[{"quantity":1,"price":"1.00","vendor":"Acme","variant_id":123456789012345678901,' +
      `"sku":-0.0,"title":"T\\u00e9 \\ud83d\\ude00"}],"shipping_address":${deep}}`;
    const exact = read(text);

    // Act
    const body = stringifyExact(
      buildSupplierOrder({
        resellerShopDomain: 'r.myshopify.com',
        syncJobId: 'sj_1',
        order: exact,
        lineItems: exact.lineItems,
        pricing: percentage(0),
      }),
    );

    // Assess
    expect(exact.externalOrderId).toBe('9007199254740993');
    expect(body).toContain('"source_identifier":"r.myshopify.com:9007199254740993:sj_1"');
    expect(body).toContain('"variant_id":123456789012345678901');
    expect(body).toContain('"sku":-0.0');
    expect(body).toContain('"email":{"x":18446744073709551617}');
    expect(body).toContain(String.raw`"title":"T\u00e9 \ud83d\ude00"`);
    expect(body).toContain(`"shipping_address":${deep}`);
    expect(() => JSON.parse(body)).not.toThrow();
  });

  it('rejects a malformed line item price', () => {
    expect(() =>
      buildSupplierOrder({
        resellerShopDomain: 'r.myshopify.com',
        syncJobId: 'sj_1',
        order,
        lineItems: [{ ...order.lineItems[0], price: '-1' }],
        pricing: percentage(30),
      }),
    ).toThrow(InvalidAmountError);
  });
});

describe('Money: ISO 4217 exponents in prices (never re-rounded by Intl)', () => {
  it.each([
    ['HUF', '1990.50', '1990.50'],
    ['IDR', '15000.25', '15000.25'],
    ['PKR', '499.99', '499.99'],
    ['COP', '12000.10', '12000.10'],
    ['IQD', '1250.125', '1250.125'],
    ['JPY', '1990', '1990'],
    ['KWD', '3.250', '3.250'],
    ['CLF', '0.0125', '0.0125'],
  ])('keeps %s %s at %s with a markup of 0 (both modes)', (currency, price, expected) => {
    expect(supplierUnitPrice(price, currency, percentage(0))).toBe(expected);
    expect(supplierUnitPrice(price, currency, fieldRules(0, 0))).toBe(expected);
    expect(supplierShippingPrice(price, currency, fieldRules(0, 0))).toBe(expected);
  });

  it('takes a markup off in the exponent of the currency (IQD: 3 decimals)', () => {
    expect(supplierUnitPrice('13.000', 'IQD', percentage(30))).toBe('10.000');
    expect(supplierUnitPrice('1.001', 'IQD', fieldRules(0.0005, 0))).toBe('1.000');
  });

  it('throws UnknownCurrencyError naming a currency outside the table, before any rounding', () => {
    expect(() => supplierUnitPrice('1990.50', 'ZZZ', percentage(0))).toThrow(/'ZZZ'|"ZZZ"/);
  });
});

describe('Money: decimal places of a configured markup', () => {
  it.each([
    [0, 0],
    [30, 0],
    [0.5, 1],
    [12.3456, 4],
    [5e-324, 324],
    [1e-7, 7],
    [0.1 + 0.2, 17],
  ])('counts %d as %i decimal places', (value, places) => {
    expect(decimalPlaces(value)).toBe(places);
  });
});
