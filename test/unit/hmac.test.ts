import { createHmac } from 'node:crypto';
import { signBody, verifySignature } from '../../shared/domain/webhook-checks.js';

// Computed once with: printf 'hello' | openssl dgst -sha256 -hmac secret -binary | base64
const HELLO_SIGNED_WITH_SECRET = 'iKqz7ejTrflNJquQ07r9SiCDBww7zOnAFO4EpEOEfAs=';
// printf '{"id":5551234,"currency":"USD"}' | openssl dgst -sha256 -hmac whsec_test -binary | base64
const ORDER_BODY = '{"id":5551234,"currency":"USD"}';
const ORDER_SIGNED_WITH_WHSEC = 'tFCf7E8kXjtkS3TjGwowbrdtQY+mUvZpD19voaI3zfc=';

describe('HMAC: signBody', () => {
  it('matches the known openssl vectors', () => {
    expect(signBody('secret', 'hello')).toBe(HELLO_SIGNED_WITH_SECRET);
    expect(signBody('whsec_test', Buffer.from(ORDER_BODY))).toBe(ORDER_SIGNED_WITH_WHSEC);
  });

  it('signs a string and its UTF-8 bytes alike', () => {
    const body = '{"title":"Tasse à café ☕"}';
    expect(signBody('s', body)).toBe(signBody('s', Buffer.from(body, 'utf8')));
  });
});

describe('HMAC: verifySignature', () => {
  const secret = 'whsec_test';
  const raw = Buffer.from(ORDER_BODY);

  it('accepts the signature of the exact body bytes', () => {
    expect(verifySignature(secret, raw, ORDER_SIGNED_WITH_WHSEC)).toBe(true);
    expect(verifySignature('secret', Buffer.from('hello'), HELLO_SIGNED_WITH_SECRET)).toBe(true);
  });

  it('rejects a tampered body', () => {
    // Prepare: same JSON meaning, different bytes, and a changed value
    const reformatted = Buffer.from('{"id": 5551234, "currency": "USD"}');
    const changed = Buffer.from('{"id":5551235,"currency":"USD"}');

    // Act + Assess
    expect(verifySignature(secret, reformatted, ORDER_SIGNED_WITH_WHSEC)).toBe(false);
    expect(verifySignature(secret, changed, ORDER_SIGNED_WITH_WHSEC)).toBe(false);
  });

  it('rejects a signature made with another secret', () => {
    expect(verifySignature('whsec_other', raw, ORDER_SIGNED_WITH_WHSEC)).toBe(false);
  });

  it.each([
    ['missing (undefined)', undefined],
    ['missing (null)', null],
    ['empty', ''],
    ['garbage', 'not a signature!!'],
    ['base64 of a shorter digest', Buffer.alloc(16, 1).toString('base64')],
    ['base64 of a longer value', Buffer.alloc(48, 1).toString('base64')],
    ['the hex digest instead of base64', createHmac('sha256', 'whsec_test').update(ORDER_BODY).digest('hex')],
    ['base64url instead of base64', 'tFCf7E8kXjtkS3TjGwowbrdtQY-mUvZpD19voaI3zfc='],
    ['the right digest with junk appended', `${ORDER_SIGNED_WITH_WHSEC}AAAA`],
    ['the right digest without padding', ORDER_SIGNED_WITH_WHSEC.replace('=', '')],
    ['a well-formed digest of other content', signBody(secret, 'other')],
  ])('answers false for a header that is %s', (_case, header) => {
    // Act
    const result = verifySignature(secret, raw, header as string | null | undefined);

    // Assess
    expect(result).toBe(false);
  });

  it('tolerates whitespace around the header value', () => {
    expect(verifySignature(secret, raw, ` ${ORDER_SIGNED_WITH_WHSEC} `)).toBe(true);
  });

  it('verifies an empty body', () => {
    expect(verifySignature(secret, Buffer.alloc(0), signBody(secret, ''))).toBe(true);
  });
});
