import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { LocalAccess } from './authorize.js';
import type { ArmedFault } from './faults.js';
import type { EnvironmentData, ErrorShape, FromEnvironment, SdkCall, ToEnvironment } from './protocol.js';

/**
 * Execution environments as Lambda has them: each function gets environments of its own, one
 * worker thread each, started on demand (a cold start) and stopped after a while without work.
 * An environment runs one invocation at a time; a function runs more at once only by having more
 * environments, up to its concurrency. An invocation past its deadline is abandoned: the thread is
 * terminated mid-flight, as Lambda stops a timed-out sandbox, and the next one starts cold.
 */

/** Lambda gives a sandbox 10 s to initialise; a loaded machine gets more. */
const INIT_TIMEOUT_MS = 30_000;

/**
 * Opt-in measurement (docs/performance.md, "Where an order's time goes"). LOCAL_CPU_PROF_DIR: each
 * environment's thread writes a V8 CPU profile there when it ends (`<function>.<n>.cpuprofile`).
 * LOCAL_INVOCATION_LOG: one JSON line per invocation appended to that file: the function, when it was
 * asked (`at`, epoch ms), how long it waited for an environment (`waitMs`, a cold start included),
 * whether it started one (`cold`), and its handler time (`ms`). LOCAL_LOG_FILE: the functions' log
 * lines (their stdout and stderr) go to that file instead of this process's (a benchmark's figures).
 */
export const CPU_PROF_DIR_ENV = 'LOCAL_CPU_PROF_DIR';
export const INVOCATION_LOG_ENV = 'LOCAL_INVOCATION_LOG';
export const LOG_FILE_ENV = 'LOCAL_LOG_FILE';

let logFile: WriteStream | undefined;
/** The functions' log file, when LOCAL_LOG_FILE names one. */
const functionLog = () => {
  const file = process.env[LOG_FILE_ENV];
  if (file) logFile ??= createWriteStream(file, { flags: 'a' });
  return file ? logFile : undefined;
};

let invocationLog: WriteStream | undefined;
const logInvocation = (line: { fn: string; at: number; waitMs: number; cold: boolean; ms: number; ok: boolean }) => {
  const file = process.env[INVOCATION_LOG_ENV];
  if (!file) return;
  invocationLog ??= createWriteStream(file, { flags: 'a' });
  invocationLog.write(`${JSON.stringify(line)}\n`);
};

