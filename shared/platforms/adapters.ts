/** One adapter per platform kind. Only handlers import this, to build their `deps`; callers see `AdapterFor`. */
import { customAdapter } from './custom.js';
import { withFreshTokens } from './fresh-tokens.js';
import type { AdapterFor, Platform, PlatformAdapter } from './port.js';
import { storePlatformAAdapter } from './storeplatform-a.js';
import { storePlatformBAdapter } from './storeplatform-b.js';

/** Each keeps an expiring token fresh (fresh-tokens.ts) for the shops whose connection has a keeper. */
const adapters: Record<Platform, PlatformAdapter> = {
  storeplatform_a: withFreshTokens(storePlatformAAdapter),
  storeplatform_b: withFreshTokens(storePlatformBAdapter),
  custom: customAdapter,
};

export const adapterFor: AdapterFor = (platform) => {
  const adapter = adapters[platform];
  if (!adapter) throw new Error(`no adapter for platform ${JSON.stringify(platform)}`);
  return adapter;
};
