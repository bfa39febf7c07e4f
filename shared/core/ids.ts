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

export type IdPrefix = 'rst' | 'sst' | 'sj' | 'aud' | 'req' | 'key' | 'evt' | 'we' | 'awh' | 'ret';

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

const TIME_CHARS = 9;
const KIND_AT = TIME_CHARS;
const CHECK_AT = ID_LENGTH - 1;

/** A check character over the others: an id that was not made by `placedId` rarely passes it (1 in 32). */
const checkOf = (body: string) => {
  let sum = 0;
  for (let i = 0; i < body.length; i++) sum = (sum + (i + 1) * ALPHABET.indexOf(body[i])) % 32;
  return ALPHABET[sum];
};

/**
 * An id that says where its item is (an event's: shared/events/README.md, "Events and webhook endpoints"):
 * the 24 characters are the time in milliseconds (9, big-endian base32, so ids of one kind sort by
 * time), a kind (1, 0–31), 13 from `seed` (random or a hash) and a check character. It has the shape
 * of every id (`isId`), so the API's patterns do not change.
 */
export const placedId = (prefix: IdPrefix, ms: number, kind: number, seed: Uint8Array) => {
  if (!Number.isInteger(ms) || ms < 0 || ms >= 2 ** (5 * TIME_CHARS))
    throw new Error(`placedId: time ${ms} out of range`);
  if (!Number.isInteger(kind) || kind < 0 || kind > 31) throw new Error(`placedId: kind ${kind} out of range`);
  let time = '';
  for (let rest = ms, i = 0; i < TIME_CHARS; i++, rest = Math.floor(rest / 32)) time = ALPHABET[rest % 32] + time;
  const body = `${time}${ALPHABET[kind]}${base32(seed, CHECK_AT - KIND_AT - 1)}`;
  return `${prefix}_${body}${checkOf(body)}`;
};

/** The place a `placedId` names (its time and kind), or undefined for any other value. */
export const placeOfId = (prefix: IdPrefix, id: unknown): { ms: number; kind: number } | undefined => {
  if (!isId(prefix, id)) return undefined;
  const chars = id.slice(prefix.length + 1);
  if (checkOf(chars.slice(0, CHECK_AT)) !== chars[CHECK_AT]) return undefined;
  let ms = 0;
  for (let i = 0; i < TIME_CHARS; i++) ms = ms * 32 + ALPHABET.indexOf(chars[i]);
  return { ms, kind: ALPHABET.indexOf(chars[KIND_AT]) };
};

/** Random bytes for `placedId`'s seed, or the hash of `parts` (the same parts, the same id). */
export const idSeed = (...parts: string[]) =>
  parts.length ? createHash('sha256').update(parts.join('\n')).digest() : randomBytes(16);
