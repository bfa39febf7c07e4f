import { SQSClient } from '@aws-sdk/client-sqs';
import type { SdkCall } from '../lib/local/protocol.js';

/**
 * Counts, in the process that runs the local runtime, what AWS would bill for: Lambda invocations
 * and durations (the runtime's `onInvoke`), DynamoDB capacity units (the runtime makes every
 * DynamoDB command of the functions ask for `ReturnConsumedCapacity: INDEXES`, which reports the
 * total with the table and each GSI apart, and reports it through `onSdkCall`), SQS requests by
 * action (the functions' through `onSdkCall`, the local event-source pollers' at the prototype),
 * KMS requests by action.
 *
 * Only what happens while `counting` is on is counted, so set-up, observation through the API
 * and idle polling stay out of the figures.
 */

export interface Usage {
  invocations: Map<string, { count: number; billedMs: number; rawMs: number; records: number; billed: number[] }>;
  dynamo: {
    rru: number;
    wru: number;
    /** Of `wru`, the part DynamoDB reported for global secondary indexes. */
    gsiWru: number;
    /** `CapacityUnits` minus table minus indexes: 0 when the total includes every index. */
    unexplained: number;
    /** By `<operation> <target>`, e.g. `UpdateItem SJ`, `Query GSI2`. */
    byOperation: Map<string, { calls: number; units: number; gsiUnits: number }>;
    /** Conditional writes (and cancelled transactions) that failed: billed, but reported without capacity. */
    failedWrites: number;
    /** What those failures are estimated to cost: 1 WRU per item written (2 in a transaction). */
    failedWritesWru: number;
  };
  sqs: {
    /** Billable requests (64 KiB chunks) by action; ReceiveMessage only when it returned messages. */
    requests: Map<string, number>;
    /** Long polls that returned nothing: what the pollers cost while waiting, kept apart. */
    emptyReceives: number;
    messagesReceived: number;
  };
  kms: Map<string, number>;
  /** KMS requests by the function that made them. */
  kmsByFunction: Map<string, number>;
}

const CHUNK = 64 * 1024;
const chunks = (bytes: number) => Math.max(1, Math.ceil(bytes / CHUNK));
const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);
const isRead = (operation: string) => READS.has(operation.split(' ')[0]);

const bump = <K>(map: Map<K, number>, key: K, by = 1) => map.set(key, (map.get(key) ?? 0) + by);

export const emptyUsage = (): Usage => ({
  invocations: new Map(),
  dynamo: { rru: 0, wru: 0, gsiWru: 0, unexplained: 0, byOperation: new Map(), failedWrites: 0, failedWritesWru: 0 },
  sqs: { requests: new Map(), emptyReceives: 0, messagesReceived: 0 },
  kms: new Map(),
  kmsByFunction: new Map(),
});

type Capacity = {
  CapacityUnits?: number;
  Table?: { CapacityUnits?: number };
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
};

/** What a command touches, for the breakdown: `SJ` (the item kind of its key), `GSI2`, `tx SJ+SJ`. */
const target = (input: Record<string, any>): string => {
  const kind = (pk: unknown) => String(pk ?? '?').split('#')[0];
  if (input.IndexName) return input.IndexName;
  if (input.TransactItems) {
    return `tx ${input.TransactItems.map((t: Record<string, any>) => {
      const action = Object.values(t)[0];
      return kind(action?.Key?.PK ?? action?.Item?.PK);
    }).join('+')}`;
  }
  if (input.RequestItems) {
    const kinds = Object.values(input.RequestItems).flatMap((r: any) => (r.Keys ?? []).map((k: any) => kind(k.PK)));
    return [...new Set(kinds)].join('+');
  }
  if (input.Key) return kind(input.Key.PK);
  if (input.Item) return kind(input.Item.PK);
  if (input.ExpressionAttributeValues?.[':pk']) return kind(input.ExpressionAttributeValues[':pk']);
  return 'table';
};

const operationEntry = (u: Usage['dynamo'], operation: string) => {
  const entry = u.byOperation.get(operation) ?? { calls: 0, units: 0, gsiUnits: 0 };
  u.byOperation.set(operation, entry);
  return entry;
};

