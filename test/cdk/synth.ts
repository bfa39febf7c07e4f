import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { App, Tags } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
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

export const synthesize = (options: { context?: Record<string, unknown>; bundle: boolean }): Synthesized => {
  const built = buildApp(options);
  return { ...built, template: Template.fromStack(built.stack) };
};

export const removeOutput = (app: App | undefined) => {
  if (app) rmSync(app.outdir, { recursive: true, force: true });
};

export type Resources = Record<
  string,
  { Type: string; Properties?: any; DeletionPolicy?: string; UpdateReplacePolicy?: string; DependsOn?: string[] }
>;

export const logicalId = (stack: ResellerRoutingStack, construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as any);

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
