import type { LocalAccess } from './authorize.js';
import type { ArmedFault } from './faults.js';

/**
 * Where a thread keeps the files of the bundle it has loaded (the handler's, its chunks, those it
 * imported on demand): the local build's banner makes each output add its own URL (bundle.ts).
 */
export const LOADED_OUTPUTS = '__loadedOutputs';

/** What the runtime tells an execution environment's thread when it starts it. */
export interface EnvironmentData {
  functionName: string;
  /** Absolute path of the handler's bundle. */
  entry: string;
  memoryMb: number;
  faults: ArmedFault[];
  /** Report every AWS SDK call (for the cost benchmark's meter). */
  observeSdk: boolean;
  /** What the function's role may do: every SDK call outside it is refused as AWS would (authorize.ts). */
  access?: LocalAccess;
}

/** A serialisable error: what crosses from the thread to the runtime when a handler throws. */
export interface ErrorShape {
  name: string;
  message: string;
  stack?: string;
}

/** One AWS SDK call made by a function, for meters. */
export interface SdkCall {
  functionName: string;
  service: string;
  command: string;
  input: Record<string, any>;
  /** DynamoDB's ConsumedCapacity, when the call succeeded. */
  consumedCapacity?: unknown;
  /** The error's name, when it failed. */
  error?: string;
}

export type ToEnvironment =
  | { type: 'invoke'; id: number; event: unknown; requestId: string; deadline: number }
  | { type: 'faults'; faults: ArmedFault[] }
  | { type: 'release'; faultId: number }
  | { type: 'claimed'; callId: number; granted: boolean };

export type FromEnvironment =
  | { type: 'ready'; initMs: number }
  | {
      type: 'done';
      id: number;
      ms: number;
      result?: unknown;
      error?: ErrorShape;
      /** Receipt handles whose visibility the function set itself (a backoff), in this invocation. */
      visibilitySet: string[];
      /** The files of the bundle the thread loaded since its last answer (bundle.ts, LOADED_OUTPUTS). */
      outputs: string[];
    }
  | { type: 'claim'; callId: number; faultId: number; input: unknown }
  | { type: 'sdk'; call: SdkCall };
