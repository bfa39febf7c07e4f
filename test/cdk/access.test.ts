import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { grantsFor, iamActionsFor, queueUrlVariable } from '../../lib/access.js';
import { IDEMPOTENCY_ACTIONS, routes } from '../../lib/routes.js';
import { PROJECT_ROOT } from './synth.js';

describe('iamActionsFor', () => {
  it('maps each table action to its dynamodb action', () => {
    expect(iamActionsFor({ table: ['GetItem', 'Query', 'BatchGetItem'] })).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:GetItem',
      'dynamodb:Query',
    ]);
  });

  it('maps TransactWriteItems to the item actions a transaction performs, as IAM has no action of that name', () => {
    expect(iamActionsFor({ table: ['TransactWriteItems'] })).toEqual([
      'dynamodb:ConditionCheckItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
  });

  it('adds key and queue actions, without duplicates', () => {
    expect(
      iamActionsFor({
        table: ['PutItem', 'TransactWriteItems'],
        key: { actions: ['Decrypt'], fields: ['webhookSecret'] },
        queues: { sync: ['SendMessage'], fulfillment: ['SendMessage'] },
      }),
    ).toEqual([
      'dynamodb:ConditionCheckItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'kms:Decrypt',
      'sqs:SendMessage',
    ]);
  });

  it('grants nothing for an empty declaration', () => {
    expect(iamActionsFor({})).toEqual([]);
  });
});

describe('grantsFor', () => {
  it('grants Query on the declared indexes by name, apart from the table', () => {
    expect(grantsFor({ table: ['GetItem'], indexes: ['lookups', 'lists'] })).toEqual([
      { target: { kind: 'table' }, actions: ['dynamodb:GetItem'] },
      { target: { kind: 'tableIndexes', indexes: ['GSI1', 'GSI2'] }, actions: ['dynamodb:Query'] },
    ]);
  });

  it('grants no index to a function that declares none, even one that queries the table', () => {
    expect(grantsFor({ table: ['Query'] }).map((g) => g.target.kind)).toEqual(['table']);
  });

  it('conditions key actions on the encryption context the cipher sends, for the declared secrets only', () => {
    expect(grantsFor({ key: { actions: ['Decrypt'], fields: ['webhookSecret'] } })).toEqual([
      {
        target: { kind: 'key' },
        actions: ['kms:Decrypt'],
        conditions: {
          StringEquals: { 'kms:EncryptionContext:field': ['webhookSecret'] },
          Null: { 'kms:EncryptionContext:storeId': 'false' },
          'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['field', 'storeId'] },
        },
      },
    ]);
  });
});

describe('queueUrlVariable', () => {
  it('names the variables shared/core/config.ts reads', () => {
    expect(queueUrlVariable('sync')).toBe('SYNC_QUEUE_URL');
    expect(queueUrlVariable('fulfillment')).toBe('FULFILLMENT_QUEUE_URL');
    expect(queueUrlVariable('syncDlq')).toBe('SYNC_DLQ_QUEUE_URL');
  });
});

describe('Idempotency-Key routes', () => {
  const mutating = routes.filter((r) => r.auth === 'apiKey' && (r.method === 'POST' || r.method === 'PATCH'));

  it('are every POST and PATCH of the API, and only those', () => {
    expect(mutating.length).toBeGreaterThanOrEqual(4);
    for (const route of routes) {
      const source = readFileSync(join(PROJECT_ROOT, route.entry), 'utf8');
      expect({ route: route.name, idempotent: source.includes('idempotentApiHandler(') }).toEqual({
        route: route.name,
        idempotent: mutating.includes(route),
      });
    }
  });

  it.each(mutating.map((r) => [r.name, r] as const))('%s may claim, read, keep and release its key', (_, route) => {
    expect(route.access.table).toEqual(expect.arrayContaining(IDEMPOTENCY_ACTIONS));
  });
});
