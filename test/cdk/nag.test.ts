import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type App, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import { consoleRoute, routes } from '../../lib/routes.js';
import { buildApp, removeOutput } from './synth.js';

interface Violation {
  ruleName: string;
  severity: string;
  violatingConstructs: { constructPath: string }[];
  acknowledgedId?: string;
  acknowledgedAt?: string;
  reason?: string;
}
interface Report {
  pluginReports: { pluginName: string; violations: Violation[]; suppressedViolations?: Violation[] }[];
}

/**
 * Synthesizes with cdk-nag registered as bin/app.ts registers it. cdk-nag 3 is a validation plugin:
 * an unacknowledged error makes `app.synth()` throw, and the validation report in the cloud
 * assembly lists what it found, acknowledged findings with their reasons.
 */
const runNag = (app: App) => {
  let thrown: unknown;
  try {
    app.synth();
  } catch (error) {
    thrown = error;
  }
  const reportFile = join(app.outdir, 'validation-report.json');
  if (!existsSync(reportFile)) throw thrown ?? new Error('synth wrote no validation report');
  const report: Report = JSON.parse(readFileSync(reportFile, 'utf8'));
  const unacknowledged = report.pluginReports.flatMap((p) =>
    p.violations
      .filter((v) => v.severity === 'error' || v.severity === 'fatal')
      .flatMap((v) => v.violatingConstructs.map((c) => `${p.pluginName}: ${v.ruleName} at ${c.constructPath}`)),
  );
  const acknowledged = report.pluginReports.flatMap((p) => p.suppressedViolations ?? []);
  return { thrown, unacknowledged, acknowledged };
};

/** Every acknowledgment recorded in the construct tree: where, which rule, why. */
const acknowledgments = (root: IConstruct) =>
  root.node
    .findAll()
    .flatMap((c) =>
      c.node.metadata
        .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((m) =>
          Object.entries(m.data as Record<string, string>).map(([id, reason]) => ({ path: c.node.path, id, reason })),
        ),
    );

// The default stage, and one with every optional resource (alarm topic, tracing) in the prod stage.
const variants: [string, Record<string, unknown>][] = [
  ['dev', {}],
  ['prod with alarm e-mails and tracing', { stage: 'prod', alarmEmail: 'ops@example.com', tracing: 'true' }],
  [
    'prod at its own domain, with a DNS-validated certificate',
    {
      stage: 'prod',
      alarmEmail: 'ops@example.com',
      domainName: 'api.example.com',
      hostedZoneId: 'Z0123456789',
      hostedZoneName: 'example.com',
    },
  ],
];

describe('stack under cdk-nag AwsSolutions', () => {
  const apps: App[] = [];
  afterAll(() => apps.forEach(removeOutput));

  describe.each(variants)('%s', (_name, context) => {
    let built: ReturnType<typeof buildApp>;
    let result: ReturnType<typeof runNag>;

    beforeAll(() => {
      built = buildApp({ context, bundle: false, nag: true });
      apps.push(built.app);
      result = runNag(built.app);
    }, 60_000);

    it('has no unacknowledged error', () => {
      expect(result.unacknowledged).toEqual([]);
      expect(result.thrown).toBeUndefined();
    });

    it('acknowledges each finding with its rule id and a reason', () => {
      const acks = acknowledgments(built.app);
      expect(acks.length).toBeGreaterThan(0);
      for (const ack of acks) {
        expect(ack.id).toMatch(/^AwsSolutions::AwsSolutions-[A-Z]+\d+(\[.+\])?$/);
        expect(ack.reason.trim().length).toBeGreaterThanOrEqual(20);
      }
    });

    it('acknowledges only findings that cdk-nag actually reports', () => {
      const used = new Set(result.acknowledged.map((v) => `${v.acknowledgedAt} ${v.acknowledgedId}`));
      expect(
        acknowledgments(built.app)
          .map((a) => `${a.path} ${a.id}`)
          .filter((a) => !used.has(a)),
      ).toEqual([]);
    });

    it('acknowledges APIG4 on the webhook routes, the console and the $default route (a 404), nowhere else', () => {
      const apig4 = result.acknowledged
        .filter((v) => v.ruleName === 'AwsSolutions-APIG4')
        .flatMap((v) => v.violatingConstructs.map((c) => c.constructPath));
      const webhookRoutes = routes.filter((r) => r.auth === 'webhook');
      expect(webhookRoutes.length).toBeGreaterThan(0);
      // HttpApi.addRoutes names a route `<METHOD><path with / as -->`; the routes are in the nested stack Routes.
      expect(apig4.sort()).toEqual(
        [
          ...webhookRoutes.map(
            (r) => `${built.stack.stackName}/Routes/${r.method}${r.path.replaceAll('/', '--')}/Resource`,
          ),
          ...consoleRoute.paths.map(
            (path) => `${built.stack.stackName}/Routes/GET${path.replaceAll('/', '--')}/Resource`,
          ),
          `${built.stack.stackName}/Routes/DefaultRoute/Resource`,
        ].sort(),
      );
    });
  });

  it('fails on a finding nobody acknowledged', () => {
    const { app, stack } = buildApp({ bundle: false, nag: true });
    apps.push(app);
    new sqs.Queue(stack, 'PlainQueue');
    const result = runNag(app);
    expect(result.unacknowledged).toEqual(
      expect.arrayContaining([
        `AwsSolutions: AwsSolutions-SQS3 at ${stack.stackName}/PlainQueue/Resource`,
        `AwsSolutions: AwsSolutions-SQS4 at ${stack.stackName}/PlainQueue/Resource`,
      ]),
    );
    expect(String(result.thrown)).toMatch(/Validation ?Failed/);
  });
});
