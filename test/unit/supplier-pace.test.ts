import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { learnThrottle, takeSlot } from '../../shared/entities/rate-limits.js';
import { COOL_SHARED_MS, LATE_MS, takeTurn, WAIT_IN_PROCESS_MS } from '../../shared/order-flow/placing-worker.js';
import { parseRatePolicy } from '../../shared/platforms/http.js';
import { throttledRatePerSecond } from '../../shared/platforms/storeplatform-b.js';
import { type Attempt, type WorkKind, type WorkMessage, waitForSlot } from '../../shared/work/runner.js';
import { dynamo, sqs } from './aws-mocks.js';

type Waiting = WorkMessage & { jobId: string; generation: number };

const conditionFailed = () => Object.assign(new Error('condition'), { name: 'ConditionalCheckFailedException' });

beforeEach(() => {
  dynamo.reset();
  sqs.reset();
});

describe('what a 429 states of a shop’s rate', () => {
  it('reads RateLimit-Policy as calls a second, the first policy of several', () => {
    expect(parseRatePolicy('5;w=1')).toBe(5);
    expect(parseRatePolicy('"default";q=10;w=2')).toBe(5);
    expect(parseRatePolicy('120;w=60, 5;w=1')).toBe(2);
    for (const junk of [null, 'junk', '0;w=1', '5']) expect(parseRatePolicy(junk)).toBeUndefined();
  });

  it('reads Shopify’s THROTTLED answer as its restore rate over the call’s cost', () => {
    const body = { extensions: { cost: { requestedQueryCost: 10, throttleStatus: { restoreRate: 50 } } } };
    expect(throttledRatePerSecond(body)).toBe(5);
    expect(throttledRatePerSecond({ extensions: {} })).toBeUndefined();
  });
});

describe('a shop’s pace (GCRA slots)', () => {
  it('takes the next free slot of a busy pace with one conditional write, moving it on by one interval', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { intervalMs: 200, nextAt: 10_400 } });
    expect(await takeSlot('slow.example', { intervalMs: 200, nextAt: 10_200 }, 9_000)).toBe(10_200);
    const [call] = dynamo.commandCalls(UpdateCommand);
    expect(call.args[0].input).toMatchObject({
      Key: { PK: 'PACE#slow.example', SK: 'PACE' },
      UpdateExpression: 'SET #n = #n + #i, #e = :e',
      ConditionExpression: 'attribute_exists(PK) AND #n > :now',
    });
  });

  it('takes now on an idle pace; a pace that turned busy meanwhile gives its next slot', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { intervalMs: 200, nextAt: 9_200 } });
    expect(await takeSlot('slow.example', { intervalMs: 200, nextAt: 8_000 }, 9_000)).toBe(9_000);

    dynamo.reset();
    dynamo
      .on(UpdateCommand, { ConditionExpression: 'attribute_exists(PK) AND #n <= :now' })
      .rejects(conditionFailed())
      .on(UpdateCommand, { ConditionExpression: 'attribute_exists(PK) AND #n > :now' })
      .resolves({ Attributes: { intervalMs: 200, nextAt: 9_600 } });
    expect(await takeSlot('slow.example', { intervalMs: 200, nextAt: 8_000 }, 9_000)).toBe(9_400);
  });

  it('learns a stated interval and reopens no earlier than Retry-After', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { intervalMs: 210, nextAt: 11_000 } });
    await learnThrottle('slow.example', { reopensAt: 11_000, statedIntervalMs: 210, fallbackIntervalMs: 1000 }, 10_000);
    const [learn, reopen] = dynamo.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(learn.ExpressionAttributeValues).toMatchObject({ ':i': 210, ':r': 11_000 });
    expect(reopen).toMatchObject({ ConditionExpression: 'attribute_exists(PK) AND #n < :r' });
  });

  it('slows a pace without a stated rate once per interval it had', async () => {
    dynamo.on(UpdateCommand).resolves({});
    const pacedAt = { intervalMs: 1000, nextAt: 0 };
    await learnThrottle('slow.example', { reopensAt: 1, fallbackIntervalMs: 1000, pacedAt }, 0);
    const [slow] = dynamo.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(slow).toMatchObject({ ConditionExpression: '#i = :old' });
    expect(slow.ExpressionAttributeValues).toMatchObject({ ':old': 1000, ':i': 1500 });
  });

  it('names in each write only values its expressions use (DynamoDB refuses an unused one)', async () => {
    dynamo.on(UpdateCommand).resolves({});
    const pacedAt = { intervalMs: 1000, nextAt: 0 };
    await learnThrottle('slow.example', { reopensAt: 1, fallbackIntervalMs: 1000, pacedAt }, 0);
    await learnThrottle('slow.example', { reopensAt: 1, fallbackIntervalMs: 1000 }, 0);
    await learnThrottle('slow.example', { reopensAt: 1, statedIntervalMs: 210, fallbackIntervalMs: 1000 }, 0);
    for (const { input } of dynamo.commandCalls(UpdateCommand).map((call) => call.args[0])) {
      const used = `${input.UpdateExpression} ${input.ConditionExpression ?? ''}`;
      const unused = Object.keys(input.ExpressionAttributeValues ?? {}).filter(
        (name) => !new RegExp(`${name}\\b`).test(used),
      );
      expect([input.UpdateExpression, unused]).toEqual([input.UpdateExpression, []]);
    }
  });
});

