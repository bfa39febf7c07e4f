/**
 * The part of AWS's policy evaluation this service's policies use, on plain policy JSON: an identity
 * policy (a role's) or a resource policy (the secrets key's). The local runtime holds every function
 * to it (lib/local/authorize.ts, lib/local/kms-emulator.ts) and test/cdk/access-template.test.ts
 * evaluates the synthesized template with it. An explicit Deny wins; otherwise an Allow is needed.
 * A condition operator it does not know fails loudly rather than guessing.
 */

export type Values = string | string[];

export interface Statement {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  /** Resource policies only: `*`, or AWS principals (an account's `:root` stands for its every principal). */
  Principal?: '*' | { AWS: Values };
  Action: Values;
  Resource: Values;
  Condition?: Record<string, Record<string, Values>>;
}

/** One IAM action on one resource, with the request's condition keys. */
export interface Request {
  /** `service:Action`, compared without regard to case. */
  action: string;
  resource: string;
  /** The caller, for a resource policy's Principal and `aws:PrincipalArn`. */
  principal?: { arn: string; account: string };
  /** Condition keys (`kms:EncryptionContext:field`…): a string, or a set for multivalued keys. */
  keys?: Record<string, Values | undefined>;
}

export type Decision = 'allow' | 'explicitDeny' | 'implicitDeny';

const list = (values: Values | undefined): string[] =>
  values === undefined ? [] : Array.isArray(values) ? values : [values];

/** IAM's wildcards: `*` any run of characters, `?` one. */
const glob = (pattern: string, value: string, ignoreCase = false) => {
  if (!pattern.includes('*') && !pattern.includes('?'))
    return ignoreCase ? pattern.toLowerCase() === value.toLowerCase() : pattern === value;
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, ignoreCase ? 'i' : '').test(value);
};

const COMPARE: Record<string, (pattern: string, value: string) => boolean> = {
  StringEquals: (p, v) => p === v,
  StringLike: (p, v) => glob(p, v),
  ArnEquals: (p, v) => p === v,
  ArnLike: (p, v) => glob(p, v),
  Bool: (p, v) => p.toLowerCase() === v.toLowerCase(),
};
const NEGATED: Record<string, string> = { StringNotEquals: 'StringEquals', StringNotLike: 'StringLike' };

/** One `operator: { key: values }` pair of a Condition block. */
const conditionHolds = (operator: string, key: string, expected: Values, request: Request): boolean => {
  const keys: Record<string, Values | undefined> = {
    ...request.keys,
    ...(request.principal ? { 'aws:PrincipalArn': request.principal.arn } : {}),
  };
  const present = keys[key];
  let op = operator;
  const set = op.match(/^(ForAllValues|ForAnyValue):/)?.[1];
  if (set) op = op.slice(set.length + 1);
  const ifExists = op.endsWith('IfExists');
  if (ifExists) op = op.slice(0, -'IfExists'.length);
  if (op === 'Null') return list(expected).some((e) => (e === 'true') === (present === undefined));
  if (present === undefined) return ifExists || set === 'ForAllValues';
  const negated = NEGATED[op];
  const compare = COMPARE[negated ?? op];
  if (!compare) throw new Error(`policy condition operator ${operator} is not evaluated here`);
  const matchesAny = (value: string) => list(expected).some((pattern) => compare(pattern, value));
  const values = list(present);
  const test = (value: string) => (negated ? !matchesAny(value) : matchesAny(value));
  if (set === 'ForAllValues') return values.every(test);
  if (set === 'ForAnyValue') return values.some(test);
  // A single-valued key: a set given for it would be a policy of another kind.
  return values.length === 1 && test(values[0]);
};

const principalMatches = (statement: Statement, request: Request) => {
  if (statement.Principal === undefined) return true;
  if (statement.Principal === '*') return true;
  if (!request.principal) return false;
  const { arn, account } = request.principal;
  return list(statement.Principal.AWS).some(
    (p) => p === '*' || p === arn || p === account || /^arn:[^:]+:iam::(\d+|[^:]+):root$/.exec(p)?.[1] === account,
  );
};

/** Whether `statement` applies to `request` (its Effect aside). */
export const statementMatches = (statement: Statement, request: Request) =>
  principalMatches(statement, request) &&
  list(statement.Action).some((a) => glob(a, request.action, true)) &&
  list(statement.Resource).some((r) => glob(r, request.resource)) &&
  Object.entries(statement.Condition ?? {}).every(([operator, block]) =>
    Object.entries(block).every(([key, expected]) => conditionHolds(operator, key, expected, request)),
  );

/** The statements' answer to one request: an explicit Deny wins, else an Allow is needed. */
export const decide = (statements: readonly Statement[], request: Request): Decision => {
  let allowed = false;
  for (const statement of statements) {
    if (!statementMatches(statement, request)) continue;
    if (statement.Effect === 'Deny') return 'explicitDeny';
    allowed = true;
  }
  return allowed ? 'allow' : 'implicitDeny';
};
