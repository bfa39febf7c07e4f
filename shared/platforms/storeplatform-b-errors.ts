import { PlatformError } from './platform-errors.js';

/** storeplatform_b's (Shopify's) answers the adapter builds itself: a refusal (userErrors as a 422), a 404. */

const PLATFORM = 'storeplatform_b';

const answered = (status: 404 | 422, message: string) =>
  new PlatformError({
    platform: PLATFORM,
    status,
    retryable: false,
    message: `${PLATFORM} answered ${status}: ${message}`,
  });

/** A refusal of the shop's (userErrors), as a 422. */
export const refusal = (message: string) => answered(422, message);

/** What Shopify has not (an order, a fulfillment, a return), as a 404. */
export const notFound = (what: string) => answered(404, what);

/** A refusal of the shop's (userErrors, as a 422): what a lookup may show to be already done. */
export const isRefusal = (error: unknown) => error instanceof PlatformError && error.status === 422;
