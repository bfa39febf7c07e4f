import { idPattern, isId, newId, placedId, placeOfId } from '../../shared/core/ids.js';
import { LIST_SHARDS } from '../../shared/dynamo/keys.js';
import {
  EVENT_TYPES,
  type Event,
  eventFrom,
  eventId,
  eventItem,
  eventKey,
  eventKeyOfId,
  eventPlaceOf,
  eventPut,
} from '../../shared/entities/event.js';
import { itemSize } from '../../shared/order-flow/order-repository.js';

/**
 * An event's key is its place in its list (shared/events/README.md, "Events and webhook endpoints"): its id
 * spells its type and time, so the id and the caller's owner give the key without a read, and the
 * item carries no index entry (one write unit).
 */

const at = '2026-11-27T17:00:00.123Z';
const eventOf = (changes: Partial<Event> = {}): Event => ({
  id: eventId('sync_job.completed', at, 'sj_1'),
  ownerId: 'owner_a',
  type: 'sync_job.completed',
  createdAt: at,
  object: { id: 'sj_1', object: 'sync_job', status: 'completed' },
  endpointIds: [],
  failingEndpointIds: [],
  ...changes,
});

describe('event ids', () => {
  it('spell their type and time, in the shape of every id', () => {
    const times = ['1970-01-01T00:00:00.000Z', at, '2999-12-31T23:59:59.999Z'];
    for (const type of EVENT_TYPES)
      for (const createdAt of times) {
        const id = eventId(type, createdAt);
        expect(isId('evt', id)).toBe(true);
        expect(id).toMatch(idPattern('evt'));
        expect(eventPlaceOf(id)).toEqual({ type, createdAt });
      }
  });

  it('follow from their parts when given (the same change, the same id), random otherwise', () => {
    expect(eventId('sync_job.completed', at, 'sj_1', at)).toBe(eventId('sync_job.completed', at, 'sj_1', at));
    expect(eventId('sync_job.completed', at, 'sj_1')).not.toBe(eventId('sync_job.completed', at, 'sj_2'));
    expect(eventId('sync_job.completed', at, 'sj_1')).not.toBe(eventId('sync_job.dead', at, 'sj_1'));
    expect(eventId('sync_job.completed', at)).not.toBe(eventId('sync_job.completed', at));
  });

  it('sort by time: ids of later events sort after', () => {
    const ids = [0, 1, 999, 60_000, 86_400_000].map((ms) =>
      placedId('evt', Date.parse(at) + ms, 0, Buffer.alloc(16, 255)),
    );
    expect([...ids].sort()).toEqual(ids);
  });

  it('are told from ids of the first layout by a check character (1 in 32 passes, 12 in 32 a type)', () => {
    const passing = Array.from({ length: 4000 }, () => newId('evt')).filter((id) => eventPlaceOf(id));
    // 47 expected; a miss falls back to the first layout's key (`getEvent`), so this bounds a cost only.
    expect(passing.length).toBeLessThan(120);
    const id = eventId('order.unrouted', at);
    const altered = `${id.slice(0, 6)}${id[6] === '0' ? '1' : '0'}${id.slice(7)}`;
    expect(placeOfId('evt', altered)).toBeUndefined();
    expect(eventPlaceOf('evt_1')).toBeUndefined();
    expect(eventPlaceOf(`sj_${id.slice(4)}`)).toBeUndefined();
  });

  it('refuse a time or kind they cannot spell', () => {
    expect(() => placedId('evt', -1, 0, Buffer.alloc(16))).toThrow(/out of range/);
    expect(() => placedId('evt', 2 ** 45, 0, Buffer.alloc(16))).toThrow(/out of range/);
    expect(() => placedId('evt', 0, 32, Buffer.alloc(16))).toThrow(/out of range/);
    expect(() => eventId('sync_job.completed', 'not a date')).toThrow(/out of range/);
  });
});

describe('event keys', () => {
  it('is the place in the shard of its type’s list of its owner, found from the id and the owner alone', () => {
    const event = eventOf();
    expect(eventKeyOfId('owner_a', event.id)).toEqual(eventKey(event));
    expect(eventKey(event).SK).toBe(`${at}#${event.id}`);
    expect(eventKey(event).PK).toMatch(/^EVT#owner_a#sync_job\.completed(#\d+)?$/);
    expect(eventKeyOfId('owner_b', event.id)?.PK).toMatch(/^EVT#owner_b#/);
    expect(eventKeyOfId('owner_a', newId('sj'))).toBeUndefined();
  });

  it('spreads one owner’s events of a type over the 16 shards', () => {
    const shards = new Map<string, number>();
    for (let i = 0; i < 3200; i++) {
      const { PK } = eventKey(eventOf({ id: eventId('sync_job.completed', at, String(i)) }));
      shards.set(PK, (shards.get(PK) ?? 0) + 1);
    }
    expect(shards.size).toBe(LIST_SHARDS);
    expect(Math.max(...shards.values())).toBeLessThan(2 * (3200 / LIST_SHARDS));
  });

  it('keeps an event read from the first layout at its key there', () => {
    const id = newId('evt');
    const legacy = eventFrom({ ...eventItem(eventOf()), PK: `EVT#${id}`, SK: 'EVT', id });
    expect(legacy.legacy).toBe(true);
    expect(eventKey(legacy)).toEqual({ PK: `EVT#${id}`, SK: 'EVT' });
    expect(() => eventPut(legacy)).toThrow(/does not spell/);
  });

  it('writes an item with no index entry, under the 1 KB of one write unit', () => {
    const item = eventItem(
      eventOf({
        object: {
          id: 'sj_7b3kq1m9x2c4v6n8p0r5t7w9y1',
          object: 'sync_job',
          status: 'completed',
          lines: Array.from({ length: 20 }, (_, n) => ({ sku: `SKU-${n}`, quantity: n + 1, title: `Item ${n}` })),
        },
      }),
    );
    expect(Object.keys(item).filter((name) => name.startsWith('GSI'))).toEqual([]);
    expect(itemSize(item)).toBeLessThan(1024);
    const failing = eventItem(eventOf({ failingEndpointIds: ['we_1'] }));
    expect(failing).toMatchObject({ GSI6PK: 'OWNER#owner_a#EVT#FAILING', GSI1SK: `${at}#${failing.id}` });
  });

  it('refuses to write an event whose id does not spell its type and time', () => {
    expect(() => eventPut(eventOf({ id: newId('evt') }))).toThrow(/does not spell/);
    expect(() => eventPut(eventOf({ type: 'sync_job.dead' }))).toThrow(/does not spell/);
    expect(() => eventPut(eventOf({ createdAt: '2026-11-27T17:00:00.124Z' }))).toThrow(/does not spell/);
    expect(eventPut(eventOf()).Put.Item).toMatchObject(eventKey(eventOf()));
  });
});
