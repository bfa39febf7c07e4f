import { lookup } from 'node:dns/promises';
import type { Resolve } from '../domain/endpoint-url.js';

/** How long a receiver has to answer a delivery (CONTRACT.md §14). */
export const DELIVERY_TIMEOUT_MS = 15_000;

/** One POST of a delivery: the receiver's status, or null when none came (refused, reset, timed out). */
export type PostWebhook = (url: string, body: string, headers: Record<string, string>) => Promise<number | null>;

/** Every address a name resolves to, as the system resolver gives them. */
export const resolveHost: Resolve = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * The POST itself: redirects are not followed (a 3xx is the receiver's answer, and a failure), and
 * the body is discarded unread, so a receiver that streams an endless answer holds nothing.
 */
export const postWebhook: PostWebhook = async (url, body, headers) => {
  try {
    const response = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'user-agent': 'reseller-routing-webhooks/1', ...headers },
      redirect: 'manual',
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    await response.body?.cancel().catch(() => undefined);
    return response.status;
  } catch {
    return null;
  }
};
