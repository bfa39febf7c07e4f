import { rmSync } from 'node:fs';

/**
 * Removes the run's bundles and stops its shared DynamoDB Local (global-setup.ts; the variable is the
 * runtime's PREBUILT_BUNDLES_ENV).
 */
export default async () => {
  const dir = process.env.LOCAL_RUNTIME_BUNDLES;
  if (dir) rmSync(dir, { recursive: true, force: true });
  await (globalThis as { sharedDynamoDb?: { stop(): Promise<void> } }).sharedDynamoDb?.stop();
};
