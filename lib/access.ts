import type { Access, QueueName, TableAction } from './routes.js';

/**
 * The IAM side of a function's `access` declaration (lib/routes.ts): pure data, so the stack
 * builds its policies from it and the tests compare the synthesized policies against it.
 */

/** What an IAM statement of a function may name. `tableIndexes` is every GSI of the table, by name. */
export type GrantTarget =
  | { kind: 'table' }
  | { kind: 'tableIndexes' }
  | { kind: 'key' }
  | { kind: 'queue'; queue: QueueName };

export interface Grant {
  target: GrantTarget;
  actions: string[];
}

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

/**
 * The statements a function's role gets for its `access`: table actions on the table ARN;
 * `Query` also on the table's indexes (any of them: the declaration does not say which); key
 * actions on the secrets key; queue actions on that queue. Nothing else, and never a wildcard action.
 */
export const grantsFor = (access: Access): Grant[] => {
  const grants: Grant[] = [];
  const table = access.table ?? [];
  if (table.length) grants.push({ target: { kind: 'table' }, actions: unique(table.flatMap(tableIamActions)) });
  if (table.includes('Query')) grants.push({ target: { kind: 'tableIndexes' }, actions: ['dynamodb:Query'] });
  if (access.key?.length) grants.push({ target: { kind: 'key' }, actions: unique(access.key.map((a) => `kms:${a}`)) });
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
