import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../dynamo/client.js';
import { INDEX, lookups, type StoreKind } from '../dynamo/keys.js';
import { TABLE } from '../dynamo/table.js';
import { storeOnShopFrom } from './records.js';

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
