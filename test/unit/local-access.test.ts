import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { identityStatements, keyUseGrants, keyUseStatements } from '../../lib/access.js';
import { allFunctions } from '../../lib/functions.js';
import {
  authorize,
  LOCAL_ACCOUNT,
  type LocalAccess,
  localFunctionArn,
  localRoleArn,
  localTableArn,
  requestsFor,
} from '../../lib/local/authorize.js';
import { startInvokeEndpoint } from '../../lib/local/invoke-endpoint.js';
import { type KmsEmulator, startKmsEmulator } from '../../lib/local/kms-emulator.js';
import { decide, type Statement } from '../../lib/policy.js';
import type { Access } from '../../lib/routes.js';
import { handOffSlowTry } from '../../shared/events/delivery-hand-off.js';

const KEY = 'arn:aws:kms:us-east-1:000000000000:key/local-secrets';
const QUEUE_URL = 'http://127.0.0.1:1/000000000000/sync';
const QUEUE_ARN = 'arn:aws:sqs:us-east-1:000000000000:sync';

const accessOf = (functionName: string, access: Access): LocalAccess => ({
  functionName,
  statements: identityStatements(access, {
    tableArn: localTableArn('t'),
    keyArn: KEY,
    queueArn: (queue) => `arn:aws:sqs:us-east-1:000000000000:${queue}`,
    functionArn: localFunctionArn,
  }),
  queueArns: { [QUEUE_URL]: QUEUE_ARN },
  keyArn: KEY,
});

describe('authorize: a function call checked against its role policy, as AWS does', () => {
  const access = accessOf('Fn', {
    table: ['GetItem', 'TransactWriteItems'],
    indexes: ['lists'],
    queues: { sync: ['SendMessage'] },
    key: { actions: ['Decrypt'], fields: ['webhookSecret'] },
  });
  const denied = (target: string, input: Record<string, unknown>) =>
    authorize(target, input, access)?.request.action ?? 'allowed';

  it('allows the declared table actions and index, on the table only', () => {
    expect(denied('DynamoDB_20120810.GetItem', { TableName: 't' })).toBe('allowed');
    expect(denied('DynamoDB_20120810.Query', { TableName: 't', IndexName: 'GSI1' })).toBe('allowed');
    expect(denied('DynamoDB_20120810.GetItem', { TableName: 'other' })).toBe('dynamodb:GetItem');
    expect(denied('DynamoDB_20120810.Query', { TableName: 't', IndexName: 'GSI2' })).toBe('dynamodb:Query');
    // A Query of the table itself is another action than a Query of an index.
    expect(denied('DynamoDB_20120810.Query', { TableName: 't' })).toBe('dynamodb:Query');
    expect(denied('DynamoDB_20120810.DeleteItem', { TableName: 't' })).toBe('dynamodb:DeleteItem');
  });

  it('authorises a transaction by the item actions inside it, and a batch per table', () => {
    const transact = (kind: string) => ({
      TransactItems: [{ Put: { TableName: 't' } }, { [kind]: { TableName: 't' } }],
    });
    expect(denied('DynamoDB_20120810.TransactWriteItems', transact('ConditionCheck'))).toBe('allowed');
    expect(denied('DynamoDB_20120810.TransactWriteItems', transact('Delete'))).toBe('dynamodb:DeleteItem');
    expect(denied('DynamoDB_20120810.BatchGetItem', { RequestItems: { t: {} } })).toBe('dynamodb:BatchGetItem');
    expect(requestsFor('dynamodb', 'BatchWriteItem', { RequestItems: { t: {}, u: {} } }, access)).toHaveLength(2);
  });

  it('maps SQS batches to their single action, on the queue named by its URL', () => {
    expect(denied('AmazonSQS.SendMessageBatch', { QueueUrl: QUEUE_URL })).toBe('allowed');
    expect(denied('AmazonSQS.ChangeMessageVisibility', { QueueUrl: QUEUE_URL })).toBe('sqs:ChangeMessageVisibility');
    expect(denied('AmazonSQS.SendMessage', { QueueUrl: 'http://127.0.0.1:1/000000000000/poll' })).toBe(
      'sqs:SendMessage',
    );
  });

  it('authorises Lambda’s Invoke (a REST path, no target) on the functions `invokes` names only', () => {
    const invoker = accessOf('Worker', { invokes: ['SlowTry'] });
    const invoke = (FunctionName: string, who = invoker) =>
      authorize(undefined, { FunctionName }, who, `/2015-03-31/functions/${FunctionName}/invocations`);
    expect(invoke('SlowTry')).toBeUndefined();
    expect(invoke(localFunctionArn('SlowTry'))).toBeUndefined();
    const refused = invoke('EventRecorder');
    expect(refused?.request).toMatchObject({
      action: 'lambda:InvokeFunction',
      resource: localFunctionArn('EventRecorder'),
    });
    expect(refused?.denial).toMatchObject({
      statusCode: 403,
      headers: { 'x-amzn-errortype': 'AccessDeniedException' },
    });
    // A function that declares none may invoke none.
    expect(invoke('SlowTry', access)?.request.action).toBe('lambda:InvokeFunction');
  });

  it('conditions key use on the declared secrets and the cipher’s context', () => {
    const context = (field: string, extra: Record<string, string> = {}) => ({
      KeyId: KEY,
      EncryptionContext: { field, storeId: 'rst_1', ...extra },
    });
    expect(denied('TrentService.Decrypt', context('webhookSecret'))).toBe('allowed');
    expect(denied('TrentService.Decrypt', context('accessToken'))).toBe('kms:Decrypt');
    expect(denied('TrentService.Decrypt', context('webhookSecret', { other: 'x' }))).toBe('kms:Decrypt');
    expect(denied('TrentService.Encrypt', context('webhookSecret'))).toBe('kms:Encrypt');
  });

  it('answers with the error AWS gives, per service', () => {
    const dynamo = authorize('DynamoDB_20120810.DeleteItem', { TableName: 't' }, access)!.denial;
    expect([dynamo.statusCode, JSON.parse(dynamo.body).__type]).toEqual([
      400,
      'com.amazon.coral.service#AccessDeniedException',
    ]);
    expect(JSON.parse(dynamo.body).Message).toBe(
      'User: arn:aws:sts::000000000000:assumed-role/Fn/Fn is not authorized to perform: dynamodb:DeleteItem on ' +
        'resource: arn:aws:dynamodb:us-east-1:000000000000:table/t ' +
        'because no identity-based policy allows the dynamodb:DeleteItem action',
    );
    const sqs = authorize('AmazonSQS.DeleteMessage', { QueueUrl: QUEUE_URL }, access)!.denial;
    expect([sqs.statusCode, sqs.headers['x-amzn-query-error']]).toEqual([403, 'AccessDenied;Sender']);
  });
});

