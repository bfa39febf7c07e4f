import { Duration, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { type KeyAttribute, TABLE_DEFINITION } from '../../shared/dynamo/table-definition.js';
import type { DeployConfig } from '../config.js';

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

/** Encrypts the stores' access tokens and webhook secrets (shared/aws/kms-cipher.ts) and nothing else. */
export const addSecretsKey = (scope: Construct, config: DeployConfig): kms.Key => {
  const { stackName } = Stack.of(scope);
  return new kms.Key(scope, 'SecretsKey', {
    description: `${stackName}: store access tokens and webhook secrets`,
    alias: `alias/${stackName}-secrets`,
    enableKeyRotation: true,
    removalPolicy: config.dataRemovalPolicy,
    pendingWindow: keyPendingWindow(config),
  });
};
