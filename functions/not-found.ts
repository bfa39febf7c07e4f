import { notFoundHandler } from '../shared/http/handler.js';

/**
 * The HTTP API's `$default` route: an unknown route or method is a 404 in the contract's shape.
 * `GET /console/` comes here too: an HTTP API route cannot end with `/` and the console's
 * `/console/{file+}` does not match an empty segment, so it is sent on to `/console`, the page
 * (docs/design.md, "Operator console").
 */
export const handler = notFoundHandler({ '/console/': '/console' });
