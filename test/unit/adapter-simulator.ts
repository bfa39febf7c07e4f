import { type PlatformSimulator, startPlatformSimulator } from '../../lib/local/platform-simulator.js';
import type { SupplierOrder } from '../../shared/domain/orders.js';
import { PlatformError } from '../../shared/platforms/http.js';
import type { Platform, ShopConnection } from '../../shared/platforms/port.js';

/** The adapters' connection to a shop of the simulator on `platform`. */
export const simShop = (
  platform: Platform,
  shopDomain: string,
  secrets: Omit<ShopConnection, 'platform' | 'shopDomain'>,
) => ({ platform, shopDomain, ...secrets }) as ShopConnection;

/** The supplier order the adapter suites place for `job`: two Acme lines to Berlin; `extra` adds fields. */
export const orderToPlace = (job: string, extra: Partial<SupplierOrder> = {}): SupplierOrder => ({
  source_identifier: `reseller.example.com:1001:${job}`,
  currency: 'EUR',
  email: 'buyer@example.com',
  ...extra,
  line_items: [
    { title: 'Mug', sku: 'MUG-1', variant_id: 11, quantity: 3, price: '9.50', vendor: 'Acme' },
    { title: 'Cap', sku: 'CAP-1', variant_id: 12, quantity: 1, price: '5.00', vendor: 'Acme' },
  ],
  shipping_lines: [{ title: 'Standard', price: '4.90' }],
  shipping_address: { first_name: 'Ada', last_name: 'Lovelace', city: 'Berlin', zip: '10115', country_code: 'DE' },
  tags: 'reseller-order',
});

/**
 * The platform simulator for a suite that drives the real adapters against it: started once, reset
 * before each test, and `PLATFORM_API_URL` pointed at it for the suite (as it was after). Answers
 * the simulator, once it has started.
 */
export const adaptersAgainstSimulator = () => {
  let sim: PlatformSimulator | undefined;
  const savedUrl = process.env.PLATFORM_API_URL;
  beforeAll(async () => {
    sim = await startPlatformSimulator({ port: 0, slowMs: 50 });
  });
  beforeEach(() => {
    sim!.reset();
    process.env.PLATFORM_API_URL = `${sim!.url}/{shopDomain}`;
  });
  afterAll(async () => {
    await sim?.stop();
    if (savedUrl === undefined) delete process.env.PLATFORM_API_URL;
    else process.env.PLATFORM_API_URL = savedUrl;
  });
  return () => sim!;
};

/** The orders the simulator keeps for `shopDomain` (`GET /_sim/orders`), in storeplatform_a's shape. */
export const simOrdersOn = async <Order>(sim: PlatformSimulator, shopDomain: string): Promise<Order[]> => {
  const res = await fetch(`${sim.url}/_sim/orders?shopDomain=${shopDomain}`);
  return JSON.parse(await res.text()).orders;
};

/** One of them, by its id; a test fails when the simulator has no such order. */
export const simOrderOn = async <Order extends { id: unknown }>(
  sim: PlatformSimulator,
  shopDomain: string,
  orderId: string,
): Promise<Order> => {
  const found = (await simOrdersOn<Order>(sim, shopDomain)).find((order) => String(order.id) === orderId);
  if (!found) throw new Error(`the simulator has no order ${orderId}`);
  return found;
};

/** What `promise` rejects with, which must be a PlatformError. */
export async function platformFailure(promise: Promise<unknown>): Promise<PlatformError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof PlatformError)) throw new Error(`expected a PlatformError, got ${String(error)}`);
  return error;
}
