import {
  elementsOf,
  JsonText,
  kindOf,
  membersOf,
  parseDocument,
  parseWithExactIntegers,
  readResellerOrder,
  stringifyExact,
  textOf,
  wholeNumber,
} from '../../shared/domain/orders.js';

describe('json-text: reading values as their source text', () => {
  it('finds members and elements, keeping each value as written', () => {
    const root = parseDocument(
      ' {"a": 9007199254740993, "b" : [1e400, "x\\"y", {"": -0.0}], "a": 18446744073709551617} ',
    );
    const members = membersOf(root);
    expect([...members.keys()]).toEqual(['a', 'b']);
    // A key sent twice keeps its last value, as JSON.parse does.
    expect(textOf(members.get('a')!)).toBe('18446744073709551617');
    const elements = elementsOf(members.get('b')!);
    expect(elements.map(textOf)).toEqual(['1e400', '"x\\"y"', '{"": -0.0}']);
    expect(elements.map(kindOf)).toEqual(['number', 'string', 'object']);
    expect(textOf(membersOf(elements[2]).get('')!)).toBe('-0.0');
  });

  it('skips 500,000 levels of nesting without recursion', () => {
    const deep = `${'['.repeat(500_000)}${']'.repeat(500_000)}`;
    const root = parseDocument(`{"deep":${deep},"after":1}`);
    expect(textOf(membersOf(root).get('after')!)).toBe('1');
    const order = readResellerOrder(`{"id":1,"currency":"USD","line_items":[],"note":${deep}}`);
    expect(order.ok).toBe(true);
  });

  it('refuses text that is not JSON', () => {
    expect(() => parseDocument('{"a":}')).toThrow(SyntaxError);
  });

  it.each([
    ['0', 5, '0'],
    ['-0', 5, '0'],
    ['9007199254740993', 30, '9007199254740993'],
    ['1e3', 5, '1000'],
    ['1000.000', 5, '1000'],
    ['0.25e2', 5, '25'],
    ['1.5', 5, undefined],
    ['-1', 5, undefined],
    ['1e20', 7, undefined],
    ['1e999999999999', 100, undefined],
    ['1e-999999999999', 100, undefined],
  ])('reads %s as the whole number %s (at most %i digits)', (source, max, expected) => {
    expect(wholeNumber(source, max as number)).toBe(expected);
  });

  it('writes kept text verbatim and the rest as JSON.stringify does', () => {
    const text = stringifyExact({
      a: new JsonText('123456789012345678901'),
      b: [1, 'x', null, undefined],
      c: undefined,
    });
    expect(text).toBe('{"a":123456789012345678901,"b":[1,"x",null,null]}');
  });

  it('parses a fulfillment with ids past 2^53 as their digits, at any depth', () => {
    expect(parseWithExactIntegers('{"id":9007199254740993,"order_id":7002,"x":1.5}')).toEqual({
      id: '9007199254740993',
      order_id: 7002,
      x: 1.5,
    });
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect(parseWithExactIntegers(`{"order_id":9007199254740993,"deep":${deep}}`)).toMatchObject({
      order_id: '9007199254740993',
    });
  });
});
