import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { lateSweepKey } from '../dynamo/keys.js';
import { dynamo, TABLE } from '../dynamo/table.js';

/**
 * The late sweep's mark (CONTRACT.md §16.2): the last UTC hour (`YYYY-MM-DDTHH`) of due jobs it went
 * through, so each run reads only the hours due since the last one. One small item.
 */
export const readLateSweepMark = async (): Promise<string | null> => {
  const out = await dynamo.send(new GetCommand({ TableName: TABLE(), Key: lateSweepKey(), ConsistentRead: true }));
  return typeof out.Item?.hour === 'string' ? out.Item.hour : null;
};

export const writeLateSweepMark = async (hour: string, at: string) => {
  await dynamo.send(new PutCommand({ TableName: TABLE(), Item: { ...lateSweepKey(), hour, updatedAt: at } }));
};
