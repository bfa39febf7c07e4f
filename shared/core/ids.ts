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

export type IdPrefix = 'rst' | 'sst' | 'sj' | 'aud' | 'req' | 'key' | 'evt' | 'we' | 'awh';

const ID_LENGTH = 24;

export const newId = (prefix: IdPrefix) => `${prefix}_${base32(randomBytes(16), ID_LENGTH)}`;

const ID_SHAPE = new RegExp(`^[a-z]+_[${ALPHABET}]{${ID_LENGTH}}$`);

/** The shape of an id of one kind, as a pattern (for schemas and the OpenAPI document). */
export const idPattern = (prefix: IdPrefix) => new RegExp(`^${prefix}_[${ALPHABET}]{${ID_LENGTH}}$`);
/** The shape of an id of any kind. */
export const ANY_ID_PATTERN = ID_SHAPE;

/**
 * Whether `value` can be an id of this kind (its prefix, then 24 characters of the alphabet),
 * checked before any read: a value that cannot be an id is missing without a database call,
 * and a hostile one (3,000 characters, say) never reaches a key (DynamoDB refuses keys over
 * 2,048 bytes with an error, which would otherwise be a 500).
 */
export const isId = (prefix: IdPrefix, value: unknown): value is string =>
  typeof value === 'string' && value.startsWith(`${prefix}_`) && ID_SHAPE.test(value);

/** Whether `value` can be an id of any kind (a filter naming some resource). */
export const isAnyId = (value: unknown): value is string => typeof value === 'string' && ID_SHAPE.test(value);

/**
 * The sync job ids of one order are derived from (reseller store, order id, position), so the
 * first job of an order is also its dedup record: a redelivered webhook computes the same id and
 * its conditional put fails, whatever the routing looks like by then.
 */
export const syncJobId = (resellerStoreId: string, externalOrderId: string, position: number) =>
  derivedId('sj', resellerStoreId, externalOrderId, String(position));

/** An id that follows from `parts`: the same parts always give the same id (a write repeated is a no-op). */
export const derivedId = (prefix: IdPrefix, ...parts: string[]) =>
  `${prefix}_${base32(createHash('sha256').update(parts.join('\n')).digest(), ID_LENGTH)}`;

export const now = () => new Date().toISOString();
