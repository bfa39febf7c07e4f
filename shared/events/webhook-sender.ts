import { lookup, Resolver } from 'node:dns/promises';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Resolve } from '../domain/endpoint-url.js';

/** How long a receiver has to answer a delivery (CONTRACT.md §14). */
export const DELIVERY_TIMEOUT_MS = 15_000;

/** How long a name's resolution may take, all tries included (issue 39: it had no bound). */
export const DNS_TIMEOUT_MS = 3_000;

/**
 * One POST of a delivery: the receiver's status, or null when none came (refused, reset, timed out,
 * or `signal` aborted it). `addresses`: the ones the URL rules checked, the only ones it may connect to.
 */
export type PostWebhook = (
  url: string,
  body: string,
  headers: Record<string, string>,
  addresses?: string[],
  signal?: AbortSignal,
) => Promise<number | null>;

/**
 * c-ares, not the system's getaddrinfo: its queries time out (1 s a try, 2 tries) and never take one of
 * libuv's 4 threads, which the SDK's own lookups need; a name that hangs holds nothing but its own try.
 */
const resolver = new Resolver({ timeout: 1_000, tries: 2 });

const withinMs = <T>(work: Promise<T>, ms: number, what: string) => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
};

/**
 * Every address a name resolves to (A and AAAA), within `DNS_TIMEOUT_MS`; rejected when it names none
 * or takes longer. `localhost` (allowed locally only) is the system's, from its hosts file.
 */
export const resolveHost: Resolve = async (hostname) => {
  if (hostname === 'localhost')
    return (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);
  const answers = await withinMs(
    Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]),
    DNS_TIMEOUT_MS,
    'name resolution',
  );
  const addresses = answers.flatMap((answer) => (answer.status === 'fulfilled' ? answer.value : []));
  if (addresses.length === 0) throw new Error(`${hostname} resolves to no address`);
  return addresses;
};

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
 * The deliveries' own socket pools, never the SDK's (its 50 sockets are the table's and the queue's):
 * per receiver's origin at most `SOCKETS_PER_ORIGIN` (an environment runs one batch, 10 records, at
 * once), no bound across origins, so one receiver that hangs holds its own sockets and no other's.
 * No keep-alive: each POST connects to the addresses just checked, never to a socket of an earlier check.
 */
export const SOCKETS_PER_ORIGIN = 10;
const agents = {
  http: new HttpAgent({ keepAlive: false, maxSockets: SOCKETS_PER_ORIGIN }),
  https: new HttpsAgent({ keepAlive: false, maxSockets: SOCKETS_PER_ORIGIN }),
};

/**
 * The POST itself, with node's own client: redirects are not followed (a 3xx is the receiver's answer,
 * and a failure), the answer's body is never read (a receiver streaming an endless one holds nothing),
 * and the whole exchange has 15 seconds.
 */
export const postWebhook: PostWebhook = (url, body, headers, addresses, signal) =>
  new Promise((settle) => {
    if (signal?.aborted) return settle(null);
    const secure = url.startsWith('https:');
    const request = secure ? httpsRequest : httpRequest;
    const req = request(url, {
      method: 'POST',
      agent: secure ? agents.https : agents.http,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'reseller-routing-webhooks/1',
        ...headers,
      },
      ...(addresses?.length ? { lookup: pinned(addresses) } : {}),
    });
    const timer = setTimeout(() => req.destroy(new Error('timed out')), DELIVERY_TIMEOUT_MS);
    const abort = () => req.destroy(new Error('aborted'));
    signal?.addEventListener('abort', abort, { once: true });
    const done = (status: number | null) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
      settle(status);
    };
    req.on('response', (res) => {
      done(res.statusCode ?? null);
      res.destroy();
    });
    req.on('error', () => done(null));
    req.end(body);
  });
