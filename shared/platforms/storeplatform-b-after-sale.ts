/**
 * storeplatform_b (Shopify) after the sale (CONTRACT §15, PLATFORM-API.md "Refunds and returns").
 * INTERIM: the calls are being written (branch h42a); until then each refuses with a permanent error.
 */
import { PlatformError } from './platform-errors.js';
import type { AfterSaleCalls } from './port.js';

const notYet = async (): Promise<never> => {
  throw new PlatformError({
    platform: 'storeplatform_b',
    status: 501,
    retryable: false,
    message: 'storeplatform_b: refunds and returns are not implemented yet',
  });
};

export const storePlatformBAfterSale: AfterSaleCalls = {
  editOrderQuantities: notYet,
  createReturn: notYet,
  findReturn: notYet,
  cancelReturn: notYet,
  readOrderAfterSale: notYet,
};
