import { randomUUID } from 'node:crypto';
import { decide, type Request, type Statement } from '../policy.js';

/**
 * What AWS checks before it serves a function's call, locally: the IAM actions and resources one
 * DynamoDB, SQS or KMS request needs (as AWS authorises it), evaluated against the function's role
 * policy (lib/access.ts `identityStatements`, the statements the stack writes), and the error AWS
 * answers when one is not allowed. Runs in each execution environment, on the request the SDK has
 * signed (lib/local/bootstrap.ts): no extra hop, microseconds a call. Lambda's Invoke is checked by the
 * local Invoke API too (invoke-endpoint.ts: the caller named by its SigV4 access key id), so a signed call
 * no SDK client made (the delivery worker's hand-off) is held to the same role. The secrets key's own
 * policy is the KMS stand-in's to apply (lib/local/kms-emulator.ts), as on AWS.
 */

export const LOCAL_ACCOUNT = '000000000000';
export const LOCAL_REGION = 'us-east-1';

/** The role a function runs as locally, as `aws:PrincipalArn` names it. */
export const localRoleArn = (functionName: string) => `arn:aws:iam::${LOCAL_ACCOUNT}:role/${functionName}`;
/** A function of the runtime, as Lambda's ARN names it. */
export const localFunctionArn = (functionName: string) =>
  `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${functionName}`;
export const localTableArn = (tableName: string) =>
  `arn:aws:dynamodb:${LOCAL_REGION}:${LOCAL_ACCOUNT}:table/${tableName}`;

/** A function's grants as its environment gets them: its role policy and where its queues are. */
export interface LocalAccess {
  functionName: string;
  statements: Statement[];
  /** Queue URL → ARN, for the queues the runtime made. */
  queueArns: Record<string, string>;
  /** The secrets key's ARN: the only key there is locally, whatever a ciphertext names. */
  keyArn: string;
}

type Input = Record<string, any>;

const TRANSACT_ACTIONS: Record<string, string> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
};

const dynamoRequests = (operation: string, input: Input): Request[] => {
  const tableArn = (name: string | undefined) => (name ? localTableArn(name) : '*');
  switch (operation) {
    case 'BatchGetItem':
    case 'BatchWriteItem':
      return Object.keys(input.RequestItems ?? {}).map((table) => ({
        action: `dynamodb:${operation}`,
        resource: tableArn(table),
      }));
    case 'TransactWriteItems':
    case 'TransactGetItems':
      // A transaction is authorised by the item actions inside it: there is no IAM action of its name.
      return (input.TransactItems ?? []).flatMap((item: Input) =>
        Object.entries(item)
          .filter(([kind, body]) => body && TRANSACT_ACTIONS[kind])
          .map(([kind, body]) => ({
            action: `dynamodb:${TRANSACT_ACTIONS[kind]}`,
            resource: tableArn((body as Input).TableName),
          })),
      );
    default: {
      const table = tableArn(input.TableName);
      return [
        { action: `dynamodb:${operation}`, resource: input.IndexName ? `${table}/index/${input.IndexName}` : table },
      ];
    }
  }
};

/** The IAM action of an SQS operation: a batch needs its single action. */
const SQS_ACTIONS: Record<string, string> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

const sqsRequests = (operation: string, input: Input, access: LocalAccess): Request[] => {
  const byName = (name: string) => `arn:aws:sqs:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${name}`;
  const resource = input.QueueUrl
    ? (access.queueArns[input.QueueUrl] ?? byName(String(input.QueueUrl).split('/').pop()!))
    : input.QueueName
      ? byName(input.QueueName)
      : '*';
  return [{ action: `sqs:${SQS_ACTIONS[operation] ?? operation}`, resource }];
};

/** The condition keys of a KMS request's encryption context. */
export const encryptionContextKeys = (context: Record<string, string> | undefined) => ({
  ...Object.fromEntries(Object.entries(context ?? {}).map(([k, v]) => [`kms:EncryptionContext:${k}`, v])),
  'kms:EncryptionContextKeys': Object.keys(context ?? {}),
});

