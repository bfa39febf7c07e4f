import { type CommandMeaning, matches, meaningOf, valuesAt, writesAll } from '../lib/local/faults.js';

/**
 * What a DynamoDB command the code built means, read through its placeholders (the reader the local
 * runtime's fault gates use, lib/local/faults.ts): the tests assert on the status a move writes or the
 * generation it requires, never on `:status` or `#generation`, so they hold whatever names the
 * update builders pick. A command is the input of an UpdateItem, PutItem, Query… or the `Update`,
 * `Put`, `ConditionCheck` of a transaction's item.
 */

export type { CommandMeaning };
export { meaningOf };

/** The value the command writes to `path` (`status`, `fulfillments.9001.status`, `*` for a segment). */
export const setsAttribute = (command: unknown, path: string): any => valuesAt(meaningOf(command).sets, path)[0];

/** What the command writes under `prefix` (`fulfillments.9001`: one entry's fields), by the rest of their paths. */
export const setsUnder = (command: unknown, prefix: string): Record<string, any> =>
  Object.fromEntries(
    Object.entries(meaningOf(command).sets)
      .filter(([path]) => path.startsWith(`${prefix}.`))
      .map(([path, value]) => [path.slice(prefix.length + 1), value]),
  );

/** Every attribute path the command writes, with its value (an expression of the item's own attributes as text). */
export const setsOf = (command: unknown): Record<string, any> => meaningOf(command).sets;

/** The attribute paths the command removes. */
export const removesOf = (command: unknown) => meaningOf(command).removes;

/** The command's condition (and key condition), names and values in place: `generation = 2 AND status = "failed"`. */
export const conditionOf = (command: unknown) => meaningOf(command).condition;

/** What the condition requires of each attribute it compares: a value (`=`) or the values it may have (`IN`). */
export const requiresOf = (command: unknown): Record<string, any> => meaningOf(command).requires;

/**
 * A command that writes each of `writes` (path → value, as FaultSpec.writes), for aws-sdk-client-mock's
 * `.on(UpdateCommand, writing({ status: 'pending' }))`: a sinon matcher as the input it accepts.
 */
export const writing = (writes: Record<string, unknown>) =>
  ((input: unknown) => writesAll(writes, input)) as unknown as never;

/**
 * A command whose condition requires what `requires` gives (compared as FaultSpec.match is), and whose
 * input has the plain parts `input` gives (`{ IndexName: 'GSI2' }`), for aws-sdk-client-mock's `.on`.
 */
export const requiring = (requires: Record<string, unknown>, input: Record<string, unknown> = {}) =>
  ((command: unknown) => matches(input, command) && matches(requires, requiresOf(command))) as unknown as never;
