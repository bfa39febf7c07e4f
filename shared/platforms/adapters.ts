/**
 * One adapter per platform kind. Only handlers import this, to build their `deps`; callers see `AdapterFor`.
 * Each is loaded with its platform's first call (a chunk of its own locally; in Lambda's one-file bundle,
 * evaluated then): a function that serves one platform never loads the others' modules.
 */
import { withFreshTokens } from './fresh-tokens.js';
import { type AdapterFor, callsOnDemand, type Platform, type PlatformAdapter } from './port.js';

type Call = Exclude<keyof PlatformAdapter, 'takesIdempotencyKeys'>;

/** Every call of the port (a call added there without its line here does not compile). */
const CALLS: Record<Call, 'always' | 'optional'> = {
  createOrder: 'always',
  findOrder: 'always',
  createFulfillment: 'always',
  updateFulfillmentTracking: 'always',
  cancelFulfillment: 'always',
  cancelOrder: 'always',
  updateOrder: 'always',
  ordersChangedSince: 'always',
  readOrder: 'always',
  listWebhooks: 'always',
  createWebhook: 'always',
  refreshAccessToken: 'always',
  addOrderTags: 'always',
  editOrderQuantities: 'always',
  createReturn: 'always',
  findReturn: 'always',
  cancelReturn: 'always',
  readOrderAfterSale: 'always',
  shopTimeZone: 'optional',
  setFulfillmentDeadline: 'optional',
};

/** What is known of a platform's adapter before it is loaded (test/unit/platform-adapters.test.ts holds it true). */
export const KNOWN: Record<Platform, { takesIdempotencyKeys: boolean; optional: Call[] }> = {
  storeplatform_a: { takesIdempotencyKeys: true, optional: [] },
  storeplatform_b: { takesIdempotencyKeys: false, optional: ['shopTimeZone', 'setFulfillmentDeadline'] },
  custom: { takesIdempotencyKeys: true, optional: [] },
};

/** The adapter whose calls load it on the first one (port.ts, `callsOnDemand`). */
const onDemand = (platform: Platform, load: () => Promise<PlatformAdapter>): PlatformAdapter => {
  const { takesIdempotencyKeys, optional } = KNOWN[platform];
  const calls = (Object.keys(CALLS) as Call[]).filter((call) => CALLS[call] === 'always' || optional.includes(call));
  return { ...callsOnDemand(calls, load), takesIdempotencyKeys };
};

/** Each keeps an expiring token fresh (fresh-tokens.ts) for the shops whose connection has a keeper. */
const adapters: Record<Platform, PlatformAdapter> = {
  storeplatform_a: withFreshTokens(
    onDemand('storeplatform_a', async () => (await import('./storeplatform-a.js')).storePlatformAAdapter),
  ),
  storeplatform_b: withFreshTokens(
    onDemand('storeplatform_b', async () => (await import('./storeplatform-b.js')).storePlatformBAdapter),
  ),
  custom: onDemand('custom', async () => (await import('./custom.js')).customAdapter),
};

export const adapterFor: AdapterFor = (platform) => {
  const adapter = adapters[platform];
  if (!adapter) throw new Error(`no adapter for platform ${JSON.stringify(platform)}`);
  return adapter;
};
