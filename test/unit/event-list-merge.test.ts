import { BatchGetCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { LIST_SHARDS } from '../../shared/dynamo/keys.js';
import type { Item } from '../../shared/dynamo/table.js';
import { type EventType, eventId, eventItem, eventKey } from '../../shared/entities/event.js';
import { type EventFilters, listEvents } from '../../shared/events/events.js';
import { dynamo } from './aws-mocks.js';

/**
 * The events list's merge of its partitions (shared/events/events.ts, `mergedPage`) over a mocked
 * table that answers Queries as DynamoDB does (newest first, below the bound, from the lower one, at
 * most `Limit`): every page in order with none skipped or repeated, each Query asking for a share of
 * the page rather than a page, whatever the spread of the events over the shards.
 */

const partitions = new Map<string, Item[]>();
const byKey = new Map<string, Item>();

const put = (item: Item) => {
  const pk = String(item.PK);
  partitions.set(pk, [...(partitions.get(pk) ?? []), item]);
  byKey.set(`${item.PK}|${item.SK}`, item);
};

/** A Query of the table (by PK, sorted by SK) as queryIndex sends it: no index partition holds events here. */
const answer = (input: Record<string, unknown>) => {
  const values = input.ExpressionAttributeValues as Record<string, string>;
  const expression = String(input.KeyConditionExpression);
  const items = input.IndexName ? [] : [...(partitions.get(values[':pk']) ?? [])];
  const kept = items
    .filter((item) => {
      const sk = String(item.SK);
      if (expression.includes('BETWEEN')) return sk >= values[':prefix'] && sk <= values[':bound'];
      if (expression.includes('>=')) return sk >= values[':prefix'];
      if (expression.includes('<')) return sk < values[':bound'];
      return true;
    })
    .sort((a, b) => (String(a.SK) < String(b.SK) ? 1 : -1))
    .slice(0, Number(input.Limit));
  return { Items: kept };
};

const asked: number[] = [];

beforeEach(() => {
  dynamo.reset();
  partitions.clear();
  byKey.clear();
  asked.length = 0;
  dynamo.on(QueryCommand).callsFake((input) => {
    if (!input.IndexName) asked.push(Number(input.Limit));
    return answer(input);
  });
  dynamo.on(GetCommand).callsFake(({ Key }) => ({ Item: byKey.get(`${Key.PK}|${Key.SK}`) }));
  dynamo.on(BatchGetCommand).resolves({ Responses: {} });
});

/** `n` events of the owner, a second apart (pairs sharing a time), of the types given in turn. */
const seed = (n: number, types: EventType[], start = Date.parse('2026-11-01T00:00:00.000Z')) => {
  const events = Array.from({ length: n }, (_, i) => {
    const createdAt = new Date(start + Math.floor(i / 2) * 1000).toISOString();
    const type = types[i % types.length];
    const id = eventId(type, createdAt, String(i));
    return { id, ownerId: 'owner_a', type, createdAt, object: {}, endpointIds: [], failingEndpointIds: [] };
  });
  for (const event of events) put(eventItem(event));
  return events.sort((a, b) => (`${a.createdAt}#${a.id}` < `${b.createdAt}#${b.id}` ? 1 : -1));
};

const pages = async (limit: number, filters: EventFilters = {}) => {
  const all: string[] = [];
  let after: string | undefined;
  for (let n = 0; n < 1000; n++) {
    const page = await listEvents({ ownerId: 'owner_a' }, limit, after, filters);
    expect(page.data.length).toBeLessThanOrEqual(limit);
    all.push(...page.data.map((event) => event.id));
    if (!page.hasMore) return all;
    after = page.data.at(-1)?.id;
  }
  throw new Error('no end');
};

describe('the events list’s merge', () => {
  it.each([1, 3, 20])('pages one type’s 16 shards in order, none skipped or repeated (limit %p)', async (limit) => {
    const events = seed(300, ['sync_job.completed']);
    expect(await pages(limit, { type: { exact: 'sync_job.completed' } })).toEqual(events.map((e) => e.id));
  });

  it('pages every type merged, and a group, in order', async () => {
    const events = seed(200, ['sync_job.completed', 'sync_job.dead', 'order.unrouted', 'fulfillment.delivered']);
    expect(await pages(7)).toEqual(events.map((e) => e.id));
    const group = events.filter((e) => e.type.startsWith('sync_job.')).map((e) => e.id);
    expect(await pages(7, { type: { group: 'sync_job' } })).toEqual(group);
  });

  it('reads on in a shard that holds more of the page than its share', async () => {
    // Every event of the page in one shard: the other shards' first Queries answer nothing.
    const events = seed(400, ['sync_job.completed']);
    const shard = eventKey(events[0]).PK;
    for (const [pk] of partitions) if (pk !== shard) partitions.delete(pk);
    const kept = events.filter((e) => eventKey(e).PK === shard).map((e) => e.id);
    expect(kept.length).toBeGreaterThan(10);
    expect(await pages(10, { type: { exact: 'sync_job.completed' } })).toEqual(kept);
  });

  it('asks each shard for its share of the page, not the page, when the events are spread', async () => {
    seed(2000, ['sync_job.completed']);
    await listEvents({ ownerId: 'owner_a' }, 20, undefined, { type: { exact: 'sync_job.completed' } });
    const first = asked.slice(0, LIST_SHARDS);
    expect(first.every((limit) => limit === Math.ceil((3 * 21) / (LIST_SHARDS + 1)) + 1)).toBe(true);
    // The items read, all Queries counted: well under the 16 pages a Query of a page per shard reads.
    expect(asked.reduce((sum, n) => sum + n, 0)).toBeLessThan(4 * 21);
  });

  it('bounds the page by created_gte and created_lt', async () => {
    const events = seed(120, ['sync_job.completed', 'sync_job.failed']);
    const createdGte = events[80].createdAt;
    const createdLt = events[20].createdAt;
    const inRange = events.filter((e) => e.createdAt >= createdGte && e.createdAt < createdLt).map((e) => e.id);
    expect(await pages(4, { createdGte, createdLt })).toEqual(inRange);
  });
});
