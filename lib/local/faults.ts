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
