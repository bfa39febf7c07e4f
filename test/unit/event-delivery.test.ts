import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  GetCommand,
  type GetCommandInput,
  TransactWriteCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { SignatureV4 } from '@smithy/signature-v4';
import type { SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { Webhook } from 'standardwebhooks';
import { LEASE_MS } from '../../shared/entities/endpoint-leases.js';
import { eventId, eventItem, eventKey } from '../../shared/entities/event.js';
import { eventDeliveryItem, newDelivery } from '../../shared/entities/event-delivery.js';
import { type WebhookEndpoint, webhookEndpointItem } from '../../shared/entities/webhook-endpoint.js';
import { handOffSlowTry } from '../../shared/events/delivery-hand-off.js';
import {
  DEFERRAL_SECONDS,
  type DeliveryDeps,
  forgetJudgements,
  nextAttemptAfter,
  processDeliveryMessage,
  processSlowTry,
} from '../../shared/events/delivery-worker.js';
import { DISABLED_REASON } from '../../shared/events/endpoint-health.js';
import { DNS_TIMEOUT_MS, postWebhook, resolveHost } from '../../shared/events/webhook-sender.js';
import { presentEvent } from '../../shared/http/present.js';

/** The delivery worker (shared/events/delivery-worker.ts) over mocked clients, with its POST and resolver swapped. */

process.env.DELIVERY_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/delivery';
delete process.env.DELIVERY_RETRY_SECONDS;

const dynamo = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const OLD_SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const DAY = 86_400_000;
const createdAt = new Date(Date.now() - 60_000).toISOString();
const EVENT_ID = eventId('sync_job.completed', createdAt, 'sj_1');
const event = {
  id: EVENT_ID,
  ownerId: 'owner_a',
  type: 'sync_job.completed' as const,
  createdAt,
  object: { id: 'sj_1', object: 'sync_job', status: 'completed' },
  endpointIds: ['we_1'],
  failingEndpointIds: [],
};
const endpointOf = (changes: Partial<WebhookEndpoint> = {}): WebhookEndpoint => ({
  id: 'we_1',
  ownerId: 'owner_a',
  url: 'https://hooks.example.com/in',
  enabledEvents: ['*'],
  description: null,
  status: 'enabled',
  disabledReason: null,
  // The stub cipher below decrypts to the text itself.
  secret: SECRET,
  previousSecret: null,
  createdAt,
  updatedAt: createdAt,
  // Known to answer promptly: its tries take no lease (the lease tests below use one that is not).
  promptSince: createdAt,
  ...changes,
});
/** An endpoint not known to answer promptly (new, a new URL, or seen slow): each try takes a lease. */
const leasedEndpoint = (changes: Partial<WebhookEndpoint> = {}) => endpointOf({ promptSince: null, ...changes });

const post = jest.fn();
const resolve = jest.fn();
const handOff = jest.fn();
const deps: DeliveryDeps = {
  cipher: { encrypt: async (text) => text, decrypt: async (text) => text },
  resolve,
  post,
  present: presentEvent,
  handOff,
};

const stored = (attempts: number, endpoint: WebhookEndpoint, leases?: Record<string, unknown>) => {
  dynamo.on(GetCommand).callsFake(({ Key }) => {
    if (Key.SK === 'LEASES') return { Item: leases };
    // The event at the key its id spells, read once (its first layout's key never: it is found there).
    if (Key.PK === eventKey(event).PK && Key.SK === eventKey(event).SK) return { Item: eventItem(event) };
    if (Key.SK === 'EVT') throw new Error('the first layout read for an event found at its key');
    if (String(Key.SK).startsWith('DLV#'))
      return { Item: eventDeliveryItem({ ...newDelivery(event, 'we_1'), attempts }) };
    return { Item: webhookEndpointItem(endpoint) };
  });
};

const record = (attempts: number, deferrals?: number): SQSRecord =>
  ({
    messageId: 'm-1',
    receiptHandle: 'rh-1',
    body: JSON.stringify({ eventId: EVENT_ID, endpointId: 'we_1', attempts, ...(deferrals ? { deferrals } : {}) }),
    attributes: { ApproximateReceiveCount: '1' },
  }) as unknown as SQSRecord;

/**
 * The slow try (EventDeliverySlowTry) given `received`'s message, as the worker's asynchronous invoke
 * hands it over: 'done' once it resolved (it throws otherwise, for Lambda's retries).
 */
const slowTry = async (received: SQSRecord) => {
  await processSlowTry(deps, JSON.parse(received.body));
  return 'done' as const;
};

/**
 * What the try wrote on the delivery, by attribute name: the SET of the transaction's first update, or
 * of the delivery's own UpdateItem (a first try delivered: a single-item write).
 */
const deliveryWrite = () => {
  const [transaction] = dynamo.commandCalls(TransactWriteCommand);
  const update = transaction
    ? transaction.args[0].input.TransactItems![0].Update!
    : dynamo.commandCalls(UpdateCommand).find((c) => String(c.args[0].input.Key!.SK).startsWith('DLV#'))!.args[0].input;
  const names = update.ExpressionAttributeNames!;
  const values = update.ExpressionAttributeValues!;
  return Object.fromEntries(
    Object.entries(names)
      .filter(([placeholder]) => /^#a\d+$/.test(placeholder))
      .map(([placeholder, name]) => [name, values[`:${placeholder.slice(1)}`]]),
  );
};
const sent = () => sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
/** A receiver that never answers: each POST ends (no answer) only once aborted. The last POST's signal. */
const postUntilAborted = () => {
  let signal: AbortSignal | undefined;
  post.mockImplementation(
    (_url, _body, _headers, _addresses, given: AbortSignal) =>
      new Promise((done) => {
        signal = given;
        given.addEventListener('abort', () => done(null));
      }),
  );
  return () => signal;
};
/** The UpdateItems of anything but the endpoint's leases (its lease taken and given back around each POST). */
const endpointUpdates = () =>
  dynamo
    .commandCalls(UpdateCommand)
    .map((c) => c.args[0].input)
    .filter((input) => input.Key!.SK !== 'LEASES');

beforeEach(() => {
  forgetJudgements();
  dynamo.reset();
  sqs.reset();
  post.mockReset();
  handOff.mockReset().mockResolvedValue(undefined);
  resolve.mockReset().mockResolvedValue(['93.184.216.34']);
  dynamo.on(TransactWriteCommand).resolves({});
  dynamo.on(UpdateCommand).resolves({});
  sqs.on(SendMessageCommand).resolves({});
});

describe('the delivery worker', () => {
  it('delivers on a 2xx, signed so that standardwebhooks verifies it, and sends nothing more', async () => {
    stored(0, endpointOf());
    post.mockResolvedValue(204);
    expect(await processDeliveryMessage(deps, record(0))).toBe('done');
    const [url, body, headers, addresses] = post.mock.calls[0];
    expect(url).toBe('https://hooks.example.com/in');
    expect(addresses).toEqual(['93.184.216.34']);
    expect(new Webhook(SECRET).verify(body, headers)).toMatchObject({ id: EVENT_ID, type: 'sync_job.completed' });
    expect(headers['webhook-id']).toBe(EVENT_ID);
    expect(deliveryWrite()).toMatchObject({ status: 'delivered', attempts: 1, lastResponseStatus: 204 });
    // A first try delivered to an endpoint known to answer promptly is one UpdateItem of the delivery, on
    // condition that it is still at this try, and nothing else: no lease read, taken or given back.
    expect(dynamo.commandCalls(TransactWriteCommand)).toEqual([]);
    const updates = dynamo.commandCalls(UpdateCommand).map((c) => c.args[0].input);
    expect(updates.map((input) => input.Key!.SK)).toEqual([expect.stringMatching(/^DLV#/)]);
    expect(dynamo.commandCalls(GetCommand).map((c) => c.args[0].input.Key!.SK)).not.toContain('LEASES');
    expect(updates[0]).toMatchObject({
      ConditionExpression: '#attempts = :was',
      ExpressionAttributeValues: { ':was': 0 },
    });
    expect(sent()).toEqual([]);
  });

  it('signs with both secrets during a rotation: either verifies', async () => {
    const previousSecret = { secret: OLD_SECRET, expiresAt: new Date(Date.now() + DAY).toISOString() };
    stored(0, endpointOf({ previousSecret }));
    post.mockResolvedValue(200);
    await processDeliveryMessage(deps, record(0));
    const [, body, headers] = post.mock.calls[0];
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(SECRET).verify(body, headers)).toBeTruthy();
    expect(new Webhook(OLD_SECRET).verify(body, headers)).toBeTruthy();
  });

  it('signs with the new secret alone once the overlap is over: the old one verifies nothing', async () => {
    const previousSecret = { secret: OLD_SECRET, expiresAt: new Date(Date.now() - 1_000).toISOString() };
    stored(0, endpointOf({ previousSecret }));
    post.mockResolvedValue(200);
    await processDeliveryMessage(deps, record(0));
    const [, body, headers] = post.mock.calls[0];
    expect(headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(new Webhook(SECRET).verify(body, headers)).toBeTruthy();
    expect(() => new Webhook(OLD_SECRET).verify(body, headers)).toThrow();
  });

  it.each([
    [302, 302],
    [500, 500],
    [null, null],
  ])('takes %p (3xx, 5xx, no answer in time) for a failure, tried again 5 s later', async (answer, shown) => {
    stored(0, endpointOf());
    post.mockResolvedValue(answer);
    const before = Date.now();
    expect(await processDeliveryMessage(deps, record(0))).toBe('done');
    const written = deliveryWrite();
    expect(written).toMatchObject({ status: 'pending', attempts: 1, lastResponseStatus: shown });
    expect(Date.parse(written.nextAttemptAt as string) - before).toBeGreaterThanOrEqual(5_000);
    expect(sent()).toEqual([expect.objectContaining({ DelaySeconds: 5 })]);
    expect(JSON.parse(sent()[0].MessageBody!)).toMatchObject({ eventId: EVENT_ID, endpointId: 'we_1', attempts: 1 });
    // The event, at its key, enters the failing list (GSI6, sorted as its list), if it is still there.
    const onEvent = dynamo.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems![1].Update!;
    expect(onEvent.Key).toEqual(eventKey(event));
    expect(onEvent.ConditionExpression).toBe('attribute_exists(PK)');
    expect(Object.values(onEvent.ExpressionAttributeNames!)).toEqual(['failingEndpointIds', 'GSI6PK', 'GSI1SK']);
    expect(Object.values(onEvent.ExpressionAttributeValues!)).toEqual([
      new Set(['we_1']),
      'OWNER#owner_a#EVT#FAILING',
      `${createdAt}#${EVENT_ID}`,
    ]);
  });

  it('follows the schedule 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then none', () => {
    const at = Date.parse('2026-11-01T00:00:00.000Z');
    const waits = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => {
      const next = nextAttemptAfter(n, at);
      return next && (Date.parse(next.at) - at) / 1000;
    });
    expect(waits).toEqual([5, 300, 1800, 7200, 18_000, 36_000, 36_000, null]);
  });

  it('hops over SQS’s 15 minutes: a wait of 2 h is a message of 900 s carrying its time', async () => {
    stored(3, endpointOf());
    post.mockResolvedValue(500);
    const before = Date.now();
    await processDeliveryMessage(deps, record(3));
    expect(sent()[0].DelaySeconds).toBe(900);
    const message = JSON.parse(sent()[0].MessageBody!);
    expect(message.attempts).toBe(4);
    expect(message.notBefore - before).toBeGreaterThanOrEqual(7_200_000);
  });

  it('is `failed` after the last try, with no message left', async () => {
    stored(7, endpointOf());
    post.mockResolvedValue(500);
    await processDeliveryMessage(deps, record(7));
    expect(deliveryWrite()).toMatchObject({ status: 'failed', attempts: 8, nextAttemptAt: null });
    expect(sent()).toEqual([]);
  });

  it('drops a message its delivery has moved past', async () => {
    stored(2, endpointOf());
    expect(await processDeliveryMessage(deps, record(1))).toBe('done');
    expect(post).not.toHaveBeenCalled();
    expect(dynamo.commandCalls(TransactWriteCommand)).toEqual([]);
  });

  it.each([['127.0.0.1'], ['10.1.2.3'], ['169.254.169.254'], ['::1']])(
    'refuses at send a name that now resolves to %s: no request, a failed try',
    async (address) => {
      stored(0, endpointOf());
      resolve.mockResolvedValue([address]);
      await processDeliveryMessage(deps, record(0));
      expect(resolve).toHaveBeenCalledWith('hooks.example.com');
      expect(post).not.toHaveBeenCalled();
      expect(deliveryWrite()).toMatchObject({ status: 'pending', attempts: 1, lastResponseStatus: null });
    },
  );

  it('disables an endpoint whose every delivery has failed for 5 days, with its reason', async () => {
    const longAgo = new Date(Date.now() - 6 * DAY).toISOString();
    stored(0, endpointOf({ failingSince: longAgo, updatedAt: new Date(Date.now() - 7 * DAY).toISOString() }));
    post.mockResolvedValue(500);
    await processDeliveryMessage(deps, record(0));
    const update = endpointUpdates()[0];
    expect(update.ExpressionAttributeValues).toMatchObject({ ':disabled': 'disabled', ':reason': DISABLED_REASON });
  });

  it('keeps an endpoint failing for less than 5 days (or changed since) enabled', async () => {
    const since = new Date(Date.now() - 6 * DAY).toISOString();
    stored(0, endpointOf({ failingSince: since, updatedAt: new Date(Date.now() - DAY).toISOString() }));
    post.mockResolvedValue(500);
    await processDeliveryMessage(deps, record(0));
    expect(endpointUpdates()).toEqual([]);
  });

  it('marks an endpoint failing at its first failure, and no longer at its next success', async () => {
    stored(0, endpointOf());
    post.mockResolvedValue(500);
    await processDeliveryMessage(deps, record(0));
    expect(endpointUpdates()[0].UpdateExpression).toBe('SET failingSince = :now');
    dynamo.resetHistory();
    stored(1, endpointOf({ failingSince: createdAt }));
    post.mockResolvedValue(200);
    await processDeliveryMessage(deps, record(1));
    const updates = endpointUpdates().map((input) => input.UpdateExpression);
    expect(updates).toContain('REMOVE failingSince');
  });
});

describe('one endpoint’s share of delivery capacity (issue 39, item 4)', () => {
  const leaseWrites = () =>
    dynamo
      .commandCalls(UpdateCommand)
      .map((c) => c.args[0].input)
      .filter((input) => input.Key!.SK === 'LEASES');
  const leaseReads = () =>
    dynamo
      .commandCalls(GetCommand)
      .map((c) => c.args[0].input)
      .filter((input) => input.Key!.SK === 'LEASES');
  afterEach(() => {
    delete process.env.DELIVERY_ENDPOINT_CONCURRENCY;
  });

  it('takes a lease before the POST, on condition, and gives it back after: decided before the try', async () => {
    const later = Date.now() + 10_000;
    stored(0, leasedEndpoint(), { s0: later, s1: later, s2: later, s3: 0 });
    const order: string[] = [];
    dynamo.on(UpdateCommand, { Key: { SK: 'LEASES' } }).callsFake(async (input) => {
      order.push(input.ConditionExpression === '#slot = :until' ? 'give' : 'take');
      return {};
    });
    post.mockImplementation(async () => {
      order.push('post');
      return 204;
    });
    await slowTry(record(0));
    expect(order).toEqual(['take', 'post', 'give']);
    const [take, give] = leaseWrites();
    // The one lease the read shows free (s0-s2 held): LEASES_PER_ENDPOINT is 4.
    expect(take.ExpressionAttributeNames).toEqual({ '#slot': 's3' });
    expect(take.ConditionExpression).toBe('attribute_not_exists(#slot) OR #slot <= :at');
    expect(give).toMatchObject({ ConditionExpression: '#slot = :until', UpdateExpression: 'SET #slot = :free' });
    expect(give.ExpressionAttributeValues![':until']).toBe(take.ExpressionAttributeValues![':until']);
    expect(deliveryWrite()).toMatchObject({ status: 'delivered' });
    // The claim's eventually consistent read was right: no second read.
    expect(leaseReads()).toHaveLength(1);
  });

  it('every lease held (by tries just begun): no POST, no write; the same try comes back a second later', async () => {
    // Each lease taken half a second ago: a busy receiver that may answer them yet.
    const later = Date.now() + LEASE_MS - 500;
    stored(0, leasedEndpoint(), { s0: later, s1: later, s2: later, s3: later });
    post.mockResolvedValue(204);
    expect(await slowTry(record(0))).toBe('done');
    expect(post).not.toHaveBeenCalled();
    expect(leaseWrites()).toEqual([]);
    // Read again, consistently, before it is put back.
    expect(leaseReads().map((read) => Boolean(read.ConsistentRead))).toEqual([false, true]);
    expect(dynamo.commandCalls(TransactWriteCommand)).toEqual([]);
    expect(sent()).toEqual([expect.objectContaining({ DelaySeconds: DEFERRAL_SECONDS[0] })]);
    expect(JSON.parse(sent()[0].MessageBody!)).toMatchObject({ attempts: 0, deferrals: 1 });
  });

  it('every lease held, one by a try in flight past promptMs (it hangs): failed at once, not put back', async () => {
    // One lease taken 10 s ago and not given back (its receiver has not answered that try), three just now.
    const young = Date.now() + LEASE_MS - 500;
    stored(0, leasedEndpoint(), { s0: young, s1: Date.now() + 10_000, s2: young, s3: young });
    const decrypt = jest.spyOn(deps.cipher, 'decrypt');
    await slowTry(record(0));
    expect(post).not.toHaveBeenCalled();
    expect(decrypt).not.toHaveBeenCalled();
    expect(leaseWrites()).toEqual([]);
    expect(deliveryWrite()).toMatchObject({ status: 'pending', attempts: 1, lastResponseStatus: null });
    // No deferral: the next try is §14's, a fresh message after its first wait.
    expect(sent()).toHaveLength(1);
    expect(sent()[0].DelaySeconds).toBe(5);
    expect(JSON.parse(sent()[0].MessageBody!)).toEqual({ eventId: EVENT_ID, endpointId: 'we_1', attempts: 1 });
    decrypt.mockRestore();
  });

  it('still no lease after the last deferral: the try fails as one not answered, on §14’s schedule', async () => {
    const later = Date.now() + 10_000;
    stored(0, leasedEndpoint(), { s0: later, s1: later, s2: later, s3: later });
    const last = record(0, DEFERRAL_SECONDS.length);
    await slowTry(last);
    expect(post).not.toHaveBeenCalled();
    expect(deliveryWrite()).toMatchObject({ status: 'pending', attempts: 1, lastResponseStatus: null });
    // The next try: a fresh message, no deferral carried over, after §14's first wait.
    expect(sent()).toHaveLength(1);
    expect(sent()[0].DelaySeconds).toBe(5);
    expect(JSON.parse(sent()[0].MessageBody!)).toEqual({ eventId: EVENT_ID, endpointId: 'we_1', attempts: 1 });
  });

  it('a stale read: the write on condition fails, the consistent read finds the lease given back, POSTs', async () => {
    const later = Date.now() + 10_000;
    stored(0, leasedEndpoint());
    dynamo.on(GetCommand, { Key: { SK: 'LEASES' } }).callsFake(async (input) => ({
      Item: input.ConsistentRead
        ? { s0: later, s1: later, s2: 0, s3: later }
        : { s0: later, s1: 0, s2: later, s3: later },
    }));
    const refused = Object.assign(new Error('held'), { name: 'ConditionalCheckFailedException' });
    dynamo.on(UpdateCommand, { Key: { SK: 'LEASES' }, ExpressionAttributeNames: { '#slot': 's1' } }).rejects(refused);
    post.mockResolvedValue(204);
    await slowTry(record(0));
    expect(post).toHaveBeenCalledTimes(1);
    expect(leaseWrites().map((w) => w.ExpressionAttributeNames!['#slot'])).toEqual(['s1', 's2', 's2']);
    expect(deliveryWrite()).toMatchObject({ status: 'delivered' });
  });

  it('holds the number of leases DELIVERY_ENDPOINT_CONCURRENCY sets', async () => {
    process.env.DELIVERY_ENDPOINT_CONCURRENCY = '2';
    const later = Date.now() + LEASE_MS - 500;
    // s2 is free, but beyond the 2 leases: every lease is held.
    stored(0, leasedEndpoint(), { s0: later, s1: later, s2: 0 });
    post.mockResolvedValue(204);
    await slowTry(record(0));
    expect(post).not.toHaveBeenCalled();
    expect(JSON.parse(sent()[0].MessageBody!)).toMatchObject({ deferrals: 1 });
  });

  /** The lease item as DynamoDB would keep it: each take and give-back on its condition. */
  const leaseTable = () => {
    const slots: Record<string, number> = {};
    dynamo.on(GetCommand, { Key: { SK: 'LEASES' } }).callsFake(async () => ({ Item: { ...slots } }));
    dynamo.on(UpdateCommand, { Key: { SK: 'LEASES' } }).callsFake(async (input) => {
      const slot = input.ExpressionAttributeNames['#slot'];
      const values = input.ExpressionAttributeValues;
      const free =
        input.ConditionExpression === '#slot = :until'
          ? slots[slot] === values[':until']
          : !(slots[slot] > values[':at']);
      if (!free) throw Object.assign(new Error('held'), { name: 'ConditionalCheckFailedException' });
      slots[slot] = values[':free'] ?? values[':until'];
      return {};
    });
  };
  /** Two records of one batch, of the same endpoint, side by side. */
  const twoAtOnce = () =>
    Promise.all([record(0), { ...record(0), messageId: 'm-2', receiptHandle: 'rh-2' }].map((r) => slowTry(r)));

  it('a try of the same batch holds the one lease: the other waits for it, and goes once it was answered', async () => {
    process.env.DELIVERY_ENDPOINT_CONCURRENCY = '1';
    stored(0, leasedEndpoint());
    leaseTable();
    let open = 0;
    let mostOpen = 0;
    post.mockImplementation(async () => {
      mostOpen = Math.max(mostOpen, ++open);
      await new Promise((done) => setTimeout(done, 50));
      open -= 1;
      return 204;
    });
    await twoAtOnce();
    expect(post).toHaveBeenCalledTimes(2);
    expect(mostOpen).toBe(1);
    expect(sent()).toEqual([]);
  });

  it('…and is put back, unsent, when the receiver did not answer that try (it hangs)', async () => {
    process.env.DELIVERY_ENDPOINT_CONCURRENCY = '1';
    stored(0, leasedEndpoint());
    leaseTable();
    post.mockImplementation(() => new Promise((done) => setTimeout(() => done(null), 50)));
    await twoAtOnce();
    expect(post).toHaveBeenCalledTimes(1);
    const messages = sent().map((m) => JSON.parse(m.MessageBody!));
    // The hung try's next one (§14), and the other try put back as it was, its first deferral.
    expect(messages).toEqual(
      expect.arrayContaining([
        { eventId: EVENT_ID, endpointId: 'we_1', attempts: 1 },
        { eventId: EVENT_ID, endpointId: 'we_1', attempts: 0, deferrals: 1 },
      ]),
    );
  });

  it('a lease not given back (the write failed) loses nothing: the try’s outcome is written', async () => {
    stored(0, leasedEndpoint());
    dynamo
      .on(UpdateCommand, { Key: { SK: 'LEASES' }, ConditionExpression: '#slot = :until' })
      .rejects(new Error('down'));
    post.mockResolvedValue(204);
    expect(await slowTry(record(0))).toBe('done');
    expect(deliveryWrite()).toMatchObject({ status: 'delivered' });
  });
});

describe('leases only for an endpoint not known to answer promptly (issues 39 and 44)', () => {
  /** The reads and writes of the endpoint's leases item, in their order. */
  const leaseCalls = () =>
    dynamo
      .calls()
      .map((c) => c.args[0].input as UpdateCommandInput & GetCommandInput)
      .filter((input) => input.Key?.SK === 'LEASES');
  /** The endpoint's own UpdateItems (its key's sort key is its id): prompt or slow marks, health. */
  const endpointWrites = () =>
    dynamo
      .commandCalls(UpdateCommand)
      .map((c) => c.args[0].input)
      .filter((input) => input.Key!.SK === 'WHE#we_1' || String(input.Key!.SK).endsWith('we_1'))
      .filter((input) => !String(input.Key!.SK).startsWith('DLV#'));
  const refused = () => Object.assign(new Error('held'), { name: 'ConditionalCheckFailedException' });
  afterEach(() => {
    delete process.env.DELIVERY_PROMPT_MS;
    delete process.env.DELIVERY_ENDPOINT_CONCURRENCY;
  });

  it('a prompt endpoint’s happy path: no lease read or written, the delivery’s one write', async () => {
    stored(0, endpointOf());
    post.mockResolvedValue(204);
    await processDeliveryMessage(deps, record(0));
    expect(leaseCalls()).toEqual([]);
    expect(endpointWrites()).toEqual([]);
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(1);
    expect(deliveryWrite()).toMatchObject({ status: 'delivered' });
  });

  it('a leased try answered promptly frees its endpoint: promptSince written once, after the give-back', async () => {
    stored(0, leasedEndpoint());
    post.mockResolvedValue(204);
    await slowTry(record(0));
    const give = leaseCalls().find((input) => input.ConditionExpression === '#slot = :until');
    // The give-back answers the leases as it left them: whether another try of the endpoint is in flight.
    expect(give).toMatchObject({ ReturnValues: 'ALL_NEW' });
    expect(endpointWrites()).toEqual([expect.objectContaining({ UpdateExpression: 'SET promptSince = :now' })]);
    // The same environment's next prompt answers (a batch claimed before the mark) do not write it again.
    dynamo.resetHistory();
    await slowTry(record(0));
    expect(endpointWrites()).toEqual([]);
  });

  it('not freed while another lease is held by a try in flight longer (its receiver hangs for some)', async () => {
    stored(0, leasedEndpoint());
    const takenLongAgo = Date.now() - 5_000 + LEASE_MS;
    dynamo
      .on(UpdateCommand, { Key: { SK: 'LEASES' }, ConditionExpression: '#slot = :until' })
      .resolves({ Attributes: { s0: 0, s1: takenLongAgo } });
    post.mockResolvedValue(204);
    await slowTry(record(0));
    expect(deliveryWrite()).toMatchObject({ status: 'delivered' });
    expect(endpointWrites()).toEqual([]);
  });

  it('not freed by an answer later than promptMs, nor by no answer', async () => {
    process.env.DELIVERY_PROMPT_MS = '100';
    stored(0, leasedEndpoint());
    post.mockImplementation(() => new Promise((done) => setTimeout(() => done(204), 200)));
    await slowTry(record(0));
    post.mockResolvedValue(null);
    await slowTry(record(0));
    expect(endpointWrites().filter((input) => /promptSince/.test(input.UpdateExpression!))).toEqual([]);
  });

  it('a prompt endpoint’s try not answered in time: the endpoint slow, the POST cut, the try handed off', async () => {
    process.env.DELIVERY_PROMPT_MS = '100';
    stored(0, endpointOf());
    let signal: AbortSignal | undefined;
    post.mockImplementation((_url, _body, _headers, _addresses, given: AbortSignal) => {
      signal = given;
      return new Promise((done) => setTimeout(() => done(204), 300));
    });
    const started = Date.now();
    expect(await processDeliveryMessage(deps, record(0))).toBe('done');
    // The batch waited promptMs, not the receiver.
    expect(Date.now() - started).toBeLessThan(290);
    // One write: promptSince removed, on condition that it is still the one read.
    const [slow] = endpointWrites();
    expect(slow).toMatchObject({ UpdateExpression: 'REMOVE promptSince', ConditionExpression: 'promptSince = :was' });
    expect(slow.ExpressionAttributeValues).toEqual({ ':was': createdAt });
    // No lease here: the POST aborted (the receiver may see the webhook-id again), the try handed over, ids only.
    expect(leaseCalls()).toEqual([]);
    expect(signal?.aborted).toBe(true);
    expect(handOff).toHaveBeenCalledWith({ eventId: EVENT_ID, endpointId: 'we_1', attempts: 0 });
    expect(dynamo.commandCalls(TransactWriteCommand)).toEqual([]);
    expect(sent()).toEqual([]);
    // The slow try takes a lease (an eventually consistent read first), POSTs, gives it back, records the answer.
    dynamo.resetHistory();
    post.mockResolvedValue(204);
    await slowTry(record(0));
    const leases = leaseCalls();
    expect(leases[0].ConsistentRead).toBeFalsy();
    expect(leases.slice(1).map((input) => input.ConditionExpression)).toEqual([
      'attribute_not_exists(#slot) OR #slot <= :at',
      '#slot = :until',
    ]);
    expect(deliveryWrite()).toMatchObject({ status: 'delivered', lastResponseStatus: 204 });
    // Its next try in the batch goes under a lease, though the read still shows the endpoint prompt, cut
    // at promptMs: answered at once, it is delivered there, not handed off.
    dynamo.resetHistory();
    post.mockClear();
    handOff.mockClear();
    await processDeliveryMessage(deps, record(0));
    expect(post).toHaveBeenCalledTimes(1);
    expect(post.mock.calls[0][4]).toBeInstanceOf(AbortSignal);
    expect(handOff).not.toHaveBeenCalled();
    expect(leaseCalls().map((input) => (input.UpdateExpression ? 'write' : 'read'))).toEqual([
      'read',
      'write',
      'write',
    ]);
    expect(deliveryWrite()).toMatchObject({ status: 'delivered', lastResponseStatus: 204 });
  });

  it('…its slow try fails at once when hung tries hold every lease: not answered, on §14’s schedule', async () => {
    process.env.DELIVERY_PROMPT_MS = '100';
    const later = Date.now() + 10_000;
    stored(0, endpointOf(), { s0: later, s1: later, s2: later, s3: later });
    const signal = postUntilAborted();
    const started = Date.now();
    await processDeliveryMessage(deps, record(0));
    expect(signal()?.aborted).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(handOff).toHaveBeenCalledTimes(1);
    await slowTry(record(0));
    expect(post).toHaveBeenCalledTimes(1);
    expect(deliveryWrite()).toMatchObject({ status: 'pending', attempts: 1, lastResponseStatus: null });
    expect(sent()).toEqual([expect.objectContaining({ DelaySeconds: 5 })]);
  });

  it('a prompt endpoint that starts to hang holds no more than its leases once found slow', async () => {
    process.env.DELIVERY_PROMPT_MS = '100';
    process.env.DELIVERY_ENDPOINT_CONCURRENCY = '2';
    stored(0, endpointOf());
    const slots: Record<string, number> = {};
    dynamo.on(GetCommand, { Key: { SK: 'LEASES' } }).callsFake(async () => ({ Item: { ...slots } }));
    dynamo.on(UpdateCommand, { Key: { SK: 'LEASES' } }).callsFake(async (input) => {
      const slot = input.ExpressionAttributeNames['#slot'];
      const values = input.ExpressionAttributeValues;
      if (input.ConditionExpression === '#slot = :until') {
        slots[slot] = 0;
        return { Attributes: { ...slots } };
      }
      if (slots[slot] > values[':at']) throw refused();
      slots[slot] = values[':until'];
      return {};
    });
    let open = 0;
    let mostOpen = 0;
    post.mockImplementation(
      (_url, _body, _headers, _addresses, given?: AbortSignal) =>
        new Promise((done) => {
          mostOpen = Math.max(mostOpen, ++open);
          const end = () => {
            open -= 1;
            done(null);
          };
          setTimeout(end, 500);
          given?.addEventListener('abort', end);
        }),
    );
    const records = Array.from({ length: 6 }, (_, i) => ({
      ...record(0),
      messageId: `m-${i}`,
      receiptHandle: `r-${i}`,
    }));
    await Promise.all(records.map((r) => processDeliveryMessage(deps, r)));
    // Six went out at once (the endpoint was prompt), each cut at promptMs and handed off; one slow mark.
    expect(post).toHaveBeenCalledTimes(6);
    expect(handOff).toHaveBeenCalledTimes(6);
    expect(endpointWrites().filter((input) => input.UpdateExpression === 'REMOVE promptSince')).toHaveLength(1);
    // The six slow tries side by side: two (its leases) go out; the others find them held and do not POST.
    post.mockClear();
    mostOpen = 0;
    await Promise.all(records.map((r) => slowTry(r)));
    expect(mostOpen).toBe(2);
    expect(post).toHaveBeenCalledTimes(2);
  });

  it('the slow judgement ends with the next prompt answer: a newer promptSince, no lease again', async () => {
    process.env.DELIVERY_PROMPT_MS = '100';
    stored(0, endpointOf());
    post.mockImplementation(() => new Promise((done) => setTimeout(() => done(204), 300)));
    await processDeliveryMessage(deps, record(0));
    // Another try's prompt answer (here or in another environment) wrote a newer mark: no lease.
    dynamo.resetHistory();
    stored(0, endpointOf({ promptSince: new Date().toISOString() }));
    post.mockResolvedValue(204);
    await processDeliveryMessage(deps, record(0));
    expect(leaseCalls()).toEqual([]);
    expect(deliveryWrite()).toMatchObject({ status: 'delivered' });
  });
});

/** `20261129T151700Z` (x-amz-date) as a date. */
const isoBasicDate = (basic: string) =>
  new Date(basic.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));

describe('the hand-off: no batch waits on a receiver that could hang (issue 39, item 4)', () => {
  beforeEach(() => {
    process.env.EVENT_DELIVERY_SLOW_TRY_FUNCTION_NAME = 'Stack-EventDeliverySlowTry';
  });
  afterEach(() => {
    delete process.env.EVENT_DELIVERY_SLOW_TRY_FUNCTION_NAME;
  });

  it('a try of an endpoint not known to answer promptly: POSTed in the batch under a lease, for promptMs', async () => {
    stored(2, leasedEndpoint());
    post.mockResolvedValue(204);
    expect(await processDeliveryMessage(deps, record(2))).toBe('done');
    // Answered at once: delivered in the batch, its lease taken and given back, no hand-off.
    expect(post).toHaveBeenCalledTimes(1);
    expect(handOff).not.toHaveBeenCalled();
    expect(deliveryWrite()).toMatchObject({ status: 'delivered', lastResponseStatus: 204 });
    const leaseWrites = dynamo.commandCalls(UpdateCommand).filter((c) => c.args[0].input.Key!.SK === 'LEASES');
    expect(leaseWrites).toHaveLength(2);
  });

  it('…not answered within promptMs: its POST aborted, lease given back, try handed off (ids only)', async () => {
    process.env.DELIVERY_PROMPT_MS = '100';
    stored(2, leasedEndpoint());
    const signal = postUntilAborted();
    const started = Date.now();
    expect(
      await processDeliveryMessage(deps, {
        ...record(2),
        body: JSON.stringify({ eventId: EVENT_ID, endpointId: 'we_1', attempts: 2, requestId: 'req_1' }),
      }),
    ).toBe('done');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(signal()?.aborted).toBe(true);
    expect(handOff).toHaveBeenCalledWith({ eventId: EVENT_ID, endpointId: 'we_1', attempts: 2, requestId: 'req_1' });
    // Nothing written on the delivery, nothing sent: the slow try does the rest. The lease given back.
    expect(dynamo.commandCalls(TransactWriteCommand)).toEqual([]);
    expect(sent()).toEqual([]);
    await new Promise((settle) => setTimeout(settle, 50));
    const leaseWrites = dynamo.commandCalls(UpdateCommand).filter((c) => c.args[0].input.Key!.SK === 'LEASES');
    expect(leaseWrites).toHaveLength(2);
    delete process.env.DELIVERY_PROMPT_MS;
  });

  it('no lease free as read: failed in the batch when one is hung, else put back; never handed off', async () => {
    const young = Date.now() + LEASE_MS - 500;
    stored(0, leasedEndpoint(), { s0: young, s1: Date.now() + 10_000, s2: young, s3: young });
    expect(await processDeliveryMessage(deps, record(0))).toBe('done');
    expect(handOff).not.toHaveBeenCalled();
    expect(post).not.toHaveBeenCalled();
    expect(deliveryWrite()).toMatchObject({ status: 'pending', attempts: 1, lastResponseStatus: null });
    expect(sent()).toEqual([expect.objectContaining({ DelaySeconds: 5 })]);
    // Every lease held but young (a busy receiver that answers): put back a second later, not handed off.
    dynamo.resetHistory();
    sqs.resetHistory();
    stored(0, leasedEndpoint(), { s0: young, s1: young, s2: young, s3: young });
    await processDeliveryMessage(deps, record(0));
    expect(handOff).not.toHaveBeenCalled();
    expect(dynamo.commandCalls(TransactWriteCommand)).toEqual([]);
    expect(sent()).toEqual([expect.objectContaining({ DelaySeconds: DEFERRAL_SECONDS[0] })]);
    expect(JSON.parse(sent()[0].MessageBody!)).toMatchObject({ attempts: 0, deferrals: 1 });
  });

  it('a lease free while a try of it is in flight past promptMs (it hangs now): handed off, no POST', async () => {
    const young = Date.now() + LEASE_MS - 500;
    stored(0, leasedEndpoint(), { s0: Date.now() - 1_000, s1: Date.now() + 10_000, s2: young, s3: young });
    expect(await processDeliveryMessage(deps, record(0))).toBe('done');
    // The batch does not wait out the cut for a receiver already seen hanging: the slow try takes the lease.
    expect(post).not.toHaveBeenCalled();
    expect(handOff).toHaveBeenCalledWith({ eventId: EVENT_ID, endpointId: 'we_1', attempts: 0 });
    expect(dynamo.commandCalls(UpdateCommand)).toEqual([]);
    expect(dynamo.commandCalls(TransactWriteCommand)).toEqual([]);
    expect(sent()).toEqual([]);
  });

  it('a hand-off Lambda refused: the message comes back on the queue, nothing written', async () => {
    process.env.DELIVERY_PROMPT_MS = '100';
    stored(0, leasedEndpoint());
    postUntilAborted();
    handOff.mockRejectedValue(Object.assign(new Error('rate'), { name: 'TooManyRequestsException' }));
    expect(await processDeliveryMessage(deps, record(0))).toBe('retry');
    delete process.env.DELIVERY_PROMPT_MS;
    expect(dynamo.commandCalls(TransactWriteCommand)).toEqual([]);
    expect(sent()).toEqual([]);
  });

  it('invokes the slow try asynchronously (Event) by its name, signed, with the try’s ids only', async () => {
    // Lambda's Invoke API as a local server: it keeps each request and answers the status it is given.
    const requests: { method?: string; url?: string; headers: Record<string, unknown>; body: string }[] = [];
    let status = 202;
    const lambda = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        requests.push({ method: req.method, url: req.url, headers: req.headers, body });
        res.writeHead(status, status === 429 ? { 'x-amzn-errortype': 'TooManyRequestsException' } : {}).end('{}');
      });
    });
    await new Promise<void>((done) => lambda.listen(0, '127.0.0.1', done));
    process.env.AWS_ENDPOINT_URL_LAMBDA = `http://127.0.0.1:${(lambda.address() as AddressInfo).port}`;
    try {
      await handOffSlowTry({ eventId: EVENT_ID, endpointId: 'we_1', attempts: 1, requestId: 'req_1', notBefore: 5 });
      expect(requests).toHaveLength(1);
      const [request] = requests;
      expect(request).toMatchObject({
        method: 'POST',
        url: '/2015-03-31/functions/Stack-EventDeliverySlowTry/invocations',
        headers: { 'x-amz-invocation-type': 'Event', 'content-type': 'application/json' },
      });
      // SigV4 for Lambda in the region, by the environment's credentials (test/unit/env.ts), over what was sent:
      // the signature computed again from the request as received (its signed headers, path and body) is the same.
      const authorization = String(request.headers.authorization);
      expect(authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=test\/\d{8}\/us-east-1\/lambda\/aws4_request, /);
      const signedHeaders = /SignedHeaders=([^,]+)/.exec(authorization)![1].split(';');
      expect(signedHeaders).toEqual(expect.arrayContaining(['host', 'x-amz-date', 'x-amz-invocation-type']));
      const received = new SignatureV4({
        service: 'lambda',
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
        // The SDK's own sha256 (node:crypto), as every client has it.
        sha256: new SQSClient({}).config.sha256,
      });
      const again = await received.sign(
        {
          method: 'POST',
          protocol: 'http:',
          hostname: '127.0.0.1',
          path: request.url!,
          query: {},
          headers: Object.fromEntries(signedHeaders.map((name) => [name, String(request.headers[name])])),
          body: request.body,
        },
        { signingDate: isoBasicDate(String(request.headers['x-amz-date'])) },
      );
      expect(again.headers.authorization).toBe(authorization);
      expect(JSON.parse(request.body)).toEqual({
        eventId: EVENT_ID,
        endpointId: 'we_1',
        attempts: 1,
        requestId: 'req_1',
      });
      // Anything but 202 is no hand-off: a synchronous answer (200) or a throttle (429, named by its type).
      status = 200;
      await expect(handOffSlowTry({ eventId: EVENT_ID, endpointId: 'we_1', attempts: 1 })).rejects.toThrow(/200.*202/);
      status = 429;
      const throttled = await handOffSlowTry({ eventId: EVENT_ID, endpointId: 'we_1', attempts: 1 }).catch((e) => e);
      expect(throttled).toMatchObject({ name: 'TooManyRequestsException', message: expect.stringMatching(/429/) });
      expect(requests).toHaveLength(3);
    } finally {
      delete process.env.AWS_ENDPOINT_URL_LAMBDA;
      await new Promise((done) => lambda.close(done));
    }
  });

  it('the slow try under a lease with the POST’s full time: a receiver answering after 2 s is delivered', async () => {
    process.env.DELIVERY_PROMPT_MS = '100';
    stored(0, leasedEndpoint());
    post.mockImplementation((_url, _body, _headers, _addresses, given?: AbortSignal) => {
      expect(given).toBeUndefined();
      return new Promise((done) => setTimeout(() => done(204), 300));
    });
    await slowTry(record(0));
    expect(deliveryWrite()).toMatchObject({ status: 'delivered', lastResponseStatus: 204 });
    expect(handOff).not.toHaveBeenCalled();
    delete process.env.DELIVERY_PROMPT_MS;
  });

  it('the slow try throws on the service’s own error (Lambda retries), drops a stale or malformed one', async () => {
    stored(0, leasedEndpoint());
    post.mockResolvedValue(500);
    dynamo.on(TransactWriteCommand).rejects(new Error('table down'));
    await expect(processSlowTry(deps, { eventId: EVENT_ID, endpointId: 'we_1', attempts: 0 })).rejects.toThrow(
      /Lambda tries it again/,
    );
    // Stale: the delivery has moved past the try (a duplicate event, or the try done already).
    post.mockClear();
    await expect(processSlowTry(deps, { eventId: EVENT_ID, endpointId: 'we_1', attempts: 3 })).resolves.toBeUndefined();
    await expect(processSlowTry(deps, { eventId: EVENT_ID })).resolves.toBeUndefined();
    expect(post).not.toHaveBeenCalled();
  });
});

