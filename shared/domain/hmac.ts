/** Webhook and signed-push signatures: base64 HMAC-SHA256 of the raw body bytes. */
import { createHmac, timingSafeEqual } from 'node:crypto';

const DIGEST_BYTES = 32;
// Standard base64 of exactly 32 bytes: 43 characters and one '=' of padding.
const BASE64_DIGEST = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

function digest(secret: string, raw: Buffer | string): Buffer {
  return createHmac('sha256', secret).update(raw).digest();
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
  const header = typeof signatureBase64 === 'string' ? signatureBase64.trim() : '';
  const wellFormed = BASE64_DIGEST.test(header);
  const given = wellFormed ? Buffer.from(header, 'base64') : Buffer.alloc(DIGEST_BYTES);
  if (given.length !== DIGEST_BYTES) return false;
  const same = timingSafeEqual(expected, given);
  return wellFormed && same;
}
