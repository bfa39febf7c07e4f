import { fileHandler, type StaticFile } from '../shared/http/handler.js';

/**
 * `GET /console` and `GET /console/{file+}`: the operator console's files (console/, built by
 * lib/console-build.ts and written into this bundle at build time). No key and no data: the page
 * asks for an API key and calls the public API with it, as any integrator does.
 */
declare const __CONSOLE_FILES__: Record<string, StaticFile> | undefined;

/**
 * Its own origin only: no inline script or style, no third-party origin, never in a frame; over HTTPS
 * only, for two years, once a browser has seen it (API Gateway serves HTTPS only; browsers ignore the
 * header over the local front's plain HTTP); and no browser feature the page does not use.
 */
export const CONSOLE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Strict-Transport-Security': 'max-age=63072000; includeSubDomains',
  'Permissions-Policy':
    'accelerometer=(), autoplay=(), camera=(), clipboard-read=(), display-capture=(), fullscreen=(), ' +
    'geolocation=(), gyroscope=(), magnetometer=(), microphone=(), midi=(), payment=(), ' +
    'publickey-credentials-get=(), screen-wake-lock=(), serial=(), usb=(), xr-spatial-tracking=()',
};

export const handler = fileHandler(typeof __CONSOLE_FILES__ === 'undefined' ? {} : __CONSOLE_FILES__, CONSOLE_HEADERS);
