import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { SecretCipher } from '../aws/kms-cipher.js';
import { dynamo } from '../dynamo/client.js';
import { lookups } from '../dynamo/keys.js';
import { queryIndex, TABLE } from '../dynamo/table.js';
import {
  previousWebhookSecretFrom,
  type StoreKind,
  type StoreOnShop,
  shopStoresOfKind,
  storeKey,
  storeOnShopFrom,
} from '../entities/store.js';

/** Every store of one kind registered under a shop domain, deleted or not (GSI2 carries what verifying needs). */
export const storesOnShop = async (shopDomain: string, kind: StoreKind) =>
  (
    await queryIndex({
      index: 'lookups',
      partition: lookups.shop(shopDomain),
      prefix: shopStoresOfKind(kind),
      forward: true,
    })
  ).map(storeOnShopFrom(kind));

/**
 * The webhook secret a rotation replaced, while it still verifies (CONTRACT.md §10.9: 24 hours), or
 * undefined. Read from the store's own item, and only once its current secret has not verified: the
 * lookup index carries the current secret alone, so the common case costs nothing more.
 */
export const previousWebhookSecretOf = async (
  cipher: SecretCipher,
  store: Pick<StoreOnShop, 'kind' | 'id'>,
  at = Date.now(),
): Promise<string | undefined> => {
  const key = storeKey(store.kind, store.id);
  const out = await dynamo.send(
    new GetCommand({
      TableName: TABLE(),
      Key: key,
      ProjectionExpression: 'previousWebhookSecret, previousWebhookSecretUntil',
    }),
  );
  const previous = out.Item ? previousWebhookSecretFrom(out.Item) : null;
  if (!previous || Date.parse(previous.until) <= at) return undefined;
  return cipher.decrypt(previous.ciphertext, { storeId: store.id, field: 'webhookSecret' });
};
