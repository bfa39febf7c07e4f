import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { WebhookEndpoint } from '../../shared/entities/webhook-endpoint.js';
import { forgetEndpoints } from '../../shared/events/schedule-deliveries.js';
import { dynamo, sqs } from './aws-mocks.js';

/** The events suites' set-up: owner_a's endpoints, and mocks under which every write and send succeeds. */

/** An endpoint of owner_a's, enabled for every event, made and last changed at `at`. */
export const seededEndpoint = (id: string, at: string, changes: Partial<WebhookEndpoint> = {}): WebhookEndpoint => ({
  id,
  ownerId: 'owner_a',
  url: 'https://hooks.example.com/in',
  enabledEvents: ['*'],
  description: null,
  status: 'enabled',
  disabledReason: null,
  secret: 'ciphertext',
  previousSecret: null,
  createdAt: at,
  updatedAt: at,
  ...changes,
});

/** Before each test: the mocks reset, every put, transaction, update and send answered, no endpoint cached. */
export const answerEveryWrite = () => {
  dynamo.reset();
  sqs.reset();
  forgetEndpoints();
  dynamo.on(PutCommand).resolves({});
  dynamo.on(TransactWriteCommand).resolves({});
  dynamo.on(UpdateCommand).resolves({});
  sqs.on(SendMessageCommand).resolves({});
  sqs.on(SendMessageBatchCommand).resolves({ Successful: [] });
};
