/**
 * `npm run bench:cold`: bundle size and cold start of every function against a baseline.
 *
 * Each function of lib/functions.ts is bundled with the stack's options (lib/bundling.ts), and so
 * is its baseline: a handler that only builds the SDK clients the function's `access`
 * implies (the DynamoDB document client for table actions, SQS for queues, KMS for the key) and
 * answers after one DynamoDB GetItem, the one round trip every function's first event makes too.
 * Each bundle then starts in a fresh `node` (Node 24, `--enable-source-maps` as on Lambda) that
 * imports it (init: module evaluation, clients built) and runs one invocation against the local
 * engines of one local runtime. Median of `--runs` (default 5) runs, function and baseline alternating.
 *
 *   npm run bench:cold [-- --runs 5] [-- --only GetSyncJob,SyncWorker] [-- --quick]
 *
 * Targets: init + first invocation ≤ 1.2 × baseline, bundle ≤ 1.15 × baseline. A miss is printed
 * with the packages that make the difference (esbuild metafile). The exit code is 0 unless a
 * function could not be built or answered its event badly; timings never fail the run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_OPTIONS } from '../lib/bundling.js';
import { buildConsole, consoleDefine } from '../lib/console-build.js';
import { type LocalRuntime, startLocalRuntime } from '../lib/local/runtime.js';
import { type BuiltBundle, bundle, bytesByPackage, importChain, PROJECT_ROOT, sdkClientsIn } from './bundling.js';
import { BENCH_API_KEYS, fixed, flags, median, positiveNumber, progress, step, table } from './common.js';
import { allFunctions, answeredWell, type BenchFunction, describeAnswer, firstEvent } from './functions.js';

const TARGET_INIT = 1.2;
const TARGET_SIZE = 1.15;
const QUICK_SUBSET = ['GetSyncJob', 'OrdersWebhook', 'Authorizer', 'SyncWorker'];
/** A bundle this small imports no SDK client: a placeholder handler, not a function to measure. */
const PLACEHOLDER_BYTES = 1024;

const args = flags({ runs: { type: 'string' }, only: { type: 'string' }, keep: { type: 'boolean', default: false } });
const runs = args.quick ? 1 : Math.round(positiveNumber('runs', args.runs, 5));
const only = args.only?.split(',').map((s) => s.trim()) ?? (args.quick ? QUICK_SUBSET : undefined);
const functions = allFunctions().filter((f) => !only || only.includes(f.name));
if (!functions.length) throw new Error(`no function named ${only?.join(', ')}`);

/** The baseline of a function: its SDK clients, built as shared/aws/*.ts builds them, and one GetItem. */
const baselineSource = (fn: BenchFunction) => {
  // A function that only queries an index (the poll scheduler) reads the table as much as one that gets an item.
  const table = !!fn.access.table?.length || !!fn.access.indexes?.length;
  const queues = Object.values(fn.access.queues ?? {}).some((a) => a?.length);
  const key = !!fn.access.key?.actions.length;
  return [
    table && "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
    table && "import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';",
    queues && "import { SQSClient } from '@aws-sdk/client-sqs';",
    key && "import { KMSClient } from '@aws-sdk/client-kms';",
    table &&
      'const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({}), ' +
        '{ marshallOptions: { removeUndefinedValues: true } });',
    queues && 'const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });',
    key && 'const kms = new KMSClient({});',
    `export const clients = { ${[table && 'dynamo', queues && 'sqs', key && 'kms'].filter(Boolean).join(', ')} };`,
    'export const handler = async () => {',
    table &&
      '  await dynamo.send(new GetCommand({ TableName: process.env.TABLE_NAME, ' +
        "Key: { PK: 'BENCH#baseline', SK: 'BENCH' } }));",
    "  return { statusCode: 200, body: '{}' };",
    '};',
  ]
    .filter(Boolean)
    .join('\n');
};

