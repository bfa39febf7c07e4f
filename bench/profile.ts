/**
 * `npm run bench:profile -- <dir>`: where the time of a run went, from what the local runtime records
 * when asked (lib/local/environments.ts): the per-invocation log (`<dir>/invocations.jsonl`, written
 * under LOCAL_INVOCATION_LOG) and the V8 CPU profiles of the execution environments' threads
 * (`<dir>/*.cpuprofile`, written under LOCAL_CPU_PROF_DIR; the main thread's too, if the run was
 * started with `node --cpu-prof --cpu-prof-dir=<dir>`). `npm run bench:e2e -- --profile <dir>` sets both.
 *
 * Prints, per function: invocations, handler time (p50/p99/total, as Lambda bills it), the wait for an
 * environment (cold starts included), and the CPU its threads used (samples that were not idle); then,
 * per function, the sources that CPU went to, mapped back through the bundles' source maps: a package
 * of node_modules, or a file of this repository.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixed, percentile, table } from './common.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}
interface InvocationLine {
  fn: string;
  at: number;
  waitMs: number;
  cold: boolean;
  ms: number;
  ok: boolean;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A bundle's source map, read once (undefined for a file without one). */
const maps = new Map<string, SourceMap | undefined>();
const mapOf = (url: string) => {
  if (!maps.has(url)) {
    let map: SourceMap | undefined;
    try {
      const file = fileURLToPath(url);
      if (existsSync(`${file}.map`)) map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
    } catch {
      map = undefined;
    }
    maps.set(url, map);
  }
  return maps.get(url);
};

/** What a frame's time is charged to: a package of node_modules, a file of the repository, or V8's own. */
const sourceOf = (frame: CallFrame): string => {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  if (frame.url.startsWith('node:')) return 'node: (Node.js built-ins)';
  let source = frame.url;
  const map = frame.url.startsWith('file:') ? mapOf(frame.url) : undefined;
  const entry = map?.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string } | undefined;
  if (entry?.originalSource) source = entry.originalSource;
  if (source.startsWith('file:')) source = fileURLToPath(source);
  // A source map names its sources relative to the bundle.
  else if (entry?.originalSource) source = resolve(dirname(fileURLToPath(frame.url)), source);
  const modules = source.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const [scope, name] = source.slice(modules + 'node_modules/'.length).split('/');
    return scope.startsWith('@') ? `${scope}/${name}` : scope;
  }
  return source.startsWith('/') ? relative(ROOT, source) : source;
};

/** Frames of Node's module loader: time under one of them is spent loading code (a cold start, a lazy import). */
const LOADING = new RegExp(
  `^(${[
    'compileSourceTextModule',
    'compileForInternalLoader',
    'syncLink',
    'link',
    'instantiate',
    'evaluate',
    'moduleEvaluation',
    'ModuleJob\\.run',
    'importModuleDynamically',
    'loadESM',
    'require',
    'Module\\._load',
    '__require',
    'maybeCacheSourceMap',
    'lineLengths',
  ].join('|')})$`,
);

/** Self time (ms) by source, the CPU (ms) that was not idle, and the part of it spent loading code, of one profile. */
const selfTimes = (profile: CpuProfile) => {
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const loading = new Map<number, boolean>();
  const isLoading = (id: number): boolean => {
    const known = loading.get(id);
    if (known !== undefined) return known;
    const node = byNode.get(id);
    const up = parent.get(id);
    const value = !!node && (LOADING.test(node.callFrame.functionName) || (up !== undefined && isLoading(up)));
    loading.set(id, value);
    return value;
  };
  const bySource = new Map<string, number>();
  let cpuMs = 0;
  let loadingMs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byNode.get(profile.samples[i]);
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    if (!node || node.callFrame.functionName === '(idle)') continue;
    cpuMs += ms;
    if (isLoading(node.id)) {
      loadingMs += ms;
      continue;
    }
    const source = sourceOf(node.callFrame);
    bySource.set(source, (bySource.get(source) ?? 0) + ms);
  }
  return { cpuMs, loadingMs, bySource };
};

const dir = process.argv[2];
if (!dir || !existsSync(dir)) {
  console.error('usage: npm run bench:profile -- <dir of invocations.jsonl and *.cpuprofile>');
  process.exit(2);
}

const invocations: InvocationLine[] = existsSync(join(dir, 'invocations.jsonl'))
  ? readFileSync(join(dir, 'invocations.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
  : [];

/** CPU per function (the profiles are named `<function>.<environment>.cpuprofile`; the main thread `CPU.*`). */
const cpu = new Map<string, { cpuMs: number; loadingMs: number; bySource: Map<string, number>; threads: number }>();
for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
  const fn = file.startsWith('CPU.') ? '(main thread: HTTP front, pollers)' : file.split('.')[0];
  const { cpuMs, loadingMs, bySource } = selfTimes(JSON.parse(readFileSync(join(dir, file), 'utf8')));
  const entry = cpu.get(fn) ?? { cpuMs: 0, loadingMs: 0, bySource: new Map(), threads: 0 };
  entry.cpuMs += cpuMs;
  entry.loadingMs += loadingMs;
  entry.threads++;
  for (const [source, ms] of bySource) entry.bySource.set(source, (entry.bySource.get(source) ?? 0) + ms);
  cpu.set(fn, entry);
}

const functions = new Set([...invocations.map((i) => i.fn), ...cpu.keys()]);
const totalCpu = [...cpu.values()].reduce((sum, c) => sum + c.cpuMs, 0);
const rows = [...functions]
  .map((fn) => {
    const own = invocations.filter((i) => i.fn === fn);
    const ms = own.map((i) => i.ms);
    const wait = own.map((i) => i.waitMs);
    const c = cpu.get(fn);
    return {
      fn,
      cpuMs: c?.cpuMs ?? 0,
      row: [
        fn,
        own.length,
        own.filter((i) => i.cold).length,
        fixed(percentile(ms, 50)),
        fixed(percentile(ms, 99)),
        fixed(ms.reduce((a, b) => a + b, 0) / 1000),
        fixed(percentile(wait, 50)),
        fixed(percentile(wait, 99)),
        c ? c.threads : '',
        c ? fixed(c.cpuMs / 1000) : '',
        c ? `${fixed((100 * c.cpuMs) / totalCpu)} %` : '',
        c ? fixed(c.loadingMs / 1000) : '',
        own.length && c ? fixed((c.cpuMs - c.loadingMs) / own.length) : '',
      ],
    };
  })
  .sort((a, b) => b.cpuMs - a.cpuMs);
console.log(
  table(
    [
      'function',
      'invocations',
      'cold',
      'handler p50 ms',
      'p99',
      'total s',
      'wait p50 ms',
      'p99',
      'threads',
      'CPU s',
      'CPU share',
      'loading code s',
      'CPU ms per invocation (not loading)',
    ],
    rows.map((r) => r.row),
  ),
);

const TOP = Number(process.env.PROFILE_TOP ?? 8);
for (const { fn } of rows) {
  const c = cpu.get(fn);
  if (!c || c.cpuMs < totalCpu / 100) continue;
  const top = [...c.bySource].sort((a, b) => b[1] - a[1]).slice(0, TOP);
  console.log(`\n${fn}: ${fixed((c.cpuMs - c.loadingMs) / 1000)} s of CPU besides loading code, by source (self time)`);
  console.log(
    table(
      ['source', 'CPU s', 'share'],
      top.map(([source, ms]) => [source, fixed(ms / 1000, 2), `${fixed((100 * ms) / (c.cpuMs - c.loadingMs))} %`]),
    ),
  );
}
