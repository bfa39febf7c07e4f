import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Tags } from 'aws-cdk-lib';
import { ConfigError, type DeployConfig, loadConfig, stackName } from '../lib/config.js';
import { SERVICE_NAME } from '../lib/environment.js';
import { addNagChecks } from '../lib/nag.js';
import { ResellerRoutingStack } from '../lib/stack.js';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));

// `npx cdk synth|deploy` runs this file with CDK_OUTDIR and the context set. Run directly
// (`npx tsx bin/app.ts [-c key=value]…`), it synthesizes to cdk.out itself with cdk.json's context,
// so the templates and the cdk-nag report can be produced without the CLI.
const runByCli = process.env.CDK_OUTDIR !== undefined;
const standalone = () => {
  const context: Record<string, unknown> =
    JSON.parse(readFileSync(join(projectRoot, 'cdk.json'), 'utf8')).context ?? {};
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    if ((args[i] === '-c' || args[i] === '--context') && args[i + 1]?.includes('=')) {
      const [key, ...value] = args[++i].split('=');
      context[key] = value.join('=');
    }
  }
  return { outdir: join(projectRoot, 'cdk.out'), context };
};

const app = new App(runByCli ? {} : standalone());
let config: DeployConfig;
try {
  config = loadConfig(app);
} catch (error) {
  // A context value that cannot be deployed is the operator's to fix: one line, not a stack trace.
  if (!(error instanceof ConfigError)) throw error;
  console.error(`error: ${error.message}`);
  process.exit(1);
}

new ResellerRoutingStack(app, stackName(config), {
  config,
  projectRoot,
  description: `Reseller order routing (${config.stage})`,
});
Tags.of(app).add('service', SERVICE_NAME);
Tags.of(app).add('stage', config.stage);

addNagChecks(app);

if (!runByCli) {
  app.synth();
  console.log(
    `synthesized ${stackName(config)} to ${join(projectRoot, 'cdk.out')}; cdk-nag found no unacknowledged errors`,
  );
}