/** Runs in the fresh process: everything before `t0` is Node's own start, which a baseline pays as well. */
const RUNNER = `
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const [bundlePath, eventPath, outPath, name] = process.argv.slice(2);
const event = JSON.parse(readFileSync(eventPath, 'utf8'));
const deadline = Date.now() + 30000;
const context = {
  callbackWaitsForEmptyEventLoop: false, functionName: name, functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:' + name, memoryLimitInMB: '256',
  awsRequestId: crypto.randomUUID(), logGroupName: '/aws/lambda/' + name, logStreamName: 'bench',
  getRemainingTimeInMillis: () => deadline - Date.now(), done() {}, fail() {}, succeed() {},
};
let phase = 'load';
const t0 = performance.now();
try {
  const mod = await import(pathToFileURL(bundlePath).href);
  const t1 = performance.now();
  phase = 'invoke';
  const result = await mod.handler(event, context);
  const t2 = performance.now();
  phase = 'warm invoke';
  await mod.handler(event, { ...context, awsRequestId: crypto.randomUUID() });
  const t3 = performance.now();
  writeFileSync(outPath, JSON.stringify({ ok: true, loadMs: t1 - t0, invokeMs: t2 - t1, warmMs: t3 - t2, result }));
} catch (error) {
  writeFileSync(outPath, JSON.stringify({ ok: false, phase, error: String(error && error.message || error) }));
}
process.exit(0);
`;

interface Sample {
  ok: boolean;
  loadMs: number;
  invokeMs: number;
  /** A second invocation in the same process: the round trips alone, with every code path warm. */
  warmMs?: number;
  result?: any;
  phase?: string;
  error?: string;
}

const work = mkdtempSync(join(tmpdir(), 'bench-cold-'));
const runtimeEnv: Record<string, string> = {};
const runnerFile = join(work, 'runner.mjs');
writeFileSync(runnerFile, RUNNER);

console.log(
  `bench:cold — ${functions.length} function(s), median of ${runs} run(s), ${process.version}, bundles in ${work}`,
);

// 1. Bundles (no engines needed).
const built = new Map<string, { fn: BuiltBundle; base: BuiltBundle }>();
let runtime: LocalRuntime | undefined;
const cleanUp = async () => {
  await runtime?.stop();
  if (!args.keep) rmSync(work, { recursive: true, force: true });
};
try {
  const bundling = progress(`building ${functions.length * 2} bundles (function and baseline)`, functions.length * 2);
  for (const fn of functions) {
    const [fnBundle, baseBundle] = await Promise.all([
      bundle(fn.entry, join(work, fn.name), fn.console ? consoleDefine(buildConsole(PROJECT_ROOT)) : undefined),
      bundle({ contents: baselineSource(fn) }, join(work, `${fn.name}.baseline`)),
    ]);
    built.set(fn.name, { fn: fnBundle, base: baseBundle });
    bundling.at(built.size * 2);
  }
  // 2. One local runtime for every child process.
  step('starting the local runtime');
  const before = { ...process.env };
  runtime = await startLocalRuntime({
    port: 0,
    dataDir: ':memory:',
    simulator: { port: 0 },
    apiKeys: BENCH_API_KEYS,
    scheduleIntervalSeconds: 3600,
  });
  // What the runtime set in the environment (endpoints, table, key, queue URLs…) is what each
  // function gets on AWS, pointed at the local engines.
  for (const [key, value] of Object.entries(process.env))
    if (before[key] !== value && value !== undefined) runtimeEnv[key] = value;
} catch (error) {
  await cleanUp();
  throw error;
}

const childEnv = (name: string): NodeJS.ProcessEnv => ({
  ...runtimeEnv,
  PATH: process.env.PATH,
  // What the stack (lib/constructs/functions.ts) and Lambda set besides the function's own variables.
  NODE_OPTIONS,
  STAGE: 'bench',
  AWS_LAMBDA_FUNCTION_NAME: name,
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
  AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
});