describe('policy evaluation (lib/policy.ts)', () => {
  const allow: Statement = { Effect: 'Allow', Action: 'kms:*', Resource: '*' };
  it('lets an explicit Deny win over an Allow', () => {
    expect(decide([allow], { action: 'kms:Decrypt', resource: KEY })).toBe('allow');
    expect(decide([allow, { ...allow, Effect: 'Deny' }], { action: 'kms:Decrypt', resource: KEY })).toBe(
      'explicitDeny',
    );
    expect(decide([], { action: 'kms:Decrypt', resource: KEY })).toBe('implicitDeny');
  });

  it('fails loudly on a condition operator it does not evaluate', () => {
    const statement = { ...allow, Condition: { NumericLessThan: { 'kms:x': '1' } } };
    expect(() => decide([statement], { action: 'kms:Decrypt', resource: KEY, keys: { 'kms:x': '0' } })).toThrow(
      /NumericLessThan/,
    );
  });
});

describe('the KMS stand-in applies the key policy the stack writes', () => {
  let kms: KmsEmulator;
  const names = new Set(allFunctions().map((fn) => fn.name));
  beforeAll(async () => {
    kms = await startKmsEmulator({
      keyMaterial: Buffer.alloc(32, 7),
      keyPolicy: {
        statements: keyUseStatements(keyUseGrants(allFunctions()), {
          accountRoot: `arn:aws:iam::${LOCAL_ACCOUNT}:root`,
          principalArn: localRoleArn,
        }),
        principalOf: (id) => (names.has(id) ? { arn: localRoleArn(id), account: LOCAL_ACCOUNT } : undefined),
      },
    });
  });
  afterAll(() => kms.stop());
  const client = (accessKeyId: string) =>
    new KMSClient({ endpoint: kms.url, region: 'us-east-1', credentials: { accessKeyId, secretAccessKey: 'x' } });
  const context = (field: string) => ({ field, storeId: 'rst_1' });
  const sealed = async (field: string) =>
    (
      await client('local').send(
        new EncryptCommand({ KeyId: kms.keyId, Plaintext: Buffer.from('secret'), EncryptionContext: context(field) }),
      )
    ).CiphertextBlob!;
  const decrypt = async (as: string, field: string) => {
    try {
      const out = await client(as).send(
        new DecryptCommand({ CiphertextBlob: await sealed(field), EncryptionContext: context(field) }),
      );
      return Buffer.from(out.Plaintext!).toString();
    } catch (error) {
      return (error as Error).name;
    }
  };

  it('lets each function use the secrets it declares, and no other; the runtime’s own are not checked', async () => {
    expect(await decrypt('OrdersWebhook', 'webhookSecret')).toBe('secret');
    expect(await decrypt('OrdersWebhook', 'accessToken')).toBe('AccessDeniedException');
    expect(await decrypt('SyncWorker', 'refreshToken')).toBe('secret');
    expect(await decrypt('EventDeliveryWorker', 'endpointSecret')).toBe('secret');
    expect(await decrypt('EventDeliveryWorker', 'webhookSecret')).toBe('AccessDeniedException');
    expect(await decrypt('GetOrder', 'accessToken')).toBe('AccessDeniedException');
    expect(await decrypt('local', 'accessToken')).toBe('secret');
    // Encrypt-only functions may not decrypt.
    expect(await decrypt('CreateResellerStore', 'accessToken')).toBe('AccessDeniedException');
    expect(kms.calls.Decrypt).toBe(4);
  });
});

