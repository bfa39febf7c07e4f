/**
 * Faults the local runtime can inject into a function's AWS SDK calls, for tests that need a
 * function to fail or die at an exact point (after the platform call, before the job records it)
 * without changing a line of `functions/` or `shared/`. A fault is plain data: it crosses into the
 * function's worker threads, where the runtime's bootstrap checks every SDK call against it.
 */

export type FaultAction =
  /** The SDK call throws, as a network failure would. */
  | 'fail'
  /** The execution environment dies on the spot (its thread exits), as a Lambda crash or OOM would. */
  | 'crash'
  /** The call waits until the test releases it: the function is caught mid-invocation. */
  | 'hold'
  /** The call answers as if it had succeeded, and nothing reaches the service: a message lost on its way. */
  | 'drop';

export interface FaultSpec {
  /** The function whose calls it watches (lib/routes.ts name), e.g. `SyncWorker`. */
  function: string;
  /** The client's service: `DynamoDB`, `SQS` or `KMS`. */
  service: string;
  /** The operation, without `Command`: `UpdateItem`, `SendMessage`… */
  command: string;
  /**
   * A partial input, compared with the input as the code built it (DynamoDB values unmarshalled):
   * every given leaf must be equal, or match when it is a RegExp.
   */
  match?: Record<string, unknown>;
  /**
   * What a DynamoDB write must write, whatever its placeholders: attribute (or `a.b` path, `*` for any
   * one segment of it) → value, compared as `match` compares, with the `sets` of `meaningOf`
   * (`{ status: 'completed' }`, `{ 'fulfillments.*.status': 'delivered' }`).
   */
  writes?: Record<string, unknown>;
  action: FaultAction;
  /** How many matching calls it affects: default 1 for `fail`, `crash` and `drop`, every one for `hold`. */
  times?: number;
  /** The error message of `fail`. */
  message?: string;
}

/** A fault as it travels to the threads. */
export interface ArmedFault extends FaultSpec {
  id: number;
}

export interface FaultHandle {
  /** The input of every call the fault took, in order. */
  readonly hits: unknown[];
  /** Resolves with the first hit. */
  readonly reached: Promise<unknown>;
  /** Lets every held call go on and disarms the fault. */
  release(): void;
}

/** Every leaf of `pattern` equals (or, for a RegExp, matches) the same place in `value`. */
export const matches = (pattern: unknown, value: unknown): boolean => {
  if (pattern instanceof RegExp) return typeof value === 'string' && pattern.test(value);
  if (pattern && typeof pattern === 'object') {
    if (!value || typeof value !== 'object') return false;
    return Object.entries(pattern).every(([key, part]) => matches(part, (value as Record<string, unknown>)[key]));
  }
  return pattern === value;
};

/** Which SDK call a fault concerns: `DynamoDBClient` + `UpdateItemCommand` ↔ `DynamoDB` + `UpdateItem`. */
export const concerns = (fault: FaultSpec, clientName: string | undefined, commandName: string | undefined) =>
  `${fault.service}Client` === clientName && `${fault.command}Command` === commandName;

/**
 * What a DynamoDB command means, its placeholders resolved: the values an update's SET writes (a
 * `PutItem`'s whole item), the paths it removes, what its ADD adds, and its condition
 * (`ConditionExpression` and `KeyConditionExpression`) both as text and, for each `path = value`,
 * `path IN (…)` or `begins_with(path, prefix)` it ANDs, as `requires` (a value, the values,
 * `{ begins_with: prefix }`). A SET of an expression of the item's own attributes reads as that
 * expression, resolved (`if_not_exists(attempts, 0) + 1`). Fault gates and tests read this, so that
 * they hold whatever placeholder names the code picks.
 */
export interface CommandMeaning {
  sets: Record<string, unknown>;
  removes: string[];
  adds: Record<string, unknown>;
  condition: string | undefined;
  requires: Record<string, unknown>;
}

