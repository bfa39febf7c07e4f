import { kms, kmsCipher } from '../../shared/aws/kms-cipher.js';
import type { PlatformAdapter } from '../../shared/platforms/port.js';

/**
 * The `deps` a unit test hands a use case: the real cipher over the KMS client (which the suite
 * mocks with aws-sdk-client-mock), and for every platform one fake adapter whose calls are the
 * suite's own mocks where `adapter` gives them, a fresh `jest.fn()` otherwise.
 */
export const fakeDeps = (adapter: { [Call in keyof PlatformAdapter]?: unknown } = {}) => ({
  cipher: kmsCipher(kms, () => 'key'),
  platforms: (): PlatformAdapter =>
    ({
      takesIdempotencyKeys: true,
      createOrder: jest.fn(),
      findOrder: jest.fn(),
      createFulfillment: jest.fn(),
      updateFulfillmentTracking: jest.fn(),
      cancelFulfillment: jest.fn(),
      cancelOrder: jest.fn(),
      updateOrder: jest.fn(),
      ordersChangedSince: jest.fn(),
      readOrder: jest.fn(),
      listWebhooks: jest.fn(),
      createWebhook: jest.fn(),
      refreshAccessToken: jest.fn(),
      addOrderTags: jest.fn(),
      editOrderQuantities: jest.fn(),
      createReturn: jest.fn(),
      findReturn: jest.fn(),
      cancelReturn: jest.fn(),
      readOrderAfterSale: jest.fn(),
      ...adapter,
    }) as PlatformAdapter,
});