describe('a create’s turn', () => {
  it('costs a cool shop one read and no write', async () => {
    dynamo.on(GetCommand).resolves({});
    expect(await takeTurn('cool.example', undefined)).toEqual({});
    expect(dynamo.commandCalls(GetCommand)[0].args[0].input.ConsistentRead).toBe(false);
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('gives the creates of one batch to a cool shop one read between them; the next batch reads again', async () => {
    dynamo.on(GetCommand).resolves({});
    const batch = () => Promise.all(Array.from({ length: 10 }, () => takeTurn('batch.example', undefined)));
    expect(await batch()).toEqual(Array.from({ length: 10 }, () => ({})));
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, COOL_SHARED_MS + 20));
    await batch();
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(2);
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('sends a job to wait for a slot further than it may wait in process', async () => {
    const nextAt = Date.now() + WAIT_IN_PROCESS_MS + 5_000;
    dynamo.on(GetCommand).resolves({ Item: { intervalMs: 200, nextAt } });
    dynamo.on(UpdateCommand).resolves({ Attributes: { intervalMs: 200, nextAt: nextAt + 200 } });
    const turn = await takeTurn('hot.example', undefined);
    expect(turn.waitForSlotAt).toBe(nextAt);
  });

  it('gives up a slot that was already behind when its write answered, for a fresh one', async () => {
    // The write's answer puts the slot it took more than LATE_MS in the past, as a slow write does.
    const behind = Date.now() - LATE_MS - 1_000;
    dynamo.on(GetCommand).resolves({ Item: { intervalMs: 200, nextAt: Date.now() + 50 } });
    dynamo
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: { intervalMs: 200, nextAt: behind + 200 } })
      .resolves({ Attributes: { intervalMs: 200, nextAt: Date.now() + 400 } });
    const started = Date.now();
    await takeTurn('hot.example', undefined);
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(2);
    // The fresh slot is 200 ms ahead: the turn waited for it rather than calling at once.
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('calls at the slot its message keeps, without a read; a slot come too late takes a fresh one', async () => {
    expect(await takeTurn('hot.example', Date.now())).toEqual({});
    expect(dynamo.calls()).toHaveLength(0);

    dynamo.on(GetCommand).resolves({});
    expect(await takeTurn('hot.example', Date.now() - LATE_MS - 1_000)).toEqual({});
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(1);
  });
});

describe('a work item waiting for its slot', () => {
  it('sends one fresh message delayed to the slot’s second, keeping the slot; no try is counted', async () => {
    const sendToSlot = jest.fn().mockResolvedValue({ jobId: 'sj_1', generation: 4 });
    const kind = {
      words: { item: 'sync job' },
      queueUrl: () => 'https://sqs/sync',
      waitForSlot: sendToSlot,
    } as unknown as WorkKind<Waiting, unknown>;
    const slotAt = Date.now() + 7_500;
    const outcome = await waitForSlot(kind, {} as Attempt<Waiting, unknown>, slotAt);
    expect(outcome).toBe('done');
    expect(sendToSlot).toHaveBeenCalledWith({}, 8);
    const sent = sqs.commandCalls(SendMessageCommand)[0].args[0].input;
    expect(sent.DelaySeconds).toBe(7);
    expect(JSON.parse(sent.MessageBody!)).toEqual({ jobId: 'sj_1', generation: 4, slotAt });
  });
});

describe('a work item waiting for its slot past SQS’s 15 minutes', () => {
  it('carries notBefore a second before its slot, so the last hop of the early re-sends is not late', async () => {
    const kind = {
      words: { item: 'sync job' },
      queueUrl: () => 'https://sqs/sync',
      waitForSlot: jest.fn().mockResolvedValue({ jobId: 'sj_1', generation: 4 }),
    } as unknown as WorkKind<Waiting, unknown>;
    const slotAt = Date.now() + 3_600_000;
    await waitForSlot(kind, {} as Attempt<Waiting, unknown>, slotAt);
    const sent = sqs.commandCalls(SendMessageCommand)[0].args[0].input;
    expect(sent.DelaySeconds).toBe(900);
    expect(JSON.parse(sent.MessageBody!)).toEqual({ jobId: 'sj_1', generation: 4, slotAt, notBefore: slotAt - 1000 });
  });
});
