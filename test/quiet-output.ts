import { format } from 'node:util';
import { keepInRun, tapLines } from './run-logs.js';

/**
 * `npm test` prints the runner's report and nothing else: what the service writes while a test file
 * runs (the functions' JSON log and metric lines, whether from this thread or from the execution
 * environments' worker threads piped into it; the local runtime's console lines; CDK's bundling
 * lines) goes to `jest-worker-<pid>.log` in the run's directory under `.local/test-logs/` instead (one
 * file per jest worker process, test/run-logs.ts), where a failing test's story can be read, and where
 * the run's end searches it for personal data. Tests that read the log (test/integration/logs.ts) tap
 * the streams on top of this and still see every line.
 */
const keep = (text: string) => keepInRun(`jest-worker-${process.pid}.log`, text);

/** A line the service or its tooling wrote, as opposed to anything else on the stream. */
const DIVERTED = /^\s*(\{|Bundling asset |npm warn )/;

const divert = (stream: NodeJS.WriteStream) =>
  tapLines(stream, (lines, write, _chunk, rest) => {
    const shown = lines.filter((line) => !DIVERTED.test(line));
    const kept = lines.filter((line) => DIVERTED.test(line));
    if (kept.length) keep(`${kept.join('\n')}\n`);
    const callback = rest.find((arg): arg is () => void => typeof arg === 'function');
    if (shown.length) return write(`${shown.join('\n')}\n`, callback);
    if (callback) process.nextTick(callback);
    return true;
  });
divert(process.stdout);
divert(process.stderr);
// The tools the tests start (CDK's bundling runs esbuild through npm) write to the inherited streams
// themselves: npm's own warnings about this machine's configuration are left out there.
process.env.npm_config_loglevel = 'error';

for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
  console[level] = (...args: unknown[]) => keep(`[console.${level}] ${format(...args)}\n`);
}
