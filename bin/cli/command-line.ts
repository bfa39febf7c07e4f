import { pathToFileURL } from 'node:url';
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { ApiRequestError, ApiUnreachableError, createApiClient } from '../../client/client.js';

/**
 * What the command-line tools (`npm run keys`, `jobs`, `orders`, `backfill-indexes`) share: argument parsing whose
 * mistakes are one clear line (exit 2), failures as one line (exit 1, never a stack trace), and
 * output through an `Io` so tests run a command in process and read what it printed.
 */

export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

export const processIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
};

/** A mistake in the command line: printed as one line with a pointer to `--help`, exit 2. */
export class UsageError extends Error {}

/** Where the tools that go through the API (`jobs`, `orders`) find it without `--url` or `API_URL`. */
export const DEFAULT_API_URL = 'http://127.0.0.1:3000';

/** The options of every command that goes through the API. */
export const API_OPTIONS = {
  url: { type: 'string' },
  key: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The typed API client of a command: `--key` or API_KEY, `--url` or API_URL (else the local one). */
export const apiClientOf = (values: { url?: string; key?: string }, io: Io) => {
  const apiKey = values.key ?? io.env.API_KEY;
  if (!apiKey) throw new UsageError('no API key: pass --key <key> or set API_KEY (`npm start` prints one)');
  const baseUrl = values.url ?? io.env.API_URL ?? DEFAULT_API_URL;
  if (!/^https?:\/\//.test(baseUrl)) throw new UsageError(`--url must be an http(s) URL, not '${baseUrl}'`);
  return createApiClient({ baseUrl, apiKey });
};

/** A failure the command explains itself (nothing found, nothing to do): one line, exit 1. */
export class CommandError extends Error {}

/** The closest option name within two edits, for "did you mean". */
const closest = (wrong: string, names: string[]) => {
  const distance = (a: string, b: string) => {
    const row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      let diagonal = row[0];
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const above = row[j];
        row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
        diagonal = above;
      }
    }
    return row[b.length];
  };
  const ranked = names.map((name) => ({ name, d: distance(wrong, name) })).sort((a, b) => a.d - b.d);
  return ranked[0] && ranked[0].d <= 2 ? ranked[0].name : undefined;
};

/** `parseArgs` in strict mode, its errors turned into one-line usage errors. */
export const parseOptions = <O extends ParseArgsOptionsConfig>(args: string[], options: O, maxPositionals: number) => {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    const option = message.match(/'(-[^' ]+)/)?.[1];
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option) {
      const suggestion = closest(option.replace(/^-+/, ''), Object.keys(options));
      throw new UsageError(`unknown option ${option}${suggestion ? ` (did you mean --${suggestion}?)` : ''}`);
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option)
      throw new UsageError(
        options[option.replace(/^-+/, '')]?.type === 'boolean' ? `${option} takes no value` : `${option} needs a value`,
      );
    throw new UsageError(message.split('. ')[0]);
  }
  if (parsed.positionals.length > maxPositionals)
    throw new UsageError(`unexpected argument '${parsed.positionals[maxPositionals]}'`);
  return parsed;
};

/** A positive whole number option, or a usage error naming it. */
export const positiveInteger = (name: string, value: string | undefined, fallback: number) => {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--${name} must be a whole number ≥ 1`);
  return Number(value);
};

/** Any failure as one line: API errors with their code, status and request id. */
export const describeFailure = (error: unknown) => {
  if (error instanceof ApiRequestError) {
    const hint = error.status === 401 && error.code === 'unauthorized' ? ' (pass --key <key> or set API_KEY)' : '';
    return `${error.toString()}${hint}`;
  }
  if (error instanceof ApiUnreachableError) return `${error.message}: is the service running, and --url right?`;
  if (error instanceof Error) return error.message.split('\n')[0];
  return String(error);
};

export type Command = (args: string[], io: Io) => Promise<unknown>;

/**
 * A tool of subcommands: `<tool> <command> [options]`. Answers the exit code: the command's own
 * (a number it returns), else 0; 2 for a usage error; 1 for any other failure. Each failure is one
 * line, prefixed with the tool's name; DEBUG=1 adds the stack.
 */
export const tool =
  (name: string, help: string, commands: Record<string, Command>) =>
  async (argv: string[], io: Io): Promise<number> => {
    const [command, ...args] = argv;
    try {
      if (command === undefined) {
        io.err(help);
        return 2;
      }
      if (command === '--help' || command === '-h' || command === 'help') {
        io.out(help);
        return 0;
      }
      const run = commands[command];
      if (!run) {
        const names = Object.keys(commands);
        if (command.startsWith('-'))
          throw new UsageError(`a command comes first (${names.join(', ')}), not ${command}`);
        const suggestion = closest(command, names);
        throw new UsageError(`unknown command '${command}'${suggestion ? ` (did you mean ${suggestion}?)` : ''}`);
      }
      const code = await run(args, io);
      return typeof code === 'number' ? code : 0;
    } catch (error) {
      return failed(name, command && command in commands ? `${command} --help` : '--help', error, io);
    }
  };

/** A failure as one line prefixed with the tool's name, and its exit code (2 for a usage error). */
const failed = (name: string, help: string, error: unknown, io: Io) => {
  if (error instanceof UsageError) {
    io.err(`${name}: ${error.message}; see \`npm run ${name} -- ${help}\``);
    return 2;
  }
  io.err(`${name}: ${describeFailure(error)}`);
  if (io.env.DEBUG && error instanceof Error && error.stack) io.err(error.stack);
  return 1;
};

/** A tool that is one command (`<tool> [options]`; it answers its own `--help`), failing as `tool`'s do. */
export const singleCommandTool =
  (name: string, run: Command) =>
  async (argv: string[], io: Io): Promise<number> => {
    try {
      const code = await run(argv, io);
      return typeof code === 'number' ? code : 0;
    } catch (error) {
      return failed(name, '--help', error, io);
    }
  };

/** Runs `main` when the module is the process's entry point (not when a test imports it). */
export const runAsMain = (moduleUrl: string, main: (argv: string[], io: Io) => Promise<number>) => {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  main(process.argv.slice(2), processIo).then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      process.stderr.write(`${describeFailure(error)}\n`);
      process.exitCode = 1;
    },
  );
};

/** Rows as aligned columns under a header; empty cells print as `-`. */
export const table = <R extends object>(rows: R[], columns: Partial<Record<keyof R & string, string>>) => {
  const names = Object.keys(columns) as (keyof R & string)[];
  const cells = rows.map((row) =>
    names.map((name) => (row[name] === null || row[name] === undefined ? '-' : String(row[name]))),
  );
  const header = Object.values(columns) as string[];
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((line) => line[i].length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => (i === values.length - 1 ? value : value.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...cells.map(line)];
};