const recordCapacity = (u: Usage['dynamo'], operation: string, consumed: Capacity | Capacity[] | undefined) => {
  for (const c of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
    const units = c.CapacityUnits ?? 0;
    const gsi = Object.values(c.GlobalSecondaryIndexes ?? {}).reduce((s, g) => s + (g.CapacityUnits ?? 0), 0);
    u.unexplained += units - (c.Table?.CapacityUnits ?? 0) - gsi;
    if (isRead(operation)) u.rru += units;
    else {
      u.wru += units;
      u.gsiWru += gsi;
    }
    const entry = operationEntry(u, operation);
    entry.units += units;
    entry.gsiUnits += gsi;
  }
};

const countDynamo = (d: Usage['dynamo'], call: SdkCall) => {
  const operation = `${call.command} ${target(call.input)}`;
  if (call.error === undefined) {
    operationEntry(d, operation).calls++;
    recordCapacity(d, operation, call.consumedCapacity as Capacity | Capacity[] | undefined);
  } else if (call.error === 'ConditionalCheckFailedException' || call.error === 'TransactionCanceledException') {
    const items = (call.input as { TransactItems?: unknown[] }).TransactItems?.length;
    d.failedWrites++;
    d.failedWritesWru += items ? 2 * items : 1;
    const entry = operationEntry(d, `${operation} (failed)`);
    entry.calls++;
    entry.units += items ? 2 * items : 1;
  }
};

const countSqs = (s: Usage['sqs'], action: string, input: any, output?: any) => {
  const bodies = (list: { MessageBody?: string; Body?: string }[] | undefined) =>
    (list ?? []).reduce((sum, m) => sum + Buffer.byteLength(m.MessageBody ?? m.Body ?? ''), 0);
  switch (action) {
    case 'ReceiveMessage': {
      const messages = output?.Messages ?? [];
      if (!messages.length) s.emptyReceives++;
      else {
        s.messagesReceived += messages.length;
        bump(s.requests, action, chunks(bodies(messages)));
      }
      break;
    }
    case 'SendMessage':
      bump(s.requests, action, chunks(Buffer.byteLength(input.MessageBody ?? '')));
      break;
    case 'SendMessageBatch':
      bump(s.requests, action, chunks(bodies(input.Entries)));
      break;
    default:
      bump(s.requests, action);
  }
};

const countInvocation = (usage: Usage, name: string, ms: number, batch?: number) => {
  const entry = usage.invocations.get(name) ?? { count: 0, billedMs: 0, rawMs: 0, records: 0, billed: [] };
  entry.count++;
  // Lambda bills each invocation's duration rounded up to the next millisecond.
  entry.billedMs += Math.max(1, Math.ceil(ms));
  entry.billed.push(Math.max(1, Math.ceil(ms)));
  entry.rawMs += ms;
  entry.records += batch ?? 0;
  usage.invocations.set(name, entry);
};

/**
 * Creates the meter. Pass `onInvoke` and `onSdkCall` to `startLocalRuntime`: the functions run in
 * execution environments of their own, so their SDK calls are reported from there.
 */
export const createMeter = () => {
  const meter = {
    counting: false,
    usage: emptyUsage(),
    /** When each function last finished an invocation (counted or not), to tell when work has ended. */
    lastInvokeAt: new Map<string, number>(),
  };

  /** Every AWS SDK call a function made, reported by the local runtime from the function's environment. */
  const onSdkCall = (call: SdkCall) => {
    if (!meter.counting) return;
    if (call.service === 'KMS') {
      bump(meter.usage.kms, call.command);
      bump(meter.usage.kmsByFunction, call.functionName);
    } else if (call.service === 'SQS') countSqs(meter.usage.sqs, call.command, call.input);
    else if (call.service === 'DynamoDB') countDynamo(meter.usage.dynamo, call);
  };

  // The local event-source pollers run in this process, with a client private to the runtime: their
  // calls are counted at the SQS client's prototype.
  const prototype = SQSClient.prototype as unknown as { send: (command: any, ...rest: unknown[]) => Promise<any> };
  const send = Object.getPrototypeOf(SQSClient.prototype).send as typeof prototype.send;
  prototype.send = function countedSend(this: SQSClient, command: any, ...rest: unknown[]) {
    const action = String(command?.constructor?.name ?? 'unknown').replace(/Command$/, '');
    const promise = send.call(this, command, ...rest);
    return promise.then((output: any) => {
      if (meter.counting) countSqs(meter.usage.sqs, action, command?.input ?? {}, output);
      return output;
    });
  };

  const onInvoke = (name: string, ms: number, batch?: number) => {
    meter.lastInvokeAt.set(name, Date.now());
    if (meter.counting) countInvocation(meter.usage, name, ms, batch);
  };

  return { meter, onInvoke, onSdkCall };
};
