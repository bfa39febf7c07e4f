import { createHash, randomBytes } from 'node:crypto';

/** Crockford base32: ids stay URL-safe and unambiguous to read aloud. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

const base32 = (bytes: Uint8Array, length: number) => {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < length) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
};

export type IdPrefix = 'rst' | 'sst' | 'sj' | 'aud' | 'req' | 'key';

export const newId = (prefix: IdPrefix) => `${prefix}_${base32(randomBytes(16), 24)}`;

/**
 * The sync job ids of one order are derived from (reseller store, order id, position), so the
 * first job of an order is also its dedup record: a redelivered webhook computes the same id and
 * its conditional put fails, whatever the routing looks like by then.
 */
export const syncJobId = (resellerStoreId: string, externalOrderId: string, position: number) =>
  `sj_${base32(createHash('sha256').update(`${resellerStoreId}\n${externalOrderId}\n${position}`).digest(), 24)}`;

export const now = () => new Date().toISOString();