const profilingArgv = (name: string, id: number) => {
  const dir = process.env[CPU_PROF_DIR_ENV];
  if (!dir) return [];
  mkdirSync(dir, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}.${id}.cpuprofile`];
};

/** Why an invocation did not answer: its error as the handler threw it, or the environment's end. */
export class InvocationError extends Error {
  constructor(
    readonly functionName: string,
    readonly detail: ErrorShape,
    /** `timeout` and `crash` cost the environment its life. */
    readonly kind: 'handler' | 'timeout' | 'crash',
    /** Receipt handles whose visibility the function set itself before it failed. */
    readonly visibilitySet: string[] = [],
  ) {
    super(`${functionName}: ${detail.message}`);
    this.name = detail.name;
  }
}

export interface FunctionConfig {
  name: string;
  /** The handler's bundle (bundle.ts), absolute. */
  bundle: string;
  timeoutSeconds: number;
  /** Environments at most: the function's reserved/maximum concurrency. */
  maxConcurrency: number;
  /** The function's environment variables. */
  env: Record<string, string>;
  memoryMb: number;
  /** Its role's policy: what its SDK calls may do (authorize.ts); none, unchecked. */
  access?: LocalAccess;
}

export interface InvokeOptions {
  /** Epoch ms by which the invocation must end, if earlier than the function's own timeout. */
  deadline?: number;
}

export interface Invocation {
  result: unknown;
  /** Handler time, as Lambda bills it. */
  ms: number;
  /** Receipt handles whose visibility the function set itself (a backoff after a failure). */
  visibilitySet: string[];
}

type Pending = { resolve(value: Invocation): void; reject(error: InvocationError): void; timer?: NodeJS.Timeout };

let environmentSequence = 0;

class Environment {
  readonly id = ++environmentSequence;
  readonly worker: Worker;
  readonly ready: Promise<void>;
  lastInvokedAt = Date.now();
  private pending?: Pending;
  private invocationId = 0;
  private ended = false;

  constructor(
    private readonly fn: FunctionConfig,
    private readonly runtime: Runtime,
  ) {
    const data: EnvironmentData = {
      functionName: fn.name,
      entry: fn.bundle,
      memoryMb: fn.memoryMb,
      faults: runtime.faults(fn.name),
      observeSdk: Boolean(runtime.onSdkCall),
      access: fn.access,
    };
    this.worker = new Worker(runtime.bootstrap, {
      name: `${fn.name} #${this.id}`,
      execArgv: ['--enable-source-maps', ...profilingArgv(fn.name, this.id)],
      workerData: data,
      env: fn.env,
      resourceLimits: { maxOldGenerationSizeMb: fn.memoryMb, maxYoungGenerationSizeMb: 8 },
      ...(functionLog() ? { stdout: true, stderr: true } : {}),
    });
    const log = functionLog();
    if (log) {
      // Written as they come rather than piped: one pipe per thread would add listeners to the one file.
      this.worker.stdout.on('data', (chunk: Buffer) => log.write(chunk));
      this.worker.stderr.on('data', (chunk: Buffer) => log.write(chunk));
    }
    this.worker.unref();
    this.ready = new Promise<void>((resolveReady, rejectReady) => {
      const timer = setTimeout(() => {
        rejectReady(new Error(`${fn.name}: the environment did not start within ${INIT_TIMEOUT_MS / 1000} s`));
        void this.stop();
      }, INIT_TIMEOUT_MS);
      this.worker.on('message', (message: FromEnvironment) => {
        if (message.type === 'ready') {
          clearTimeout(timer);
          resolveReady();
        } else this.onMessage(message);
      });
      this.worker.once('error', (error) => {
        clearTimeout(timer);
        rejectReady(error);
        this.end({ name: error.name, message: `the environment failed: ${error.message}`, stack: error.stack });
      });
      this.worker.once('exit', (code) => {
        clearTimeout(timer);
        rejectReady(new Error(`${fn.name}: the environment exited with code ${code} while starting`));
        this.end({ name: 'Runtime.ExitError', message: `Runtime exited with error: exit status ${code}` });
      });
    });
    // Nobody may be waiting yet; a failed start is reported to whoever acquires this environment.
    this.ready.catch(() => undefined);
  }

  get alive() {
    return !this.ended;
  }

  private onMessage(message: FromEnvironment) {
    switch (message.type) {
      case 'done': {
        this.runtime.outputsLoaded(this.fn.name, message.outputs);
        if (message.id !== this.invocationId || !this.pending) return;
        const { resolve: answer, reject, timer } = this.pending;
        this.pending = undefined;
        clearTimeout(timer);
        if (message.error) reject(new InvocationError(this.fn.name, message.error, 'handler', message.visibilitySet));
        else answer({ result: message.result, ms: message.ms, visibilitySet: message.visibilitySet });
        return;
      }
      case 'claim':
        this.post({
          type: 'claimed',
          callId: message.callId,
          granted: this.runtime.claimFault(message.faultId, message.input),
        });
        return;
      case 'sdk':
        this.runtime.onSdkCall?.(message.call);
    }
  }

  /** The environment is gone: a pending invocation fails with it. */
  private end(cause: ErrorShape, kind: 'timeout' | 'crash' = 'crash') {
    if (this.ended) return;
    this.ended = true;
    const pending = this.pending;
    this.pending = undefined;
    if (pending) {
      clearTimeout(pending.timer);
      pending.reject(new InvocationError(this.fn.name, cause, kind));
    }
  }

  post(message: ToEnvironment) {
    if (!this.ended) this.worker.postMessage(message);
  }

  invoke(event: unknown, deadline: number): Promise<Invocation> {
    if (this.ended)
      return Promise.reject(new InvocationError(this.fn.name, { name: 'Error', message: 'gone' }, 'crash'));
    this.lastInvokedAt = Date.now();
    const id = ++this.invocationId;
    return new Promise<Invocation>((resolveInvocation, reject) => {
      const timer = setTimeout(
        () => {
          const seconds = ((deadline - this.lastInvokedAt) / 1000).toFixed(2);
          this.end({ name: 'Sandbox.Timedout', message: `Task timed out after ${seconds} seconds` }, 'timeout');
          void this.worker.terminate();
        },
        Math.max(0, deadline - Date.now()),
      );
      this.pending = { resolve: resolveInvocation, reject, timer };
      this.post({ type: 'invoke', id, event, requestId: randomUUID(), deadline });
    });
  }

  async stop() {
    this.end({ name: 'Error', message: 'the runtime stopped the environment' });
    await this.worker.terminate();
  }
}

