import { ChangeMessageVisibilityCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSRecord } from 'aws-lambda';
import { PlatformError } from '../../shared/platforms/http.js';
import {
  openDoor,
  parseWith,
  type QueueDoor,
  runWork,
  type WorkKind,
  type WorkMessage,
} from '../../shared/work/runner.js';
import { sqs } from './aws-mocks.js';
import { published } from './emf.js';

/**
 * The work-item runner (shared/work/runner.ts) with a kind of its own, no table behind it: what it
 * does for every kind, whatever the kind's item is.
 */

const deps = { cipher: { encrypt: jest.fn(), decrypt: jest.fn() }, platforms: jest.fn() } as never;

interface ThingMessage extends WorkMessage {
  thingId: string;
}

const attempt = jest.fn();
const fail = jest.fn();
const defer = jest.fn();

const things: WorkKind<ThingMessage, { id: string }> = {
  words: {
    item: 'thing',
    queue: 'things',
    refused: 'refused',
    throttledPastBudget: 'past budget',
    deferred: 'deferred',
  },
  queueUrl: () => 'https://sqs.us-east-1.amazonaws.com/000000000000/things',
  parse: (body) => parseWith(body, (f) => (typeof f.thingId === 'string' ? { thingId: f.thingId } : undefined)),
  messageContext: (message) => ({ thingId: message.thingId }),
  itemContext: () => ({}),
  claim: async (message) => ({ id: message.thingId }),
  startedAt: () => new Date().toISOString(),
  attempt: (_deps, a) => attempt(a),
  internalReason: 'internal error while doing the thing',
  throttledSince: () => undefined,
  end: async () => 'dead',
  defer: async (a, seconds) => defer(a, seconds),
  fail: async (_a, reason, _status, waitSeconds) => fail(reason, waitSeconds),
  backoffSeconds: () => [300, 1800, 60],
};

const record = (receiveCount = '1'): SQSRecord =>
  ({
    messageId: 'm-1',
    receiptHandle: 'rh-1',
    body: JSON.stringify({ thingId: 't_1' }),
    attributes: { ApproximateReceiveCount: receiveCount },
  }) as unknown as SQSRecord;

const visibilities = () =>
  sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input.VisibilityTimeout);

describe('the work-item runner', () => {
  beforeEach(() => {
    sqs.reset();
    sqs.on(ChangeMessageVisibilityCommand).resolves({}).on(SendMessageCommand).resolves({});
    for (const fn of [attempt, fail, defer]) fn.mockReset();
  });

  it('gives an unexpected throw after the claim a transient failure’s backoff, its text never recorded', async () => {
    attempt.mockRejectedValue(new Error('KMS AccessDenied for arn:aws:kms:secret'));

    expect(await runWork(things, deps, record('2'))).toBe('retry');

    expect(fail).toHaveBeenCalledWith('internal error while doing the thing', 1800);
    expect(visibilities()).toEqual([1800]);
  });

  it('counts an AccessDenied or a bug after the claim as SystemicErrors, with the same backoff', async () => {
    const { emf } = await published(async () => {
      const denied = Object.assign(new Error('User is not authorized to perform: kms:Decrypt'), {
        name: 'AccessDeniedException',
      });
      for (const error of [denied, new TypeError('x is undefined'), new Error('socket hang up')]) {
        attempt.mockRejectedValueOnce(error);
        expect(await runWork(things, deps, record('1'))).toBe('retry');
      }
    });
    expect(visibilities()).toEqual([300, 300, 300]);
    const systemic = emf.flatMap((line) => [JSON.parse(line).SystemicErrors ?? []].flat());
    expect(systemic).toEqual([1, 1]);
  });

  it('defers a 429 in one fresh message, without a failure or a visibility change', async () => {
    attempt.mockRejectedValue(
      new PlatformError({ platform: 'custom', status: 429, retryable: true, retryAfterSeconds: 5, message: '429' }),
    );
    defer.mockResolvedValue({ thingId: 't_1' });

    expect(await runWork(things, deps, record())).toBe('done');

    expect(fail).not.toHaveBeenCalled();
    expect(visibilities()).toEqual([]);
    expect(JSON.parse(sqs.commandCalls(SendMessageCommand)[0].args[0].input.MessageBody!)).toEqual({ thingId: 't_1' });
  });

  it('gives a record still running near the invocation’s end its backoff, counted from that end', async () => {
    attempt.mockImplementation(() => new Promise((resolve) => setTimeout(() => resolve('done'), 300)));
    const context = { getRemainingTimeInMillis: () => 2_100 } as unknown as Context;

    expect(await runWork(things, deps, record(), context)).toBe('done');

    expect(visibilities()).toEqual([2 + 300]);
  });

  it('leaves a record that ends in time alone', async () => {
    attempt.mockResolvedValue('done');
    const context = { getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

    expect(await runWork(things, deps, record(), context)).toBe('done');

    expect(visibilities()).toEqual([]);
  });
});

describe("a queue's door: one message type, parsed once, one handler per kind", () => {
  type Mail = { kind: 'thing'; message: ThingMessage } | { kind: 'note'; text: string };
  const parse = jest.fn((body: string) =>
    parseWith(body, (f): Mail | undefined =>
      typeof f.thingId === 'string'
        ? { kind: 'thing', message: { thingId: f.thingId } }
        : typeof f.note === 'string'
          ? { kind: 'note', text: f.note }
          : undefined,
    ),
  );
  const thing = jest.fn(async () => 'done' as const);
  const note = jest.fn(async () => 'done' as const);
  const door: QueueDoor<Mail, undefined, 'done' | 'dropped'> = {
    queue: 'mail',
    parse,
    malformed: 'dropped',
    handlers: { thing, note },
  };
  const received = (body: string) => ({ messageId: 'm1', body }) as SQSRecord;
  beforeEach(() => jest.clearAllMocks());

  it('reads each body once and hands it to the handler of its kind alone', async () => {
    expect(await openDoor(door, undefined, received('{"note":"hello"}'))).toBe('done');
    expect(parse).toHaveBeenCalledTimes(1);
    expect(note).toHaveBeenCalledWith(undefined, { kind: 'note', text: 'hello' }, expect.anything(), undefined);
    expect(thing).not.toHaveBeenCalled();
  });

  it('drops a body of no kind without calling any handler', async () => {
    expect(await openDoor(door, undefined, received('{"other":1}'))).toBe('dropped');
    expect(await openDoor(door, undefined, received('{'))).toBe('dropped');
    expect(thing).not.toHaveBeenCalled();
    expect(note).not.toHaveBeenCalled();
  });
});
