import { createHmac, timingSafeEqual } from 'node:crypto';

const DIGEST_BYTES = 32;
// Standard base64 of exactly 32 bytes: 43 characters and one '=' of padding.
const BASE64_DIGEST = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

function digest(secret: string, raw: Buffer | string): Buffer {
  return createHmac('sha256', secret).update(raw).digest();
}

/**
 * Whether a signature header has the one form a valid one can have (surrounding whitespace
 * ignored): the standard base64 of a 32-byte digest, 44 characters ending in '='. Its form is not
 * secret, so a webhook refuses any other before reading or decrypting anything.
 */
export function isWellFormedSignature(header: string | undefined | null): boolean {
  return typeof header === 'string' && BASE64_DIGEST.test(header.trim());
}

export function signBody(secret: string, raw: Buffer | string): string {
  return digest(secret, raw).toString('base64');
}

/**
 * Checks a signature header against the raw body in constant time: the expected digest is
 * always computed, and the comparison runs over two fixed-length 32-byte buffers. A header that
 * is missing or not the base64 of a 32-byte digest is false (its form is not secret).
 */
export function verifySignature(
  secret: string,
  raw: Buffer | string,
  signatureBase64: string | undefined | null,
): boolean {
  const expected = digest(secret, raw);
  const wellFormed = isWellFormedSignature(signatureBase64);
  const given = wellFormed ? Buffer.from(signatureBase64!.trim(), 'base64') : Buffer.alloc(DIGEST_BYTES);
  if (given.length !== DIGEST_BYTES) return false;
  const same = timingSafeEqual(expected, given);
  return wellFormed && same;
}

const LABEL = /^[a-z0-9][a-z0-9-]*$/;

/**
 * `<label>.<suffix>`, lower-cased: the only form a store's shop domain can be registered under
 * (shared/http/schemas.ts), and so the only one a webhook delivery may name (shared/stores/verify.ts).
 */
export const isShopDomainUnder = (value: string, suffix: string) => {
  const dotted = `.${suffix.toLowerCase()}`;
  if (!value.endsWith(dotted)) return false;
  const label = value.slice(0, -dotted.length);
  return label.length <= 63 && LABEL.test(label);
};
