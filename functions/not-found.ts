import { notFoundHandler } from '../shared/http/handler.js';

/** The HTTP API's `$default` route: an unknown route or method is a 404 in the contract's shape. */
export const handler = notFoundHandler();
