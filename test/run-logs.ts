import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * One test run's captured output (CONTRACT.md §13: nothing personal in logs or queue messages).
 * jest's globalSetup (`startRun`) makes a directory for the run under `.local/test-logs/` and names it
 * in TEST_RUN_LOG_DIR, which every jest worker inherits; there test/quiet-output.ts writes every line
 * the service wrote, test/integration/support.ts every message its queues delivered and every message
 * left in a DLQ, and the crash tests what their `npm start` printed. globalTeardown (`checkRun`) then
 * searches all of it for the personal strings of the test fixtures, and fails the run if one is there.
 * Imports nothing but Node's own modules: jest loads the global hooks outside its module resolution.
 */

export const RUN_LOG_DIR_VARIABLE = 'TEST_RUN_LOG_DIR';
const LOGS_ROOT = join(__dirname, '..', '.local', 'test-logs');
const FIXTURES = join(__dirname, 'fixtures');
/** The runs kept for reading (the newest ones): a run's own directory is never removed while it runs. */
const RUNS_KEPT = 5;

/** This run's directory (a file run outside `npm test`'s global setup writes straight under `.local/test-logs/`). */
let made: string | undefined;
export const runLogDir = () => {
  const dir = process.env[RUN_LOG_DIR_VARIABLE] || LOGS_ROOT;
  if (made !== dir) mkdirSync(dir, { recursive: true });
  made = dir;
  return dir;
};

/** Appends `text` to `name` in this run's directory. */
export const keepInRun = (name: string, text: string) => appendFileSync(join(runLogDir(), name), text);

/**
 * Taps `stream`'s writes: the whole lines written (a line's start waits for its end) go to `handle`, which
 * writes on what it lets through with `write` (the stream's own) and answers what the write would. Gives
 * back a function that ends the tap.
 */
export const tapLines = (
  stream: NodeJS.WriteStream,
  handle: (lines: string[], write: NodeJS.WriteStream['write'], chunk: string | Uint8Array, rest: unknown[]) => boolean,
) => {
  const write = stream.write.bind(stream);
  let pending = '';
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    pending += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    return handle(lines, write, chunk, rest);
  }) as typeof stream.write;
  return () => {
    stream.write = write;
  };
};

/** The members of an order that hold a person's data, as Shopify names them. */
const PERSONAL_KEYS = new Set(['email', 'phone', 'first_name', 'last_name', 'address1', 'address2', 'company', 'city']);
/** Objects whose `name` is a person's (a line item's `name` is a product's). */
const PEOPLE = new Set(['shipping_address', 'billing_address', 'customer', 'default_address', 'addresses']);
/**
 * Strings shorter than this are left out: `X`, `1` or `Bob` turn up in any log by chance. Every email,
 * street line and phone of the fixtures is longer.
 */
export const MIN_PERSONAL_LENGTH = 6;

const walk = (value: unknown, key: string, parent: string, found: Set<string>) => {
  if (Array.isArray(value)) {
    for (const entry of value) walk(entry, key, parent, found);
    return;
  }
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const [k, v] of Object.entries(record)) walk(v, k, key, found);
    const fullName = [record.first_name, record.last_name].filter((n) => typeof n === 'string' && n).join(' ');
    if (fullName) found.add(fullName);
    return;
  }
  if (typeof value !== 'string') return;
  if (PERSONAL_KEYS.has(key) || (key === 'name' && PEOPLE.has(parent)) || key === 'note') found.add(value.trim());
};

/**
 * The personal strings (emails, phones, names, address lines, notes) of every JSON fixture under
 * `dir`: what the tests' orders carry, read from the files rather than listed by hand.
 */
export const fixturePersonalStrings = (dir = FIXTURES): string[] => {
  const found = new Set<string>();
  const visit = (path: string) => {
    if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    else if (path.endsWith('.json')) walk(JSON.parse(readFileSync(path, 'utf8')), '', '', found);
  };
  visit(dir);
  return [...found].filter((s) => s.length >= MIN_PERSONAL_LENGTH).sort();
};

/** Each file of `dir` (and below) that holds one of `strings`, with the string and its first line. */
export const findPersonalStrings = (dir: string, strings: string[]): string[] => {
  if (!existsSync(dir)) return [];
  const hits: string[] = [];
  const visit = (path: string) => {
    if (statSync(path).isDirectory()) {
      for (const entry of readdirSync(path)) visit(join(path, entry));
      return;
    }
    const lines = readFileSync(path, 'utf8').split('\n');
    for (const s of strings) {
      const at = lines.findIndex((line) => line.includes(s));
      if (at >= 0) hits.push(`${path}:${at + 1}: '${s}' in ${lines[at].slice(0, 300)}`);
    }
  };
  visit(dir);
  return hits;
};

/** jest's globalSetup: a fresh directory for this run, named for the workers; the oldest runs' go. */
export const startRun = async () => {
  mkdirSync(LOGS_ROOT, { recursive: true });
  const runs = readdirSync(LOGS_ROOT)
    .filter((entry) => entry.startsWith('run-'))
    .sort();
  for (const old of runs.slice(0, Math.max(0, runs.length - RUNS_KEPT + 1)))
    rmSync(join(LOGS_ROOT, old), { recursive: true, force: true });
  const dir = join(LOGS_ROOT, `run-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  process.env[RUN_LOG_DIR_VARIABLE] = dir;
};

/**
 * jest's globalTeardown: the run fails (jest exits 1, naming the file and line) if any log line or
 * queue message it captured holds a fixture's personal string.
 */
export const checkRun = async () => {
  const dir = process.env[RUN_LOG_DIR_VARIABLE];
  if (!dir) return;
  const hits = findPersonalStrings(dir, fixturePersonalStrings());
  if (hits.length)
    throw new Error(
      `personal data of the test fixtures in the run's logs or queue messages (CONTRACT.md §13):\n${hits.join('\n')}`,
    );
};