/** What the pools share: the faults in force and the SDK call observer. */
interface Runtime {
  /** The bootstrap bundle, each thread's main module. */
  bootstrap: string;
  faults(functionName: string): ArmedFault[];
  claimFault(faultId: number, input: unknown): boolean;
  onSdkCall?: (call: SdkCall) => void;
  /** Files of the bundle a function's thread has loaded (bundle.ts, `modulesLoaded`). */
  outputsLoaded(functionName: string, outputs: string[]): void;
}

/** The environments of one function. */
export class FunctionPool {
  private readonly environments = new Set<Environment>();
  private readonly idle: Environment[] = [];
  private readonly waiting: ((environment: Environment | Error) => void)[] = [];
  private stopped = false;

  constructor(
    readonly fn: FunctionConfig,
    private readonly runtime: Runtime,
    private readonly idleMs: number,
  ) {}

  /** Environments alive (starting, busy or idle). */
  get size() {
    return this.environments.size;
  }

  /** The most recently used idle environment, if any; never starts one. */
  private warm(): Environment | undefined {
    for (;;) {
      const environment = this.idle.pop();
      if (!environment || environment.alive) return environment;
    }
  }

  private isStale(environment: Environment) {
    return Date.now() - environment.lastInvokedAt > this.idleMs;
  }

  /** An environment for one invocation: a warm one, else a new one (cold start), else the next one freed. */
  private async acquire(): Promise<Environment> {
    if (this.stopped) throw new Error(`${this.fn.name}: the runtime is stopping`);
    const warm = this.warm();
    if (warm) return warm;
    if (this.environments.size < this.fn.maxConcurrency) return this.start();
    const next = await new Promise<Environment | Error>((resolveNext) => this.waiting.push(resolveNext));
    if (next instanceof Error) throw next;
    return next;
  }

  private async start(): Promise<Environment> {
    const environment = new Environment(this.fn, this.runtime);
    // Counted (and told of new faults) from the start, so no more than the concurrency ever start.
    this.environments.add(environment);
    try {
      await environment.ready;
      if (this.stopped) throw new Error(`${this.fn.name}: the runtime is stopping`);
      return environment;
    } catch (error) {
      this.environments.delete(environment);
      await environment.stop();
      throw error;
    }
  }

  /** Gives an environment back after an invocation; a dead one makes room for a new one. */
  private release(environment: Environment) {
    if (!environment.alive) {
      this.environments.delete(environment);
      const next = this.waiting.shift();
      if (next) this.start().then(next, next);
      return;
    }
    const next = this.waiting.shift();
    if (next) next(environment);
    else this.idle.push(environment);
  }

  /**
   * Runs one invocation in an environment of its own, within the function's timeout from its start
   * (a cold start is not counted, as on Lambda), or by `deadline` if that comes first.
   */
  async invoke(event: unknown, options: InvokeOptions = {}): Promise<Invocation> {
    const at = Date.now();
    const before = environmentSequence;
    const environment = await this.acquire();
    const waitMs = Date.now() - at;
    let ms = 0;
    let ok = false;
    try {
      const deadline = Math.min(Date.now() + this.fn.timeoutSeconds * 1000, options.deadline ?? Infinity);
      const invocation = await environment.invoke(event, deadline);
      ({ ms } = invocation);
      ok = true;
      return invocation;
    } finally {
      this.release(environment);
      logInvocation({ fn: this.fn.name, at, waitMs, cold: environment.id > before, ms, ok });
    }
  }

  /** Tells every live environment of the function the faults now in force. */
  broadcast(message: ToEnvironment) {
    for (const environment of this.environments) environment.post(message);
  }

  private retire(environment: Environment) {
    this.environments.delete(environment);
    void environment.stop();
  }

  /** Stops the environments that have been idle too long. */
  reap() {
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const environment = this.idle[i];
      if (!environment.alive || this.isStale(environment)) {
        this.idle.splice(i, 1);
        this.retire(environment);
      }
    }
  }

  async stop() {
    this.stopped = true;
    for (const next of this.waiting.splice(0)) next(new Error(`${this.fn.name}: the runtime is stopping`));
    this.idle.length = 0;
    await Promise.all([...this.environments].map((environment) => environment.stop()));
    this.environments.clear();
  }
}
