import { allFunctions } from '../../lib/functions.js';
import { decide, type Request, type Statement } from '../../lib/policy.js';
import type { KeyAction, SecretField } from '../../lib/routes.js';
import { logicalId, type Resources, removeOutput, rolePolicies, type Synthesized, synthesize } from './synth.js';

/**
 * The synthesized prod template, evaluated as AWS would: KMS needs an allow in the role's policy and
 * in the key policy, so for every role each (action, secret) its policy grants on the secrets key
 * must be allowed by the key policy too, and the key policy may let no role use a secret it did not
 * declare in lib/routes.ts.
 */

const ACCOUNT = '123456789012';
/** Every secret a ciphertext can hold (shared/aws/kms-cipher.ts); the record keeps the list complete. */
const FIELDS = Object.keys({
  accessToken: true,
  webhookSecret: true,
  endpointSecret: true,
  refreshToken: true,
  clientId: true,
  clientSecret: true,
} satisfies Record<SecretField, true>) as SecretField[];
const ACTIONS: KeyAction[] = ['Encrypt', 'Decrypt'];

/** CloudFormation's references as strings: a resource's ARN by its logical id, the account and partition. */
const resolve = (value: unknown): any => {
  if (Array.isArray(value)) return value.map(resolve);
  if (!value || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  if (entries.length === 1) {
    const [[name, argument]] = entries as [[string, any]];
    if (name === 'Ref')
      return argument === 'AWS::Partition' ? 'aws' : argument === 'AWS::AccountId' ? ACCOUNT : `ref:${argument}`;
    if (name === 'Fn::GetAtt') return `arn:aws:cfn::${ACCOUNT}:${argument[0]}/${argument[1]}`;
    if (name === 'Fn::Join') return (resolve(argument[1]) as string[]).join(argument[0]);
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, resolve(v)]));
};

const arnOf = (id: string) => resolve({ 'Fn::GetAtt': [id, 'Arn'] }) as string;

/** The key use a role can get: the request KMS evaluates for one action on one secret of a store. */
const keyRequest = (action: KeyAction, field: string, principalArn: string, keyArn: string): Request => ({
  action: `kms:${action}`,
  resource: keyArn,
  principal: { arn: principalArn, account: ACCOUNT },
  keys: {
    'kms:EncryptionContext:field': field,
    'kms:EncryptionContext:storeId': 'rst_1',
    'kms:EncryptionContextKeys': ['field', 'storeId'],
  },
});

let prod: Synthesized;
beforeAll(() => {
  prod = synthesize({ bundle: false, context: { stage: 'prod', alarmEmail: 'ops@example.com' } });
});
afterAll(() => removeOutput(prod?.app));

describe('the secrets key in the synthesized prod template', () => {
  let keyArn: string;
  let keyPolicy: Statement[];
  const roleOf = (name: string) => logicalId(prod.stack, prod.stack.functions.get(name)!.role as never);
  const identityPolicy = (name: string): Statement[] =>
    resolve(rolePolicies(prod.template, roleOf(name)).documents.flatMap((d) => d.Statement));

  beforeAll(() => {
    const keyId = logicalId(prod.stack, prod.stack.secretsKey);
    const resources = prod.template.toJSON().Resources as Resources;
    keyArn = arnOf(keyId);
    keyPolicy = resolve(resources[keyId].Properties.KeyPolicy.Statement);
  });

  /** Every (function, action, secret) with what the role's policy and the key policy answer. */
  const evaluations = () =>
    allFunctions().flatMap((fn) => {
      const identity = identityPolicy(fn.name);
      const principal = arnOf(roleOf(fn.name));
      return ACTIONS.flatMap((action) =>
        FIELDS.map((field) => {
          const request = keyRequest(action, field, principal, keyArn);
          return {
            grant: `${fn.name} ${action} ${field}`,
            declared: Boolean(fn.access.key?.actions.includes(action) && fn.access.key.fields.includes(field)),
            role: decide(identity, request),
            key: decide(keyPolicy, request),
          };
        }),
      );
    });

  it('allows every (role, action, secret) a role policy grants on the key', () => {
    const granted = evaluations().filter((e) => e.role === 'allow');
    expect(granted.length).toBeGreaterThan(50);
    expect(granted.filter((e) => e.key !== 'allow').map((e) => e.grant)).toEqual([]);
  });

  it('lets no role use a secret it did not declare, by the key policy alone or by its own policy', () => {
    const all = evaluations();
    expect(all.filter((e) => e.key === 'allow' && !e.declared).map((e) => e.grant)).toEqual([]);
    expect(all.filter((e) => e.role === 'allow' && !e.declared).map((e) => e.grant)).toEqual([]);
    // And every declared use is allowed by both: what the tests run locally is what AWS allows.
    expect(all.filter((e) => e.declared && (e.role !== 'allow' || e.key !== 'allow')).map((e) => e.grant)).toEqual([]);
  });

  it('refuses a context without a store or with another key, and any principal that is not a declaring role', () => {
    const principal = arnOf(roleOf('SyncWorker'));
    const request = keyRequest('Decrypt', 'accessToken', principal, keyArn);
    expect(decide(keyPolicy, request)).toBe('allow');
    const { 'kms:EncryptionContext:storeId': _, ...withoutStore } = request.keys!;
    expect(decide(keyPolicy, { ...request, keys: { ...withoutStore, 'kms:EncryptionContextKeys': ['field'] } })).toBe(
      'implicitDeny',
    );
    expect(
      decide(keyPolicy, {
        ...request,
        keys: { ...request.keys, 'kms:EncryptionContextKeys': ['field', 'storeId', 'other'] },
      }),
    ).toBe('implicitDeny');
    for (const arn of [arnOf(roleOf('GetOrder')), `arn:aws:iam::${ACCOUNT}:root`, `arn:aws:iam::${ACCOUNT}:role/x`])
      expect(decide(keyPolicy, { ...request, principal: { arn, account: ACCOUNT } })).toBe('implicitDeny');
  });
});

describe('prod data', () => {
  it('is kept on update or delete, but removed by the rollback of the deployment that created it', () => {
    const resources = prod.template.toJSON().Resources as Resources;
    const data = Object.entries(resources).filter(([, r]) =>
      ['AWS::DynamoDB::Table', 'AWS::KMS::Key', 'AWS::SQS::Queue', 'AWS::Logs::LogGroup'].includes(r.Type),
    );
    const ids = [prod.stack.table, prod.stack.secretsKey, ...Object.values(prod.stack.queues)].map((c) =>
      logicalId(prod.stack, c),
    );
    expect(data.map(([id]) => id)).toEqual(expect.arrayContaining(ids));
    for (const [id, resource] of data)
      expect([id, resource.DeletionPolicy, resource.UpdateReplacePolicy]).toEqual([
        id,
        'RetainExceptOnCreate',
        'Retain',
      ]);
  });
});
