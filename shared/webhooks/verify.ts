import { verifySignature } from '../domain/hmac.js';
import { InvalidSignatureError, ValidationError } from '../core/errors.js';
import { assertJsonContentType, readHeader } from '../http/middlewares.js';
import type { HttpEvent } from '../http/types.js';
import type { SecretCipher } from '../aws/kms-cipher.js';
import { storesByShopDomain } from '../stores/stores.js';
import type { Item } from '../dynamo/table.js';

export type WebhookTopic = 'orders/create' | 'fulfillments/create';

/**
 * Finds the stores registered under `X-Platform-Shop-Domain` whose webhook secret verifies the
 * HMAC of the raw body, before anything of the body is parsed. Every candidate is checked in
 * constant time; none verifying (or no candidate, or no header) is a 401.
 */
export const verifiedStores = async (
  cipher: SecretCipher,
  event: HttpEvent,
  rawBody: Buffer,
  kind: 'RST' | 'SST',
): Promise<Item[]> => {
  const shopDomain = readHeader(event, 'x-platform-shop-domain')?.trim().toLowerCase();
  const signature = readHeader(event, 'x-platform-hmac-sha256');
  if (!shopDomain || !signature) throw new InvalidSignatureError();
  // Active stores first, then the oldest: the order in which a shared shop domain is resolved.
  const candidates = (await storesByShopDomain(shopDomain, kind)).sort(
    (a, b) => Number(!!a.deletedAt) - Number(!!b.deletedAt) || String(a.createdAt).localeCompare(String(b.createdAt)),
  );
  const verified: Item[] = [];
  for (const store of candidates) {
    const secret = await cipher.decrypt(store.webhookSecret as string, {
      storeId: store.id as string,
      field: 'webhookSecret',
    });
    if (verifySignature(secret, rawBody, signature)) verified.push(store);
  }
  if (!verified.length) throw new InvalidSignatureError();
  return verified;
};

/** `X-Platform-Topic` is optional, but when sent it must name this endpoint's topic. */
export const assertTopic = (event: HttpEvent, topic: WebhookTopic) => {
  const sent = readHeader(event, 'x-platform-topic');
  if (sent !== undefined && sent.trim() !== topic) {
    throw new ValidationError(
      `X-Platform-Topic '${sent}' does not match this endpoint, which takes '${topic}'.`,
      'X-Platform-Topic',
    );
  }
};

/** The signed body as JSON: it must say it is JSON (415 otherwise) and be JSON (400 otherwise). */
export const parseWebhookJson = (event: HttpEvent, rawBody: Buffer): unknown => {
  assertJsonContentType(event);
  try {
    return JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new ValidationError('The webhook body is not valid JSON.');
  }
};
