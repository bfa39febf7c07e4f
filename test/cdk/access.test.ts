import { iamActionsFor, queueUrlVariable } from '../../lib/access.js';

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
        key: ['Decrypt'],
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

describe('queueUrlVariable', () => {
  it('names the variables shared/core/config.ts reads', () => {
    expect(queueUrlVariable('sync')).toBe('SYNC_QUEUE_URL');
    expect(queueUrlVariable('fulfillment')).toBe('FULFILLMENT_QUEUE_URL');
    expect(queueUrlVariable('syncDlq')).toBe('SYNC_DLQ_QUEUE_URL');
  });
});