const kmsRequests = (operation: string, input: Input, access: LocalAccess): Request[] => [
  {
    action: `kms:${operation}`,
    resource: typeof input.KeyId === 'string' && input.KeyId !== access.keyArn ? input.KeyId : access.keyArn,
    keys: encryptionContextKeys(input.EncryptionContext),
  },
];

export type Service = 'dynamodb' | 'sqs' | 'kms' | 'lambda';

/** Lambda's Invoke (a REST call, no `x-amz-target`): its path names the function. */
const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

const lambdaRequests = (input: Input): Request[] => {
  const name = String(input.FunctionName ?? '');
  return [{ action: 'lambda:InvokeFunction', resource: name.startsWith('arn:') ? name : localFunctionArn(name) }];
};

/** `x-amz-target`'s prefix → the service: all three speak AWS's JSON protocol. */
const SERVICES: Record<string, Service> = { DynamoDB_20120810: 'dynamodb', AmazonSQS: 'sqs', TrentService: 'kms' };

/** The service and operation of a signed request, from its `x-amz-target` (or, for Lambda's Invoke, its path). */
export const targetOf = (
  target: string | undefined,
  path = '',
): { service: Service; operation: string } | undefined => {
  if (!target && INVOKE_PATH.test(path)) return { service: 'lambda', operation: 'Invoke' };
  const [prefix, operation] = (target ?? '').split('.');
  const service = SERVICES[prefix];
  return service && operation ? { service, operation } : undefined;
};

/** What one request needs, action by action. */
export const requestsFor = (service: Service, operation: string, input: Input, access: LocalAccess): Request[] => {
  const requests =
    service === 'dynamodb'
      ? dynamoRequests(operation, input)
      : service === 'sqs'
        ? sqsRequests(operation, input, access)
        : service === 'lambda'
          ? lambdaRequests(input)
          : kmsRequests(operation, input, access);
  const principal = { arn: localRoleArn(access.functionName), account: LOCAL_ACCOUNT };
  return requests.map((request) => ({ ...request, principal }));
};

export interface Denial {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The answer AWS gives a call its policies do not allow: DynamoDB's and KMS's
 * `AccessDeniedException` (400), SQS's `AccessDenied` (403, named by `x-amzn-query-error` for the
 * SDK's query-compatible errors).
 */
export const accessDenied = (
  service: Service,
  request: Request,
  functionName: string,
  policy: 'identity-based' | 'resource-based',
): Denial => {
  const message =
    `User: arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${functionName}/${functionName} is not authorized to perform: ` +
    `${request.action} on resource: ${request.resource} ` +
    `because no ${policy} policy allows the ${request.action} action`;
  const requestId = randomUUID();
  if (service === 'sqs')
    return {
      statusCode: 403,
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-requestid': requestId,
        'x-amzn-query-error': 'AccessDenied;Sender',
      },
      body: JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', message }),
    };
  // Lambda's REST protocol names the error in a header.
  if (service === 'lambda')
    return {
      statusCode: 403,
      headers: {
        'content-type': 'application/json',
        'x-amzn-requestid': requestId,
        'x-amzn-errortype': 'AccessDeniedException',
      },
      body: JSON.stringify({ Type: 'User', Message: message }),
    };
  if (service === 'dynamodb')
    return {
      statusCode: 400,
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': requestId },
      body: JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', Message: message }),
    };
  return {
    statusCode: 400,
    headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': requestId },
    body: JSON.stringify({ __type: 'AccessDeniedException', message }),
  };
};

/** The first request of a call the function's role policy does not allow, answered as AWS would; else undefined. */
export const authorize = (
  target: string | undefined,
  input: Input,
  access: LocalAccess,
  path?: string,
): { denial: Denial; request: Request } | undefined => {
  const call = targetOf(target, path);
  if (!call) return undefined;
  for (const request of requestsFor(call.service, call.operation, input, access)) {
    if (decide(access.statements, request) !== 'allow')
      return { request, denial: accessDenied(call.service, request, access.functionName, 'identity-based') };
  }
  return undefined;
};