describe('name resolution', () => {
  it('answers within its bound, a name that resolves to nothing rejected', async () => {
    const started = Date.now();
    await expect(resolveHost('no-such-host.invalid')).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(DNS_TIMEOUT_MS + 2_000);
    expect(await resolveHost('localhost')).not.toEqual([]);
  });
});

describe('the POST', () => {
  it('answers a redirect’s own status (never followed), and null when nothing answers', async () => {
    const server = createServer((_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/' }).end());
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    try {
      expect(await postWebhook(`http://127.0.0.1:${port}/`, '{}', {})).toBe(302);
    } finally {
      await new Promise((done) => server.close(done));
    }
    expect(await postWebhook(`http://127.0.0.1:${port}/`, '{}', {})).toBeNull();
  });

  it('connects only to the addresses the URL rules checked: the name is not resolved again', async () => {
    const server = createServer((_req, res) => res.writeHead(202).end());
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    try {
      // `.invalid` never resolves: only the pinned address can answer.
      expect(await postWebhook(`http://hooks.invalid:${port}/`, '{}', {}, ['127.0.0.1'])).toBe(202);
      expect(await postWebhook(`http://hooks.invalid:${port}/`, '{}', {})).toBeNull();
    } finally {
      await new Promise((done) => server.close(done));
    }
  });

  it('gives up on a receiver that does not answer within 15 seconds', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    const server = createServer(() => undefined);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    try {
      const answer = postWebhook(`http://127.0.0.1:${port}/`, '{}', {});
      await jest.advanceTimersByTimeAsync(15_001);
      expect(await answer).toBeNull();
    } finally {
      jest.useRealTimers();
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });
});
