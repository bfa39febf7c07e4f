import { fileHandler, type StaticFile } from '../shared/http/handler.js';

/**
 * `GET /console` and `GET /console/{file+}`: the operator console's files (console/, built by
 * lib/console-build.ts and written into this bundle at build time). No key and no data: the page
 * asks for an API key and calls the public API with it, as any integrator does.
 */
declare const __CONSOLE_FILES__: Record<string, StaticFile> | undefined;

/** Its own origin only: no inline script or style, no third-party origin, never in a frame. */
export const CONSOLE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

export const handler = fileHandler(typeof __CONSOLE_FILES__ === 'undefined' ? {} : __CONSOLE_FILES__, CONSOLE_HEADERS);
