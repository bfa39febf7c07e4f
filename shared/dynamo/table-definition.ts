import { INDEX, LOOKUP_PROJECTION } from './keys.js';

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
  globalIndexes: GlobalIndexDefinition[];
}

const string = (name: string): KeyAttribute => ({ name, type: 'S' });

/** An index's keys are `<index>PK` / `<index>SK`. */
const index = (name: string, projection: GlobalIndexDefinition['projection']): GlobalIndexDefinition => ({
  name,
  partitionKey: string(`${name}PK`),
  sortKey: string(`${name}SK`),
  projection,
});

export const TABLE_DEFINITION: TableDefinition = {
  partitionKey: string('PK'),
  sortKey: string('SK'),
  billingMode: 'PAY_PER_REQUEST',
  timeToLiveAttribute: 'expiresAt',
  globalIndexes: [
    index(INDEX.lists, { type: 'KEYS_ONLY' }),
    index(INDEX.lookups, { type: 'INCLUDE', nonKeyAttributes: LOOKUP_PROJECTION }),
    index(INDEX.inFlight, { type: 'KEYS_ONLY' }),
  ],
};
