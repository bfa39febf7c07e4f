import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { App, NestedStack, Stack, Tags } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { type DeployConfig, loadConfig, stackName } from '../../lib/config.js';
import { addNagChecks } from '../../lib/nag.js';
import { ResellerRoutingStack } from '../../lib/stack.js';

export const PROJECT_ROOT = resolve(__dirname, '../..');

/** The feature flags and defaults of cdk.json, so the tests synthesize what `cdk synth` does. */
const cdkJsonContext = (): Record<string, unknown> =>
  JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context;

export interface Synthesized {
  app: App;
  stack: ResellerRoutingStack;
  config: DeployConfig;
  /** The deployment as one template: the stack's resources and its nested stacks' (flattened). */
  template: Template;
}

/**
 * Builds the app as bin/app.ts does. `bundle: false` skips esbuild (the functions get a placeholder
 * asset), which keeps the extra synths of a test run fast; one synth per run does bundle.
 */
export const buildApp = (options: { context?: Record<string, unknown>; bundle: boolean; nag?: boolean }) => {
  const app = new App({
    context: {
      ...cdkJsonContext(),
      ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
      ...options.context,
    },
  });
  const config = loadConfig(app);
  const stack = new ResellerRoutingStack(app, stackName(config), { config, projectRoot: PROJECT_ROOT });
  Tags.of(app).add('service', 'reseller-routing');
  if (options.nag) addNagChecks(app);
  return { app, stack, config };
};

type Json = any;

/** Every stack of the deployment: the stack and its nested stacks, each with its own template. */
export const stacksOf = (root: Stack) =>
  [root, ...root.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c))].map((stack) => ({
    stack,
    template: Template.fromStack(stack).toJSON() as Json,
  }));

/**
 * The stack and its nested stacks as one template, as if they were one: each nested stack's
 * parameters replaced by what its parent passes (`{ Ref: <the table's id> }`), each output of a
 * nested stack its parent reads replaced by its value, and the nested stacks' own resources left
 * out. A test then finds a function's environment, or an alarm's function, as it did before the
 * split, and asserts the same wiring through the parameters and outputs. Two stacks using one
 * logical id would make it ambiguous: that throws.
 */
export const flatten = (root: Stack): Template => {
  const stacks = stacksOf(root);
  const byStack = new Map(stacks.map((s) => [s.stack, s.template]));
  /** The template and the logical id of each nested stack's resource, in its parent. */
  const nestedAt = new Map<string, { parent: Stack; nested: NestedStack }>();
  for (const { stack } of stacks) {
    if (!NestedStack.isNestedStack(stack)) continue;
    const parent = stack.nestedStackParent!;
    nestedAt.set(`${parent.node.path} ${parent.getLogicalId(stack.nestedStackResource!)}`, { parent, nested: stack });
  }
  const resolve = (value: Json, stack: Stack): Json => {
    if (Array.isArray(value)) return value.map((v) => resolve(v, stack));
    if (!value || typeof value !== 'object') return value;
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === 'Ref' && NestedStack.isNestedStack(stack)) {
      const parent = stack.nestedStackParent!;
      const resource = byStack.get(parent).Resources[parent.getLogicalId(stack.nestedStackResource!)];
      const passed = resource.Properties.Parameters?.[value.Ref];
      if (passed !== undefined) return resolve(passed, parent);
    }
    if (keys.length === 1 && keys[0] === 'Fn::GetAtt') {
      const [id, attribute] = value['Fn::GetAtt'] as [string, string];
      const nested = nestedAt.get(`${stack.node.path} ${id}`)?.nested;
      if (nested && attribute.startsWith('Outputs.'))
        return resolve(byStack.get(nested).Outputs[attribute.slice('Outputs.'.length)].Value, nested);
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, stack)]));
  };
  const resources: Record<string, Json> = {};
  for (const { stack, template } of stacks) {
    for (const [id, resource] of Object.entries(template.Resources as Record<string, Json>)) {
      if (resource.Type === 'AWS::CloudFormation::Stack') continue;
      if (id in resources) throw new Error(`logical id ${id} is in two stacks`);
      resources[id] = resolve(resource, stack);
    }
  }
  const rootTemplate = byStack.get(root);
  return Template.fromJSON({ ...rootTemplate, Resources: resources, Outputs: resolve(rootTemplate.Outputs, root) });
};

export const synthesize = (options: { context?: Record<string, unknown>; bundle: boolean }): Synthesized => {
  const built = buildApp(options);
  return { ...built, template: flatten(built.stack) };
};

export const removeOutput = (app: App | undefined) => {
  if (app) rmSync(app.outdir, { recursive: true, force: true });
};

export type Resources = Record<
  string,
  { Type: string; Properties?: any; DeletionPolicy?: string; UpdateReplacePolicy?: string; DependsOn?: string[] }
>;

/** A construct's logical id in its own stack (the stack itself, or the nested stack it was placed in). */
export const logicalId = (_stack: ResellerRoutingStack, construct: { node: { defaultChild?: unknown } }) => {
  const resource = construct.node.defaultChild as any;
  return Stack.of(resource).getLogicalId(resource);
};

/** Every action string of a policy document, whether a statement names one or a list. */
export const actionsOf = (document: { Statement: { Action: string | string[] }[] }) =>
  document.Statement.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));

/** Everything a role may do: the policies attached to it and its inline policies; managed policies apart. */
export const rolePolicies = (template: Template, roleId: string) => {
  const resources = template.toJSON().Resources as Resources;
  const role = resources[roleId];
  const attached = Object.values(resources).filter(
    (r) => r.Type === 'AWS::IAM::Policy' && (r.Properties.Roles as unknown[]).some((ref: any) => ref.Ref === roleId),
  );
  const documents = [
    ...attached.map((p) => p.Properties.PolicyDocument),
    ...((role.Properties.Policies ?? []) as { PolicyDocument: unknown }[]).map((p) => p.PolicyDocument),
  ] as { Statement: { Action: string | string[]; Resource: unknown; Effect: string }[] }[];
  return { documents, managedPolicyArns: (role.Properties.ManagedPolicyArns ?? []) as unknown[] };
};

/** A resource policy's document that denies `action` to any request made without TLS, among its statements. */
export const denyingWithoutTls = (action: string) => ({
  Statement: Match.arrayWith([
    Match.objectLike({ Effect: 'Deny', Action: action, Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
  ]),
});