interface ExpressionInput {
  Item?: Record<string, unknown>;
  UpdateExpression?: string;
  ConditionExpression?: string;
  KeyConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/** `text` split at each `separator` outside parentheses. */
const topLevel = (text: string, separator: RegExp) => {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    if (text[i] === ')') depth--;
    const rest = text.slice(i);
    const found = depth === 0 ? separator.exec(rest) : null;
    if (found?.index === 0) {
      parts.push(text.slice(start, i));
      start = i + found[0].length;
      i = start - 1;
    }
  }
  return [...parts, text.slice(start)].map((part) => part.trim()).filter(Boolean);
};

export const meaningOf = (command: unknown): CommandMeaning => {
  const input = (command ?? {}) as ExpressionInput;
  const names = input.ExpressionAttributeNames ?? {};
  const values = input.ExpressionAttributeValues ?? {};
  const path = (text: string) => text.trim().replace(/#\w+/g, (name) => names[name] ?? name);
  const value = (text: string): unknown =>
    /^:\w+$/.test(text.trim())
      ? values[text.trim()]
      : text.trim().replace(/#\w+|:\w+/g, (token) => names[token] ?? JSON.stringify(values[token]));
  const meaning: CommandMeaning = {
    sets: { ...input.Item },
    removes: [],
    adds: {},
    condition: undefined,
    requires: {},
  };
  const clauses = (input.UpdateExpression ?? '').split(/(?:^|\s)(?=(?:SET|REMOVE|ADD|DELETE)\s)/);
  for (const clause of clauses.map((c) => c.trim()).filter(Boolean)) {
    const [, keyword, body] = /^(SET|REMOVE|ADD|DELETE)\s+([\s\S]*)$/.exec(clause) ?? [];
    for (const item of topLevel(body ?? '', /^,/)) {
      if (keyword === 'SET') {
        const [target, ...expression] = topLevel(item, /^=/);
        meaning.sets[path(target)] = value(expression.join('='));
      } else if (keyword === 'REMOVE') meaning.removes.push(path(item));
      else if (keyword === 'ADD') meaning.adds[path(item.split(/\s+/)[0])] = value(item.split(/\s+/)[1]);
    }
  }
  const conditions = [input.KeyConditionExpression, input.ConditionExpression].filter((c): c is string => !!c);
  if (conditions.length) meaning.condition = value(conditions.join(' AND ')) as string;
  for (const term of conditions.flatMap((condition) => topLevel(condition, /^\s+AND\s+/))) {
    const equal = /^([#\w.[\]]+)\s*=\s*(:\w+)$/.exec(term);
    const among = /^([#\w.[\]]+)\s+IN\s*\(([^)]*)\)$/.exec(term);
    const prefix = /^begins_with\(([#\w.[\]]+),\s*(:\w+)\)$/.exec(term);
    if (equal) meaning.requires[path(equal[1])] = values[equal[2]];
    if (among) meaning.requires[path(among[1])] = among[2].split(',').map((v) => values[v.trim()]);
    if (prefix) meaning.requires[path(prefix[1])] = { begins_with: values[prefix[2]] };
  }
  return meaning;
};

/** The values `sets` gives the paths `path` names (`*`: any one segment), in the order it sets them. */
export const valuesAt = (sets: Record<string, unknown>, path: string) => {
  const wanted = path.split('.');
  const named = (written: string[]) =>
    written.length === wanted.length && wanted.every((segment, i) => segment === '*' || segment === written[i]);
  return Object.entries(sets)
    .filter(([written]) => named(written.split('.')))
    .map(([, value]) => value);
};

/** Whether the command writes every path of `writes` with a value that matches (as `matches` matches). */
export const writesAll = (writes: Record<string, unknown>, command: unknown) => {
  const { sets } = meaningOf(command);
  return Object.entries(writes).every(([path, value]) => valuesAt(sets, path).some((v) => matches(value, v)));
};

/** Whether a call takes a fault: its input matches `match`, and what it writes matches `writes`. */
export const gates = (fault: FaultSpec, input: unknown) =>
  matches(fault.match ?? {}, input) && writesAll(fault.writes ?? {}, input);
