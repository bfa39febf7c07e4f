import type { SecretContext } from '../shared/aws/kms-cipher.js';
import { INDEX } from '../shared/dynamo/keys.js';
import type { Access, IndexName, QueueName, TableAction } from './routes.js';

/**
 * The IAM side of a function's `access` declaration (lib/routes.ts): pure data, so the stack
 * builds its policies from it and the tests compare the synthesized policies against it.
 */

/** What an IAM statement of a function may name. `tableIndexes` are indexes of the table, by name. */
export type GrantTarget =
  | { kind: 'table' }
  | { kind: 'tableIndexes'; indexes: string[] }
  | { kind: 'key' }
  | { kind: 'queue'; queue: QueueName };

export interface Grant {
  target: GrantTarget;
  actions: string[];
  /** An IAM condition block, as the statement carries it. */
  conditions?: Record<string, Record<string, string | string[]>>;
}

/** The keys of the encryption context shared/aws/kms-cipher.ts sends with every Encrypt and Decrypt. */
export const ENCRYPTION_CONTEXT_KEYS = ['field', 'storeId'] as const satisfies readonly (keyof SecretContext)[];

/**
 * DynamoDB authorises a transaction by the item actions inside it; there is no IAM action
 * `dynamodb:TransactWriteItems`. The handlers' transactions Put, Update and ConditionCheck, so
 * that is what the declaration stands for. A transaction that also deletes needs `DeleteItem`
 * declared next to `TransactWriteItems`, as DeleteSourceStore's is in lib/routes.ts.
 */
export const TRANSACT_WRITE_ITEM_ACTIONS = ['PutItem', 'UpdateItem', 'ConditionCheckItem'] as const;

const tableIamActions = (action: TableAction | string): string[] =>
  action === 'TransactWriteItems' ? TRANSACT_WRITE_ITEM_ACTIONS.map((a) => `dynamodb:${a}`) : [`dynamodb:${action}`];

const unique = (values: Iterable<string>) => [...new Set(values)].sort();

/** The physical name (`GSI1`…) of an index declared by its role (`lists`…). */
export const indexName = (index: IndexName) => INDEX[index];

/**
 * The statements a function's role gets for its `access`: table actions on the table ARN; `Query`
 * on the indexes it declares, each by name; key actions on the secrets key, only under the
 * encryption context the cipher uses and for the declared secrets; queue actions on that queue.
 * Nothing else, and never a wildcard action.
 */
export const grantsFor = (access: Access): Grant[] => {
  const grants: Grant[] = [];
  const table = access.table ?? [];
  if (table.length) grants.push({ target: { kind: 'table' }, actions: unique(table.flatMap(tableIamActions)) });
  if (access.indexes?.length) {
    const indexes = unique(access.indexes.map(indexName));
    grants.push({ target: { kind: 'tableIndexes', indexes }, actions: ['dynamodb:Query'] });
  }
  if (access.key?.actions.length) {
    grants.push({
      target: { kind: 'key' },
      actions: unique(access.key.actions.map((a) => `kms:${a}`)),
      conditions: {
        // The field must be one of the declared secrets, a store must be named, and nothing else
        // may be in the context: a ciphertext decrypts only as the secret it was made for.
        StringEquals: { 'kms:EncryptionContext:field': unique(access.key.fields) },
        Null: { 'kms:EncryptionContext:storeId': 'false' },
        'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': [...ENCRYPTION_CONTEXT_KEYS] },
      },
    });
  }
  for (const [queue, actions] of Object.entries(access.queues ?? {}) as [QueueName, string[] | undefined][]) {
    if (actions?.length)
      grants.push({ target: { kind: 'queue', queue }, actions: unique(actions.map((a) => `sqs:${a}`)) });
  }
  return grants;
};

/** Every IAM action `access` stands for, sorted and without duplicates. */
export const iamActionsFor = (access: Access): string[] => unique(grantsFor(access).flatMap((g) => g.actions));

/** Queues whose URL a function needs: the ones it acts on. */
export const queuesUsedBy = (access: Access): QueueName[] =>
  (Object.entries(access.queues ?? {}) as [QueueName, string[] | undefined][])
    .filter(([, a]) => a?.length)
    .map(([q]) => q);

/** `sync` → `SYNC_QUEUE_URL`, `syncDlq` → `SYNC_DLQ_QUEUE_URL`: the variable shared/core/config.ts reads. */
export const queueUrlVariable = (queue: QueueName) =>
  `${queue.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}_QUEUE_URL`;
