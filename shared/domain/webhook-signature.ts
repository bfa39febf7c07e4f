import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks 1.0 signing (CONTRACT.md §14): `webhook-signature` is `v1,` and the base64
 * HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the bytes the secret's base64
 * after `whsec_` stands for; one per signing secret, space-separated (two during a rotation's overlap).
 */

export const SECRET_PREFIX = 'whsec_';

export interface SignatureInput {
  /** The event id: the same on every try, the receiver's idempotency key. */
  id: string;
  /** Unix seconds of this try. */
  timestamp: number;
  /** The exact bytes sent. */
  body: string;
  /** Every secret that signs now (`whsec_…`), the newest first. */
  secrets: string[];
}

const keyOf = (secret: string) =>
  Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');

export const signature = (secret: string, id: string, timestamp: number, body: string) =>
  `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;

/** The three headers of one delivery try. */
export const signatureHeaders = ({ id, timestamp, body, secrets }: SignatureInput) => {
  if (secrets.length === 0) throw new Error('a delivery needs at least one signing secret');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => signature(secret, id, timestamp, body)).join(' '),
  };
};
