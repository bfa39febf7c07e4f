import { KMSClient } from '@aws-sdk/client-kms';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';

/**
 * The SDK clients a unit suite mocks with aws-sdk-client-mock, made once per test file (jest loads this
 * module once per file): every client of that class answers what the suite tells its mock.
 */
export const dynamo = mockClient(DynamoDBDocumentClient);
export const sqs = mockClient(SQSClient);
export const kms = mockClient(KMSClient);
