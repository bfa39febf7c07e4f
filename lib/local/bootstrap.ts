import { fileURLToPath, pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { __Client } from '@aws-sdk/client-sqs';
import { logger } from '../../shared/core/telemetry.js';
import { authorize } from './authorize.js';
import { type ArmedFault, concerns, gates } from './faults.js';
import { type LambdaHandler, lambdaContext } from './lambda.js';
import { type EnvironmentData, type FromEnvironment, LOADED_OUTPUTS, type ToEnvironment } from './protocol.js';

/**
 * The inside of one execution environment: what Lambda's runtime does in its sandbox. Runs in a
 * worker thread of its own, so the handler module and everything it holds at module scope (SDK
 * clients, caches, the batch processor, the logger) belong to this environment alone; it runs one
 * invocation at a time, because the runtime sends the next only after this one has answered.
 */

const data = workerData as EnvironmentData;
const port = parentPort!;
const send = (message: FromEnvironment) => port.postMessage(message);

let faults: ArmedFault[] = data.faults;
const claims = new Map<number, (granted: boolean) => void>();
const released = new Set<number>();
const held = new Map<number, (() => void)[]>();
let lastCallId = 0;

/** Whether this call takes the fault: the runtime counts a fault's uses across all environments. */
const claim = (faultId: number, input: unknown) =>
  new Promise<boolean>((resolve) => {
    const callId = ++lastCallId;
    claims.set(callId, resolve);
    let copy: unknown;
    try {
      copy = structuredClone(input);
    } catch {
      copy = undefined;
    }
    send({ type: 'claim', callId, faultId, input: copy });
  });

const hold = (faultId: number) =>
  released.has(faultId)
    ? Promise.resolve()
    : new Promise<void>((resolve) => held.set(faultId, [...(held.get(faultId) ?? []), resolve]));

/** `dropped` when the call must answer without reaching the service. */
const injectFaults = async (clientName: string | undefined, commandName: string | undefined, input: unknown) => {
  for (const fault of faults) {
    if (!concerns(fault, clientName, commandName) || !gates(fault, input)) continue;
    if (!(await claim(fault.id, input))) continue;
    if (fault.action === 'crash') process.exit(1);
    if (fault.action === 'hold') await hold(fault.id);
    if (fault.action === 'drop') return 'dropped';
    if (fault.action === 'fail') {
      const error = new Error(fault.message ?? `injected fault: ${fault.service} ${fault.command} failed`);
      error.name = 'InjectedFault';
      throw error;
    }
  }
  return undefined;
};

/** The receipt handles the running invocation made visible again later itself: the poller leaves them be. */
let visibilitySet: string[] = [];
const noteVisibility = (commandName: string | undefined, input: Record<string, any>) => {
  if (commandName === 'ChangeMessageVisibilityCommand') visibilitySet.push(input.ReceiptHandle);
  if (commandName === 'ChangeMessageVisibilityBatchCommand')
    for (const entry of input.Entries ?? []) visibilitySet.push(entry.ReceiptHandle);
};

const serviceOf = (clientName: string | undefined) => (clientName ?? 'Unknown').replace(/Client$/, '');
const commandOf = (commandName: string | undefined) => (commandName ?? 'Unknown').replace(/Command$/, '');

/**
 * Every SDK client the function builds gets this middleware on its first call, whichever module
 * builds it; it runs before DynamoDB values are marshalled, so faults match on plain inputs.
 */
const middleware =
  (next: (args: any) => Promise<any>, context: { clientName?: string; commandName?: string }) =>
  async (args: { input: Record<string, any> }) => {
    if (faults.length && (await injectFaults(context.clientName, context.commandName, args.input)) === 'dropped')
      return { output: { $metadata: {} }, response: {} };
    if (!data.observeSdk) {
      const result = await next(args);
      noteVisibility(context.commandName, args.input);
      return result;
    }
    const service = serviceOf(context.clientName);
    const call = { functionName: data.functionName, service, command: commandOf(context.commandName) };
    if (service === 'DynamoDB') args.input.ReturnConsumedCapacity = 'INDEXES';
    try {
      const result = await next(args);
      noteVisibility(context.commandName, args.input);
      send({
        type: 'sdk',
        call: { ...call, input: structuredClone(args.input), consumedCapacity: result.output?.ConsumedCapacity },
      });
      return result;
    } catch (error) {
      send({ type: 'sdk', call: { ...call, input: structuredClone(args.input), error: (error as Error).name } });
      throw error;
    }
  };

/**
 * The role's policy, applied to the request the SDK signed, innermost (below the deserializer): a call
 * it does not allow never leaves the environment and gets AWS's answer, which the SDK turns into the
 * error AWS's would be (`AccessDeniedException`, SQS's `AccessDenied`).
 */
const enforceAccess =
  (next: (args: any) => Promise<any>) =>
  async (args: { input: Record<string, any>; request: { headers: any; path?: string } }) => {
    const access = data.access;
    if (!access) return next(args);
    const refused = authorize(args.request.headers['x-amz-target'], args.input, access, args.request.path);
    if (!refused) return next(args);
    // One line a refusal, whatever the handler makes of the error: a declaration to fix in lib/routes.ts.
    process.stderr.write(
      `${JSON.stringify({
        level: 'ERROR',
        message: 'local runtime: access denied, as AWS would (lib/routes.ts declares what a function may do)',
        function: data.functionName,
        action: refused.request.action,
        resource: refused.request.resource,
      })}\n`,
    );
    const { statusCode, headers, body } = refused.denial;
    return { response: { statusCode, headers, body: Buffer.from(body) } };
  };

const withMiddleware = new WeakSet<object>();
const clientSend = __Client.prototype.send;
__Client.prototype.send = function sendThroughRuntime(this: InstanceType<typeof __Client>, ...args: any[]) {
  if (!withMiddleware.has(this.middlewareStack)) {
    withMiddleware.add(this.middlewareStack);
    this.middlewareStack.add(middleware as any, {
      step: 'initialize',
      priority: 'high',
      name: 'localRuntime',
      override: true,
    });
    this.middlewareStack.add(enforceAccess as any, {
      step: 'deserialize',
      priority: 'low',
      name: 'localRuntimeAccess',
      override: true,
    });
  }
  return (clientSend as (...a: any[]) => any).apply(this, args);
} as typeof clientSend;

port.on('message', (message: ToEnvironment) => {
  switch (message.type) {
    case 'faults':
      faults = message.faults;
      return;
    case 'claimed':
      claims.get(message.callId)?.(message.granted);
      claims.delete(message.callId);
      return;
    case 'release':
      released.add(message.faultId);
      for (const resolve of held.get(message.faultId) ?? []) resolve();
      held.delete(message.faultId);
      return;
    case 'invoke':
      void invoke(message);
  }
});

let handler: LambdaHandler;

/** The files of the bundle loaded since the last answer: the handler's at the first, a chunk on demand later. */
let outputsTold = 0;
const outputsLoaded = () => {
  const marked = (globalThis as Record<string, unknown>)[LOADED_OUTPUTS] as Set<string> | undefined;
  const loaded = [...(marked ?? [])];
  const told = loaded.slice(outputsTold).map((url) => fileURLToPath(url));
  outputsTold = loaded.length;
  return told;
};

const invoke = async ({ id, event, requestId, deadline }: Extract<ToEnvironment, { type: 'invoke' }>) => {
  const context = lambdaContext({ functionName: data.functionName, requestId, deadline, memoryMb: data.memoryMb });
  // Lambda's runtime keeps no context on the logger; handlers that do not inject it themselves (the
  // queue consumers) would log without naming their function. Locally each environment's own
  // logger is given the invocation's context, so every line names its function and request.
  logger.addContext(context);
  visibilitySet = [];
  const started = performance.now();
  try {
    const result = await handler(event, context);
    send({ type: 'done', id, ms: performance.now() - started, result, visibilitySet, outputs: outputsLoaded() });
  } catch (error) {
    const { name = 'Error', message = String(error), stack } = (error ?? {}) as Error;
    const ms = performance.now() - started;
    send({ type: 'done', id, ms, error: { name, message, stack }, visibilitySet, outputs: outputsLoaded() });
  }
};

const started = performance.now();
const module = await import(pathToFileURL(data.entry).href);
if (typeof module.handler !== 'function') throw new Error(`${data.entry} does not export a handler`);
handler = module.handler;
send({ type: 'ready', initMs: performance.now() - started });
