/** One adapter per platform kind. Only handlers import this, to build their `deps`; callers see `AdapterFor`. */
import { customAdapter } from './custom.js';
import type { AdapterFor, Platform, PlatformAdapter } from './port.js';
import { storePlatformAAdapter } from './storeplatform-a.js';
import { storePlatformBAdapter } from './storeplatform-b.js';

const adapters: Record<Platform, PlatformAdapter> = {
  storeplatform_a: storePlatformAAdapter,
  storeplatform_b: storePlatformBAdapter,
  custom: customAdapter,
};

export const adapterFor: AdapterFor = (platform) => {
  const adapter = adapters[platform];
  if (!adapter) throw new Error(`no adapter for platform ${JSON.stringify(platform)}`);
  return adapter;
};
