import { INDEX, INDEX_KEYS, type IndexRole, LOOKUP_PROJECTION } from './keys.js';

/**
 * The single table as plain data: the CDK stack (lib/constructs/data.ts) and the local runtime's
 * DynamoDB Local (lib/local/dynamodb.ts) both create it from this, so the two cannot differ.
 */

/** Every key attribute of the table is a string. */
export interface KeyAttribute {
  name: string;
  type: 'S';
}

export interface GlobalIndexDefinition {
  name: string;
  partitionKey: KeyAttribute;
  sortKey: KeyAttribute;
  projection: { type: 'KEYS_ONLY' } | { type: 'INCLUDE'; nonKeyAttributes: string[] };
}

export interface TableDefinition {
  partitionKey: KeyAttribute;
  sortKey: KeyAttribute;
  billingMode: 'PAY_PER_REQUEST';
  /** Epoch seconds after which DynamoDB deletes the item (kept fulfillments). */
  timeToLiveAttribute: string;
  /** The change stream the event recorder reads (functions/event-recorder.ts): both images of every write. */
  stream: 'NEW_AND_OLD_IMAGES';
  globalIndexes: GlobalIndexDefinition[];
}

const string = (name: string): KeyAttribute => ({ name, type: 'S' });

/** An index's key attributes are the ones keys.ts names for it. */
const index = (role: IndexRole, projection: GlobalIndexDefinition['projection']): GlobalIndexDefinition => ({
  name: INDEX[role],
  partitionKey: string(INDEX_KEYS[role].pk),
  sortKey: string(INDEX_KEYS[role].sk),
  projection,
});

export const TABLE_DEFINITION: TableDefinition = {
  partitionKey: string('PK'),
  sortKey: string('SK'),
  billingMode: 'PAY_PER_REQUEST',
  timeToLiveAttribute: 'expiresAt',
  stream: 'NEW_AND_OLD_IMAGES',
  globalIndexes: [
    index('lists', { type: 'KEYS_ONLY' }),
    index('lookups', { type: 'INCLUDE', nonKeyAttributes: LOOKUP_PROJECTION }),
    index('inFlight', { type: 'KEYS_ONLY' }),
    index('storeLists', { type: 'KEYS_ONLY' }),
    index('stateLists', { type: 'KEYS_ONLY' }),
    index('storeStateLists', { type: 'KEYS_ONLY' }),
    index('resourceLists', { type: 'KEYS_ONLY' }),
  ],
};
