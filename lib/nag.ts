import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';

/**
 * cdk-nag 3 runs as a validation plugin of the app (an Aspect fails in v3): every synth, the CLI's
 * included, checks the templates against the AWS Solutions rules, and an unacknowledged error fails it.
 */
export const addNagChecks = (app: App) => Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

/**
 * Acknowledges one cdk-nag finding on the narrowest construct that raises it. `rule` is the rule id,
 * with the finding in brackets for rules that report several (`AwsSolutions-IAM5[Resource::*]`);
 * the reason is one sentence saying why the rule does not apply.
 */
export const acknowledge = (scope: IConstruct, rule: string, reason: string) => {
  if (!/^AwsSolutions-[A-Z]+\d+(\[.+\])?$/.test(rule)) throw new Error(`not a cdk-nag AwsSolutions rule id: ${rule}`);
  if (reason.trim().length < 20) throw new Error(`acknowledging ${rule} needs a reason`);
  // Qualified with the plugin's name, the acknowledgment is applied by CDK itself, which lists the
  // finding with its reason under `suppressedViolations` in cdk.out/validation-report.json; a bare
  // id is dropped by cdk-nag before it reports, leaving no trace of what was acknowledged.
  Validations.of(scope).acknowledge({ id: `AwsSolutions::${rule}`, reason });
};
