import type { SecretContext } from '../shared/aws/kms-cipher.js';
import { INDEX } from '../shared/dynamo/keys.js';
import type { Statement } from './policy.js';
import type { Access, IndexName, KeyAction, QueueName, SecretField, TableAction } from './routes.js';

/**
 * The IAM side of a function's `access` declaration (lib/routes.ts): pure data, so the stack
 * builds its policies from it and the tests compare the synthesized policies against it.
 */

/** What an IAM statement of a function may name. `tableIndexes` are indexes of the table, by name. */
export type GrantTarget =
  | { kind: 'table' }
  | { kind: 'tableIndexes'; indexes: string[] }
  | { kind: 'key' }
  | { kind: 'queue'; queue: QueueName }
  | { kind: 'function'; name: string };

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
  for (const name of unique(access.invokes ?? []))
    grants.push({ target: { kind: 'function', name }, actions: ['lambda:InvokeFunction'] });
  return grants;
};

/** A function's `access` under its name, as lib/functions.ts lists them. */
export interface Declared {
  name: string;
  access: Access;
}

/**
 * One statement of the secrets key's policy: the functions (by name) that declare exactly these key
 * actions on exactly these secrets, and the context conditions of their own grant (`grantsFor`). The
 * stack names each function's role, the local KMS stand-in its local principal.
 */
export interface KeyUseGrant {
  sid: string;
  actions: string[];
  fields: SecretField[];
  functions: string[];
  conditions: NonNullable<Grant['conditions']>;
}

const capitalized = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/**
 * The secrets key's use statements, written from the same declarations as the roles' own policies:
 * the functions are grouped by their declared (actions, fields), and each group may use the key
 * for those actions and those secrets only. KMS needs an allow in both the key policy and the
 * role's policy, so neither can give a role a secret the other does not.
 */
export const keyUseGrants = (functions: Declared[]): KeyUseGrant[] => {
  const groups = new Map<string, KeyUseGrant>();
  for (const { name, access } of functions) {
    if (!access.key?.actions.length || !access.key.fields.length) continue;
    const actions = unique(access.key.actions as KeyAction[]);
    const fields = unique(access.key.fields) as SecretField[];
    const id = `${actions.join('')}:${fields.join(',')}`;
    const group = groups.get(id);
    if (group) {
      group.functions.push(name);
      continue;
    }
    const [grant] = grantsFor({ key: { actions: actions as KeyAction[], fields } });
    groups.set(id, {
      sid: `FunctionsMay${actions.join('And')}${fields.map(capitalized).join('')}`,
      actions: grant.actions,
      fields,
      functions: [name],
      conditions: grant.conditions!,
    });
  }
  return [...groups.values()].sort((a, b) => a.sid.localeCompare(b.sid));
};

/** Where a function's grants point: the ARNs of the resources its `access` names. */
export interface GrantResources {
  tableArn: string;
  keyArn: string;
  queueArn: (queue: QueueName) => string;
  /** A function of lib/routes.ts by its name there (`access.invokes`). */
  functionArn: (name: string) => string;
}

export const resourceArns = (target: GrantTarget, resources: GrantResources): string[] => {
  switch (target.kind) {
    case 'table':
      return [resources.tableArn];
    case 'tableIndexes':
      return target.indexes.map((name) => `${resources.tableArn}/index/${name}`);
    case 'key':
      return [resources.keyArn];
    case 'queue':
      return [resources.queueArn(target.queue)];
    case 'function':
      return [resources.functionArn(target.name)];
  }
};

/** A function's role policy as IAM reads it (lib/constructs/functions.ts writes the same statements). */
export const identityStatements = (access: Access, resources: GrantResources): Statement[] =>
  grantsFor(access).map((grant) => ({
    Effect: 'Allow',
    Action: grant.actions,
    Resource: resourceArns(grant.target, resources),
    ...(grant.conditions ? { Condition: grant.conditions } : {}),
  }));

/**
 * The secrets key's use statements as KMS reads them: the account is the principal and each group's
 * roles a condition (`aws:PrincipalArn`), as lib/constructs/data.ts writes them.
 */
export const keyUseStatements = (
  grants: KeyUseGrant[],
  options: { accountRoot: string; principalArn: (functionName: string) => string },
): Statement[] =>
  grants.map((grant) => ({
    Sid: grant.sid,
    Effect: 'Allow',
    Principal: { AWS: options.accountRoot },
    Action: grant.actions,
    Resource: '*',
    Condition: { ...grant.conditions, ArnEquals: { 'aws:PrincipalArn': grant.functions.map(options.principalArn) } },
  }));

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

/** `EventDeliverySlowTry` → `EVENT_DELIVERY_SLOW_TRY_FUNCTION_NAME`: where an invoker finds the function's name. */
export const functionNameVariable = (name: string) =>
  `${name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}_FUNCTION_NAME`;