describe('the local Invoke API: a signed invoke checked against its caller’s role, however it was sent', () => {
  // The callers by their access key ids: `test` is the unit tests' environment (the hand-off signs with it).
  const roles: Record<string, LocalAccess> = {
    Worker: accessOf('Worker', { invokes: ['SlowTry'] }),
    test: accessOf('Other', {}),
  };
  const kept: string[] = [];
  let endpoint: Awaited<ReturnType<typeof startInvokeEndpoint>>;
  beforeAll(async () => {
    endpoint = await startInvokeEndpoint(
      async () => ({}),
      async (name, payload) => {
        kept.push(`${name} ${payload}`);
        return true;
      },
      (accessKeyId, name, path) =>
        roles[accessKeyId] && authorize(undefined, { FunctionName: name }, roles[accessKeyId], path)?.denial,
    );
  });
  afterAll(() => endpoint.stop());
  const invokeAs = async (accessKeyId: string, FunctionName: string) => {
    const lambda = new LambdaClient({
      region: 'us-east-1',
      endpoint: endpoint.url,
      credentials: { accessKeyId, secretAccessKey: 'x' },
      maxAttempts: 1,
    });
    try {
      return (await lambda.send(new InvokeCommand({ FunctionName, InvocationType: 'Event', Payload: '{}' })))
        .StatusCode;
    } catch (error) {
      return (error as Error).name;
    }
  };

  it('accepts what the role allows, refuses the rest as Lambda does, and an unsigned request', async () => {
    expect(await invokeAs('Worker', 'SlowTry')).toBe(202);
    expect(await invokeAs('Worker', 'EventRecorder')).toBe('AccessDeniedException');
    expect(await invokeAs('local', 'EventRecorder')).toBe(202);
    expect(kept).toEqual(['SlowTry {}', 'EventRecorder {}']);
    const unsigned = await fetch(`${endpoint.url}/2015-03-31/functions/SlowTry/invocations`, {
      method: 'POST',
      headers: { 'x-amz-invocation-type': 'Event' },
      body: '{}',
    });
    expect(unsigned.status).toBe(403);
    expect(unsigned.headers.get('x-amzn-errortype')).toBe('MissingAuthenticationTokenException');
  });

  it('refuses the delivery worker’s signed hand-off when its role may not invoke: a systemic error', async () => {
    process.env.AWS_ENDPOINT_URL_LAMBDA = endpoint.url;
    process.env.EVENT_DELIVERY_SLOW_TRY_FUNCTION_NAME = 'SlowTry';
    try {
      const refused = await handOffSlowTry({ eventId: 'evt_1', endpointId: 'we_1', attempts: 0 }).catch((e) => e);
      expect(refused).toMatchObject({ name: 'AccessDeniedException', message: expect.stringMatching(/403/) });
      expect(kept).toHaveLength(2);
      roles.test = roles.Worker;
      await handOffSlowTry({ eventId: 'evt_1', endpointId: 'we_1', attempts: 0 });
      expect(kept[2]).toBe('SlowTry {"eventId":"evt_1","endpointId":"we_1","attempts":0}');
    } finally {
      delete process.env.AWS_ENDPOINT_URL_LAMBDA;
      delete process.env.EVENT_DELIVERY_SLOW_TRY_FUNCTION_NAME;
    }
  });
});
