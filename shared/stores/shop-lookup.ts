import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { SecretCipher } from '../aws/kms-cipher.js';
import { dynamo } from '../dynamo/client.js';
import { INDEX, keys, lookups, type StoreKind } from '../dynamo/keys.js';
import { TABLE } from '../dynamo/table.js';
import { previousWebhookSecretFrom, type StoreOnShop, storeOnShopFrom } from './records.js';

/** Every store of one kind registered under a shop domain, deleted or not (GSI2 carries what verifying needs). */
export const storesOnShop = async (shopDomain: string, kind: StoreKind) => {
  const out = await dynamo.send(
    new QueryCommand({
      TableName: TABLE(),
      IndexName: INDEX.lookups,
      KeyConditionExpression: 'GSI2PK = :pk AND begins_with(GSI2SK, :kind)',
      ExpressionAttributeValues: { ':pk': lookups.shop(shopDomain), ':kind': lookups.shopStoresOfKind(kind) },
    }),
  );
  return (out.Items ?? []).map(storeOnShopFrom(kind));
};

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
  const key = store.kind === 'reseller' ? keys.resellerStore(store.id) : keys.sourceStore(store.id);
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
