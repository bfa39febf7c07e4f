/** One adapter per platform kind; callers depend on PlatformAdapter only. */
import { customAdapter } from './custom.js';
import { storePlatformAAdapter } from './storeplatform-a.js';
import { storePlatformBAdapter } from './storeplatform-b.js';
import type { Platform, PlatformAdapter } from './types.js';

export * from './types.js';
export { MAX_DELAY_SECONDS, PlatformError, isRetryableStatus, retryDelaySeconds } from './errors.js';

const adapters: Record<Platform, PlatformAdapter> = {
  storeplatform_a: storePlatformAAdapter,
  storeplatform_b: storePlatformBAdapter,
  custom: customAdapter,
};

export function adapterFor(platform: Platform): PlatformAdapter {
  const adapter = adapters[platform];
  if (!adapter) throw new Error(`no adapter for platform ${JSON.stringify(platform)}`);
  return adapter;
}