/** One cold start in a fresh process; asynchronous, because the SQS and KMS engines live in this process. */
const coldStart = async (name: string, file: string, event: unknown): Promise<Sample> => {
  const id = `${name}-${Math.random().toString(36).slice(2)}`;
  const eventFile = join(work, `${id}.event.json`);
  const outFile = join(work, `${id}.out.json`);
  writeFileSync(eventFile, JSON.stringify(event));
  const stderr: string[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [runnerFile, file, eventFile, outFile, name], {
      env: childEnv(name),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr.on('data', (c) => stderr.push(String(c)));
    // A handler that never answers would hang the benchmark: 30 s is Lambda's longest timeout here.
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('exit', (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode);
    });
  });
  try {
    return JSON.parse(readFileSync(outFile, 'utf8'));
  } catch {
    return {
      ok: false,
      loadMs: NaN,
      invokeMs: NaN,
      phase: 'process',
      error: `exit ${code}: ${stderr.join('').slice(0, 300)}`,
    };
  }
};

try {
  // DynamoDB Local is a JVM: its first requests are slow to answer, whoever sends them. One
  // discarded round of baselines warms it, so the first function measured is not penalised.
  const warming = progress('warming DynamoDB Local with one baseline per function', functions.length);
  for (const fn of functions) {
    await coldStart(`${fn.name}.warmup`, built.get(fn.name)!.base.file, firstEvent(fn, -1));
    warming.tick();
  }

  const rows: (string | number)[][] = [];
  const misses: { fn: BenchFunction; size: boolean; init: boolean; extraRoundTripsMs: number }[] = [];
  const failures: string[] = [];
  let passes = 0;
  let measured = 0;
  const starts = progress('cold starts (function and baseline, alternating)', functions.length * runs * 2);
  for (const fn of functions) {
    const { fn: fnBundle, base } = built.get(fn.name)!;
    const fnSamples: Sample[] = [];
    const baseSamples: Sample[] = [];
    for (let run = 0; run < runs; run++) {
      baseSamples.push(await coldStart(`${fn.name}.baseline`, base.file, firstEvent(fn, run)));
      starts.tick(fn.name);
      fnSamples.push(await coldStart(fn.name, fnBundle.file, firstEvent(fn, run)));
      starts.tick(fn.name);
    }
    const placeholder = fnBundle.bytes < PLACEHOLDER_BYTES;
    const bad = fnSamples.find((s) => !s.ok || !answeredWell(fn, s.result));
    const baseBad = baseSamples.find((s) => !s.ok);
    const sizeRatio = fnBundle.bytes / base.bytes;
    const load = median(fnSamples.map((s) => s.loadMs));
    const init = median(fnSamples.filter((s) => s.ok).map((s) => s.loadMs + s.invokeMs));
    const baseLoad = median(baseSamples.map((s) => s.loadMs));
    const baseInit = median(baseSamples.filter((s) => s.ok).map((s) => s.loadMs + s.invokeMs));
    const initRatio = init / baseInit;
    const warm = median(fnSamples.filter((s) => s.ok).map((s) => s.warmMs ?? NaN));
    const baseWarm = median(baseSamples.filter((s) => s.ok).map((s) => s.warmMs ?? NaN));
    let verdict: string;
    if (baseBad) {
      verdict = `ERROR baseline: ${baseBad.error}`;
      failures.push(`${fn.name} baseline: ${baseBad.error}`);
    } else if (placeholder) {
      verdict = `n/a (placeholder handler${bad ? `: ${bad.error ?? describeAnswer(fn, bad.result)}` : ''})`;
    } else if (bad) {
      verdict = `ERROR ${bad.ok ? `answered ${describeAnswer(fn, bad.result)}` : `${bad.phase}: ${bad.error}`}`;
      failures.push(`${fn.name}: ${verdict}`);
    } else {
      measured++;
      const sizeOk = sizeRatio <= TARGET_SIZE;
      const initOk = initRatio <= TARGET_INIT;
      if (sizeOk && initOk) passes++;
      if (!sizeOk || !initOk) misses.push({ fn, size: !sizeOk, init: !initOk, extraRoundTripsMs: warm - baseWarm });
      verdict =
        sizeOk && initOk ? 'PASS' : `MISS (${[!sizeOk && 'bundle', !initOk && 'init'].filter(Boolean).join(', ')})`;
    }
    const answer = fnSamples[0]?.ok ? describeAnswer(fn, fnSamples[0].result) : '-';
    rows.push([
      fn.name,
      fn.kind,
      answer,
      fixed(fnBundle.bytes / 1024),
      fixed(base.bytes / 1024),
      fixed(sizeRatio, 2),
      fixed(load),
      fixed(baseLoad),
      fixed(init),
      fixed(baseInit),
      fixed(initRatio, 2),
      fixed(warm),
      fixed(baseWarm),
      verdict,
    ]);
  }

  console.log();
  console.log(
    table(
      [
        'function',
        'kind',
        'answer',
        'bundle KB',
        'baseline KB',
        'size ×',
        'load ms',
        'base load',
        'init ms',
        'base init',
        'init ×',
        'warm ms',
        'base warm',
        'result',
      ],
      rows,
    ),
  );
  console.log();
  console.log(
    'init = import of the bundle (module evaluation, clients built) + the first invocation; load = the import alone;',
  );
  console.log(
    'warm = a second invocation in the same process (its round trips to the engines, every code path compiled). ' +
      'Not targets: they explain a miss.',
  );
  console.log(
    `Targets: init ≤ ${TARGET_INIT} × baseline, bundle ≤ ${TARGET_SIZE} × baseline ` +
      '(KB of index.mjs; the source map ships beside it).',
  );
  console.log(
    `Summary: ${passes} of ${measured} measured function(s) within both targets` +
      `${failures.length ? `; ${failures.length} error(s)` : ''}.`,
  );

  if (misses.length)
    console.log(
      '\nWhy (bundle: function − baseline by package, from the esbuild metafile; ' +
        'init: the warm invocation shows the extra round trips):',
    );
  for (const miss of misses) {
    const { fn: f, base } = built.get(miss.fn.name)!;
    if (miss.size) {
      const fnSizes = bytesByPackage(f.metafile);
      const baseSizes = bytesByPackage(base.metafile);
      const extra = [...new Set([...fnSizes.keys(), ...baseSizes.keys()])]
        .map((p) => [p, (fnSizes.get(p) ?? 0) - (baseSizes.get(p) ?? 0)] as const)
        .filter(([, d]) => Math.abs(d) >= 512)
        .sort((a, b) => b[1] - a[1]);
      console.log(
        `  ${miss.fn.name} bundle: +${fixed((f.bytes - base.bytes) / 1024)} KB — ${extra
          .slice(0, 8)
          .map(([p, d]) => `${p} ${d > 0 ? '+' : ''}${fixed(d / 1024)} KB`)
          .join(', ')}`,
      );
      // A package the baseline lacks: how the handler reaches it.
      for (const [pkg, bytes] of extra) {
        if (baseSizes.has(pkg) || pkg.startsWith('project:') || bytes < 2048) continue;
        const chain = importChain(f.metafile, pkg);
        if (chain) console.log(`      ${pkg} (${fixed(bytes / 1024)} KB) via ${chain.join(' → ')}`);
      }
    }
    if (miss.init && miss.extraRoundTripsMs >= 5) {
      console.log(
        `  ${miss.fn.name} init: its warm invocation takes ${fixed(miss.extraRoundTripsMs)} ms more than ` +
          "the baseline's one GetItem: more (or slower) round trips to the engines.",
      );
    } else if (miss.init) {
      console.log(
        `  ${miss.fn.name} init: warm, it is as fast as the baseline (${fixed(miss.extraRoundTripsMs)} ms apart), ` +
          'so the difference is code run for the first time, ' +
          'or noise on a busy machine: compare with more --runs.',
      );
    }
  }
  // An SDK client that the function's access does not call is dead weight, whatever the ratios say.
  for (const fn of functions) {
    const { fn: f, base } = built.get(fn.name)!;
    const expected = new Set(sdkClientsIn(base.metafile));
    for (const client of sdkClientsIn(f.metafile).filter((c) => !expected.has(c))) {
      console.log(
        `  ${fn.name} bundles ${client}, which its access does not use, ` +
          `via ${importChain(f.metafile, client)?.join(' → ')}`,
      );
    }
  }
  for (const failure of failures) console.log(`ERROR ${failure}`);
  process.exitCode = failures.length ? 1 : 0;
} finally {
  await cleanUp();
}
