import { Duration, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { type KeyAttribute, TABLE_DEFINITION } from '../../shared/dynamo/table-definition.js';
import { keyUseGrants, keyUseStatements } from '../access.js';
import type { DeployConfig } from '../config.js';
import { allFunctions } from '../functions.js';

const ATTRIBUTE_TYPE = { S: dynamodb.AttributeType.STRING } as const;
const PROJECTION = { KEYS_ONLY: dynamodb.ProjectionType.KEYS_ONLY, INCLUDE: dynamodb.ProjectionType.INCLUDE } as const;
const BILLING = { PAY_PER_REQUEST: dynamodb.BillingMode.PAY_PER_REQUEST } as const;

/** How long a deleted KMS key can still be restored: the longest AWS allows in prod. */
export const keyPendingWindow = (config: DeployConfig) => Duration.days(config.isProd ? 30 : 7);

/**
 * The single table of shared/dynamo/table-definition.ts, backed up and protected from deletion. It
 * holds ciphertexts of `secretsKey`, so it shares the key's removal policy and depends on it:
 * CloudFormation deletes the table before the key, and a table that will not go (deletion
 * protection) stops the stack's deletion before the key is scheduled for deletion.
 */
export const addTable = (scope: Construct, config: DeployConfig, secretsKey: kms.Key): dynamodb.Table => {
  const definition = TABLE_DEFINITION;
  const key = (attribute: KeyAttribute) => ({ name: attribute.name, type: ATTRIBUTE_TYPE[attribute.type] });
  const table = new dynamodb.Table(scope, 'Table', {
    partitionKey: key(definition.partitionKey),
    sortKey: key(definition.sortKey),
    billingMode: BILLING[definition.billingMode],
    // The AWS owned key (the default): a customer-managed key would add a KMS request to every read
    // and write, and the secrets in the items are encrypted with the secrets key anyway.
    encryption: dynamodb.TableEncryption.DEFAULT,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: config.deletionProtection,
    timeToLiveAttribute: definition.timeToLiveAttribute,
    // Read by the event recorder (shared/events/README.md, "Events and webhook endpoints"); reading it is free.
    stream: dynamodb.StreamViewType[definition.stream],
    removalPolicy: config.dataRemovalPolicy,
  });
  table.node.addDependency(secretsKey);
  // `-c indexes=N` keeps the table at its first N indexes: an upgrade adds one per deployment.
  for (const index of definition.globalIndexes.slice(0, config.indexes)) {
    table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: key(index.partitionKey),
      sortKey: key(index.sortKey),
      projectionType: PROJECTION[index.projection.type],
      nonKeyAttributes: index.projection.type === 'INCLUDE' ? index.projection.nonKeyAttributes : undefined,
    });
  }
  return table;
};

/**
 * What the account may do with the stack's keys: administer them (CloudFormation creates, updates,
 * rotates and schedules their deletion through it), never use them. Named one by one, so that no
 * wildcard lets the account encrypt, decrypt or grant.
 */
export const KEY_ADMINISTRATION_ACTIONS = [
  'kms:CancelKeyDeletion',
  'kms:CreateAlias',
  'kms:DeleteAlias',
  'kms:DescribeKey',
  'kms:DisableKey',
  'kms:DisableKeyRotation',
  'kms:EnableKey',
  'kms:EnableKeyRotation',
  'kms:GetKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:ListAliases',
  'kms:ListGrants',
  'kms:ListKeyPolicies',
  'kms:ListKeyRotations',
  'kms:ListResourceTags',
  'kms:PutKeyPolicy',
  'kms:RevokeGrant',
  'kms:RotateKeyOnDemand',
  'kms:ScheduleKeyDeletion',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:UpdateAlias',
  'kms:UpdateKeyDescription',
];

/** A key policy in place of CDK's default (the account may do `kms:*`): administration only. */
export const keyAdministrationPolicy = () =>
  new iam.PolicyDocument({
    statements: [
      new iam.PolicyStatement({
        sid: 'KeyAdministration',
        principals: [new iam.AccountRootPrincipal()],
        actions: KEY_ADMINISTRATION_ACTIONS,
        resources: ['*'],
      }),
    ],
  });

/**
 * Encrypts the stores' access tokens and webhook secrets (shared/aws/kms-cipher.ts), and the alarm topic's
 * messages: one key, not two (issue 44), each use held to its own encryption context (the functions' to a
 * secret's, CloudWatch's to the topic's: lib/constructs/alarms.ts `alarmTopicKeyStatement`).
 */
export const addSecretsKey = (scope: Construct, config: DeployConfig): kms.Key => {
  const { stackName } = Stack.of(scope);
  return new kms.Key(scope, 'SecretsKey', {
    description: `${stackName}: store access tokens and webhook secrets, alarm notifications`,
    alias: `alias/${stackName}-secrets`,
    enableKeyRotation: true,
    removalPolicy: config.dataRemovalPolicy,
    pendingWindow: keyPendingWindow(config),
    // No use by the account at large: grantSecretsKeyUse names the roles that may encrypt or decrypt.
    policy: keyAdministrationPolicy(),
  });
};

/**
 * The secrets key's policy lets exactly the roles of the functions that declare the key (lib/routes.ts)
 * encrypt or decrypt, each group of roles for the actions and the secrets they declare and no other
 * (lib/access.ts `keyUseGrants`, from the same declarations as the roles' own policies), under the
 * encryption context the cipher sends. The account is the principal and the roles a condition
 * (`aws:PrincipalArn`): KMS refuses a policy naming a role IAM has not finished creating, and this
 * one is written in the same deployment as the roles.
 */
export const grantSecretsKeyUse = (key: kms.Key, functions: Map<string, lambda.IFunction>) => {
  const statements = keyUseStatements(keyUseGrants(allFunctions()), {
    accountRoot: new iam.AccountRootPrincipal().arn,
    principalArn: (name) => functions.get(name)!.role!.roleArn,
  });
  for (const statement of statements) key.addToResourcePolicy(iam.PolicyStatement.fromJson(statement));
};
