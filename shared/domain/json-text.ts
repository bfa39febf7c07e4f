/**
 * Reading JSON exactly: values are found in the source text and kept as that text, so numbers keep
 * every digit (`9007199254740993`, `1e400`) and any depth is fine.
 *
 * Why not `JSON.parse` with a reviver (Node 24 hands it `context.source`)? The reviver walks every
 * value recursively: on Node 24 it overflows the stack between 1,000 and 5,000 levels of nesting,
 * and so does `JSON.stringify`, while a 1 MiB body can nest 500,000 levels. Plain `JSON.parse` is
 * iterative, so it checks the syntax at any depth; this module then walks only the few levels the
 * service reads, skipping everything else as text without recursion.
 */

/** A JSON value kept as its source text, written back verbatim by `stringifyExact`. */
export class JsonText {
  constructor(readonly text: string) {}
}

export type JsonKind = 'object' | 'array' | 'string' | 'number' | 'literal';

/** One value of a document: `source.slice(start, end)` is its text. */
export interface JsonSpan {
  source: string;
  start: number;
  end: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

const skipSpace = (s: string, i: number) => {
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  return i;
};

/** From an opening quote to just after its closing quote. */
const skipString = (s: string, i: number) => {
  let at = i;
  for (;;) {
    at = s.indexOf('"', at + 1);
    let backslashes = 0;
    while (s.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at + 1;
  }
};

/** From a value's first character to just after it, at any depth, without recursion. */
const skipValue = (s: string, i: number) => {
  let depth = 0;
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) i = skipString(s, i);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      i++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      i++;
    } else if (isSpace(c) || c === COMMA || c === COLON) {
      i++;
      continue;
    } else {
      // A number or a literal runs to the next delimiter.
      while (i < s.length) {
        const d = s.charCodeAt(i);
        if (isSpace(d) || d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || d === COLON) break;
        i++;
      }
    }
    if (depth === 0) return i;
  }
};

/**
 * The document's root value. Throws a SyntaxError when `text` is not JSON (the check is `JSON.parse`
 * itself, which has no depth limit), so every later walk may assume well-formed text.
 */
export const parseDocument = (text: string): JsonSpan => {
  JSON.parse(text);
  const start = skipSpace(text, 0);
  return { source: text, start, end: skipValue(text, start) };
};

export const kindOf = (span: JsonSpan): JsonKind => {
  const c = span.source.charCodeAt(span.start);
  if (c === OPEN_BRACE) return 'object';
  if (c === OPEN_BRACKET) return 'array';
  if (c === QUOTE) return 'string';
  return c === 0x2d || (c >= 0x30 && c <= 0x39) ? 'number' : 'literal';
};

export const textOf = (span: JsonSpan) => span.source.slice(span.start, span.end);

/** A string value, decoded. */
export const stringOf = (span: JsonSpan): string => JSON.parse(textOf(span));

/** An object's members by key; a key sent twice keeps its last value, as `JSON.parse` does. */
export const membersOf = (span: JsonSpan): Map<string, JsonSpan> => {
  const { source: s } = span;
  const members = new Map<string, JsonSpan>();
  let i = skipSpace(s, span.start + 1);
  if (s.charCodeAt(i) === CLOSE_BRACE) return members;
  for (;;) {
    const keyEnd = skipString(s, i);
    const key: string = JSON.parse(s.slice(i, keyEnd));
    const start = skipSpace(s, skipSpace(s, keyEnd) + 1);
    const end = skipValue(s, start);
    members.set(key, { source: s, start, end });
    i = skipSpace(s, end);
    if (s.charCodeAt(i) !== COMMA) return members;
    i = skipSpace(s, i + 1);
  }
};

export const elementsOf = (span: JsonSpan): JsonSpan[] => {
  const { source: s } = span;
  const elements: JsonSpan[] = [];
  let i = skipSpace(s, span.start + 1);
  if (s.charCodeAt(i) === CLOSE_BRACKET) return elements;
  for (;;) {
    const end = skipValue(s, i);
    elements.push({ source: s, start: i, end });
    i = skipSpace(s, end);
    if (s.charCodeAt(i) !== COMMA) return elements;
    i = skipSpace(s, i + 1);
  }
};

const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * The whole number a JSON number's text stands for, in plain digits without leading zeros, when it
 * is one, is not negative and has at most `maxDigits` digits: `"9007199254740993"` stays itself,
 * `"1e3"` and `"1000.0"` are `"1000"`. Undefined otherwise (`"1.5"`, `"-1"`, `"1e400"` past the
 * limit), without ever expanding a huge exponent.
 */
export const wholeNumber = (source: string, maxDigits: number): string | undefined => {
  const match = NUMBER.exec(source);
  if (!match) return undefined;
  const [, sign, integer, fraction = '', exponentText = '0'] = match;
  let digits = (integer + fraction).replace(/^0+/, '');
  let exponent = Number(exponentText) - fraction.length;
  if (digits === '') return '0';
  if (sign === '-') return undefined;
  const trailing = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailing);
  exponent += trailing;
  if (exponent < 0 || digits.length + exponent > maxDigits) return undefined;
  return digits + '0'.repeat(exponent);
};

/**
 * JSON text of a value built by the service around kept text: plain objects, arrays and primitives
 * are written as `JSON.stringify` writes them, a `JsonText` verbatim. The service's own structure is
 * shallow; the deep parts are kept text, so nothing here recurses deeply.
 */
export const stringifyExact = (value: unknown): string => {
  if (value instanceof JsonText) return value.text;
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : stringifyExact(v))).join(',')}]`;
  if (value !== null && typeof value === 'object' && !hasToJson(value)) {
    const members = Object.entries(value)
      .filter(([, v]) => v !== undefined && typeof v !== 'function')
      .map(([k, v]) => `${JSON.stringify(k)}:${stringifyExact(v)}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
};

const hasToJson = (value: object) => typeof (value as { toJSON?: unknown }).toJSON === 'function';

const INTEGER = /^-?\d+$/;

/** An integer past 2^53 as its digits (a string), so no id is ever rounded into another. */
const exactInteger = (value: unknown, source: string | undefined) =>
  typeof value === 'number' && source !== undefined && !Number.isSafeInteger(value) && INTEGER.test(source)
    ? source
    : value;

/**
 * `JSON.parse` for a payload read as objects (a fulfillment): integers past 2^53 become the string
 * of their digits (Node 24's reviver hands over each number's source text). Past the reviver's
 * recursion limit, the top-level members are read exactly and deeper values as `JSON.parse` reads
 * them: the ids a payload is matched by are top-level.
 */
export const parseWithExactIntegers = (text: string): unknown => {
  try {
    return JSON.parse(text, (_key, value, context?: { source?: string }) => exactInteger(value, context?.source));
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
  }
  const root = parseDocument(text);
  if (kindOf(root) !== 'object') return JSON.parse(text);
  return Object.fromEntries(
    [...membersOf(root)].map(([key, span]) => {
      const source = textOf(span);
      return [key, kindOf(span) === 'number' ? exactInteger(JSON.parse(source), source) : JSON.parse(source)];
    }),
  );
};
