import { gates } from '../../lib/local/faults.js';
import { conditionOf, meaningOf, requiresOf, setsAttribute, setsUnder } from '../command-meaning.js';

/** One update as the builders write them: placeholders for names and values, nested paths, expressions. */
const update = {
  UpdateExpression:
    'SET #s = :to, #n = if_not_exists(#n, :zero) + :one, #f.#fid.#s = :entryStatus ADD #c :one REMOVE #g, #f.#fid.#w',
  ConditionExpression: '#gen = :held AND #s IN (:a, :b) AND begins_with(#k, :prefix) AND attribute_exists(PK)',
  ExpressionAttributeNames: {
    '#s': 'status',
    '#n': 'attempts',
    '#f': 'fulfillments',
    '#fid': '9001',
    '#c': 'count',
    '#g': 'GSI3PK',
    '#w': 'waitUntil',
    '#gen': 'generation',
    '#k': 'SK',
  },
  ExpressionAttributeValues: {
    ':to': 'completed',
    ':zero': 0,
    ':one': 1,
    ':entryStatus': 'delivered',
    ':held': 2,
    ':a': 'pending',
    ':b': 'failed',
    ':prefix': 'SJ#',
  },
};

describe('the meaning of a DynamoDB command, whatever its placeholders', () => {
  it('reads what an update sets, adds and removes, and what its condition requires', () => {
    expect(meaningOf(update)).toEqual({
      sets: {
        status: 'completed',
        attempts: 'if_not_exists(attempts, 0) + 1',
        'fulfillments.9001.status': 'delivered',
      },
      adds: { count: 1 },
      removes: ['GSI3PK', 'fulfillments.9001.waitUntil'],
      condition:
        'generation = 2 AND status IN ("pending", "failed") AND begins_with(SK, "SJ#") AND attribute_exists(PK)',
      requires: { generation: 2, status: ['pending', 'failed'], SK: { begins_with: 'SJ#' } },
    });
    expect(setsAttribute(update, 'fulfillments.*.status')).toBe('delivered');
    expect(setsUnder(update, 'fulfillments.9001')).toEqual({ status: 'delivered' });
  });

  it('reads a put as the item it writes, and a query by its key condition', () => {
    const put = { Item: { PK: 'SJ#1', status: 'pending' }, ConditionExpression: 'attribute_not_exists(PK)' };
    expect(meaningOf(put)).toMatchObject({ sets: put.Item, condition: 'attribute_not_exists(PK)' });
    const query = {
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': 'GSI2PK' },
      ExpressionAttributeValues: { ':pk': 'SRCORDER#sst_1#7' },
    };
    expect(requiresOf(query)).toEqual({ GSI2PK: 'SRCORDER#sst_1#7' });
    expect(conditionOf(query)).toBe('GSI2PK = "SRCORDER#sst_1#7"');
  });

  it('gates a fault on what a write writes, not on how it names it', () => {
    const fault = { function: 'SyncWorker', service: 'DynamoDB', command: 'UpdateItem', action: 'hold' } as const;
    expect(gates({ ...fault, writes: { status: 'completed' } }, update)).toBe(true);
    expect(gates({ ...fault, writes: { status: 'failed' } }, update)).toBe(false);
    expect(gates({ ...fault, writes: { 'fulfillments.*.status': 'delivered' } }, update)).toBe(true);
    expect(gates({ ...fault, writes: { 'fulfillments.*.status': 'pending' } }, update)).toBe(false);
    expect(gates({ ...fault, match: { Key: { PK: 'SJ#2' } }, writes: { status: 'completed' } }, update)).toBe(false);
  });
});
