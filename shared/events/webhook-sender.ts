import { lookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Resolve } from '../domain/endpoint-url.js';

/** How long a receiver has to answer a delivery (CONTRACT.md §14). */
export const DELIVERY_TIMEOUT_MS = 15_000;

/**
 * One POST of a delivery: the receiver's status, or null when none came (refused, reset, timed out).
 * `addresses`: the ones the URL rules checked, the only ones it may connect to.
 */
export type PostWebhook = (
  url: string,
  body: string,
  headers: Record<string, string>,
  addresses?: string[],
) => Promise<number | null>;

/** Every address a name resolves to, as the system resolver gives them. */
export const resolveHost: Resolve = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * A lookup that answers the checked addresses and nothing else: the name is not resolved a second
 * time at connect, so it cannot turn into 127.0.0.1 between the check and the request (DNS rebinding).
 */
const pinned =
  (addresses: string[]): LookupFunction =>
  (_hostname, options, callback) => {
    const entries = addresses.map((address) => ({ address, family: isIP(address) }));
    if (options.all) return callback(null, entries);
    callback(null, entries[0].address, entries[0].family);
  };

/**
 * The POST itself, with node's own client: redirects are not followed (a 3xx is the receiver's answer,
 * and a failure), the answer's body is never read (a receiver streaming an endless one holds nothing),
 * and the whole exchange has 15 seconds.
 */
export const postWebhook: PostWebhook = (url, body, headers, addresses) =>
  new Promise((settle) => {
    const request = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'reseller-routing-webhooks/1',
        ...headers,
      },
      ...(addresses?.length ? { lookup: pinned(addresses) } : {}),
    });
    const timer = setTimeout(() => req.destroy(new Error('timed out')), DELIVERY_TIMEOUT_MS);
    const done = (status: number | null) => {
      clearTimeout(timer);
      settle(status);
    };
    req.on('response', (res) => {
      done(res.statusCode ?? null);
      res.destroy();
    });
    req.on('error', () => done(null));
    req.end(body);
  });
