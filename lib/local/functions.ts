import { type FunctionConfig, FunctionPool, type InvokeOptions } from './environments.js';
import type { ArmedFault, FaultHandle, FaultSpec } from './faults.js';
import type { SdkCall } from './protocol.js';

interface FaultState {
  fault: ArmedFault;
  left: number;
  hits: unknown[];
  reach(input: unknown): void;
}

/**
 * Every function of the service with its execution environments, and the faults a test has
 * injected into them. Environments idle longer than `idleSeconds` are stopped.
 */
export class LocalFunctions {
  private readonly pools = new Map<string, FunctionPool>();
  private readonly armed = new Map<number, FaultState>();
  private readonly outputs = new Map<string, Set<string>>();
  private lastFaultId = 0;
  private readonly reaper: NodeJS.Timeout;

  constructor(
    functions: FunctionConfig[],
    options: { bootstrap: string; idleSeconds: number; onSdkCall?: (call: SdkCall) => void },
  ) {
    const runtime = {
      bootstrap: options.bootstrap,
      faults: (name: string) => this.faultsOf(name),
      claimFault: (id: number, input: unknown) => this.claim(id, input),
      onSdkCall: options.onSdkCall,
      outputsLoaded: (name: string, outputs: string[]) => {
        const loaded = this.outputs.get(name) ?? new Set<string>();
        for (const output of outputs) loaded.add(output);
        this.outputs.set(name, loaded);
      },
    };
    for (const fn of functions) this.pools.set(fn.name, new FunctionPool(fn, runtime, options.idleSeconds * 1000));
    this.reaper = setInterval(() => this.reap(), Math.min(5000, options.idleSeconds * 500));
    this.reaper.unref();
  }

  pool(name: string): FunctionPool {
    const pool = this.pools.get(name);
    if (!pool) throw new Error(`no function named ${name}`);
    return pool;
  }

  /** Invokes a function as a direct invocation would: its result, or its error. */
  async invoke(name: string, event: unknown, options?: InvokeOptions) {
    return (await this.pool(name).invoke(event, options)).result;
  }

  /** Live environments per function, busy or idle. */
  environments(): Record<string, number> {
    return Object.fromEntries([...this.pools].map(([name, pool]) => [name, pool.size]));
  }

  /** The files of its bundle a function's environments have loaded so far (its entry, its chunks). */
  outputsLoaded(name: string): string[] {
    return [...(this.outputs.get(name) ?? [])];
  }

  /** Arms a fault in every environment of its function, present and future. */
  inject(spec: FaultSpec): FaultHandle {
    this.pool(spec.function);
    const fault: ArmedFault = { ...spec, id: ++this.lastFaultId };
    let reach!: (input: unknown) => void;
    const reached = new Promise<unknown>((resolve) => (reach = resolve));
    const state: FaultState = {
      fault,
      left: spec.times ?? (spec.action === 'hold' ? Infinity : 1),
      hits: [],
      reach,
    };
    this.armed.set(fault.id, state);
    this.announce(spec.function);
    return {
      hits: state.hits,
      reached,
      release: () => this.disarm(fault.id),
    };
  }

  /** Disarms every fault and lets every held call go on. */
  clearFaults() {
    for (const id of [...this.armed.keys()]) this.disarm(id);
  }

  private disarm(id: number) {
    const state = this.armed.get(id);
    if (!state) return;
    this.armed.delete(id);
    this.announce(state.fault.function);
    this.pool(state.fault.function).broadcast({ type: 'release', faultId: id });
  }

  private faultsOf(name: string) {
    return [...this.armed.values()].filter((s) => s.fault.function === name).map((s) => s.fault);
  }

  private announce(name: string) {
    this.pool(name).broadcast({ type: 'faults', faults: this.faultsOf(name) });
  }

  /** Counts a fault's uses across environments: a `times: 1` fault fires in one call only. */
  private claim(id: number, input: unknown) {
    const state = this.armed.get(id);
    if (!state || state.left <= 0) return false;
    state.left--;
    state.hits.push(input);
    state.reach(input);
    if (state.left <= 0 && state.fault.action !== 'hold') {
      this.armed.delete(id);
      this.announce(state.fault.function);
    }
    return true;
  }

  private reap() {
    for (const pool of this.pools.values()) pool.reap();
  }

  async stop() {
    clearInterval(this.reaper);
    this.clearFaults();
    await Promise.all([...this.pools.values()].map((pool) => pool.stop()));
  }
}
