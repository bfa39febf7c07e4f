import { KMSClient } from '@aws-sdk/client-kms';

export const kms = new KMSClient({});
